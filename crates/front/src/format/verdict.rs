//! An eSIM's state in plain words: what it is, and what to tell the customer or try. One text
//! for the dashboard's pane, `esimdash esims --iccid` and `qr`, and `--json` (`verdict`). Keys
//! are not named here (the dashboard adds its own); neither is anything not in the record.

use super::volume::format_bytes;
use chrono::{DateTime, Utc};
use esimdash_api::model::Esim;
use esimdash_domain::esim_state::{Class, Facts, Tone};
use esimdash_domain::status::Status;
use serde::Serialize;

/// How a status reads at a glance; each screen maps it to its colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusTone {
    /// Got its resource or in use: green.
    Usable,
    /// Pending or suspended: yellow.
    Waiting,
    /// Used up or expired: dim.
    Ended,
    /// Cancelled or revoked: red.
    Failed,
    /// A status this version does not know: plain.
    Unknown,
}

pub fn status_tone(status: &Status) -> StatusTone {
    match status {
        Status::GotResource | Status::InUse => StatusTone::Usable,
        Status::Pending | Status::Suspended => StatusTone::Waiting,
        Status::UsedUp | Status::UsedExpired | Status::UnusedExpired => StatusTone::Ended,
        Status::Cancel | Status::Revoked => StatusTone::Failed,
        Status::Other(_) => StatusTone::Unknown,
    }
}

/// What state an eSIM is in and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Verdict {
    #[serde(serialize_with = "class_key")]
    pub state: Class,
    /// The state in a few words ("ready to install").
    pub label: &'static str,
    /// What is so, in one or two sentences.
    pub summary: String,
    /// What to tell the customer or try, in order.
    pub steps: Vec<String>,
}

fn class_key<S: serde::Serializer>(class: &Class, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(class.key())
}

/// A status in words, wherever a person reads it ("expired unused"); the raw value stays in
/// `--json` and CSV.
pub fn status_words(status: &Status) -> &str {
    match status {
        Status::Pending => "pending",
        Status::GotResource => "ready",
        Status::InUse => "in use",
        Status::Suspended => "suspended",
        Status::UsedUp => "used up",
        Status::UsedExpired => "expired",
        Status::UnusedExpired => "expired unused",
        Status::Cancel => "cancelled",
        Status::Revoked => "revoked",
        Status::Other(s) => s,
    }
}

/// An eSIM's state in a list's STATUS column: a few words, at most 16 columns; the state's
/// `label` starts with them, so a row and the pane never read as two states.
pub fn list_words(class: Class) -> Option<&'static str> {
    Some(match class {
        Class::ReadyToInstall => "ready to install",
        Class::Downloading => "downloading",
        Class::InstalledNoData => "installed",
        Class::InUse => "in use",
        Class::TurnedOff => "turned off",
        Class::Deleted => "deleted",
        Class::UsedUp => "used up",
        Class::ExpiredUnused => "expired unused",
        Class::ExpiredUsed => "expired",
        Class::Cancelled => "cancelled",
        Class::Revoked => "revoked",
        Class::Suspended => "suspended",
        Class::Pending => "pending",
        Class::Unknown => return None,
    })
}

/// The STATUS cell of an eSIM: its state's words, or its status's where the state is unknown.
/// The one source of an eSIM's status word in every list, search row, table and CSV.
pub fn state_words(class: Class, status: &Status) -> &str {
    list_words(class).unwrap_or_else(|| status_words(status))
}

/// The STATUS cell of an eSIM's record.
pub fn esim_cell(esim: &Esim) -> String {
    state_words(esim.facts().classify(), &esim.record.status).to_string()
}

/// An eSIM's state with the API's value beside it, for a detail view: `deleted from the phone
/// (status used_up, SM-DP+ DELETED)`.
pub fn state_in_full(esim: &Esim) -> String {
    let class = esim.facts().classify();
    let smdp = esim.raw_order_json.smdp_status.trim();
    let smdp = if smdp.is_empty() {
        String::new()
    } else {
        format!(", SM-DP+ {smdp}")
    };
    match class {
        Class::Unknown => format!(
            "{} (status {}{smdp})",
            status_words(&esim.record.status),
            esim.record.status
        ),
        _ => format!("{} (status {}{smdp})", label(class), esim.record.status),
    }
}

/// How a STATUS cell reads at a glance: from a state's words, a status's words, or the API's value.
pub fn cell_tone(text: &str) -> StatusTone {
    if let Some(class) = Class::ALL.into_iter().find(|c| list_words(*c) == Some(text)) {
        return match class.tone() {
            Tone::Good => StatusTone::Usable,
            Tone::Waiting | Tone::Warning => StatusTone::Waiting,
            Tone::Ended if matches!(class, Class::Cancelled | Class::Revoked) => StatusTone::Failed,
            Tone::Ended => StatusTone::Ended,
            Tone::Unknown => StatusTone::Unknown,
        };
    }
    let status = Status::KNOWN
        .into_iter()
        .find(|k| status_words(k) == text)
        .unwrap_or_else(|| Status::parse(text));
    status_tone(&status)
}

/// Why an eSIM's code must not be handed to a customer; `None` where it can be installed. The
/// one rule of the pane, `Y`, `l`, `a`, `i`, `w`, `z` and `esimdash qr`.
pub fn not_installable(class: Class) -> Option<String> {
    (!class.installable()).then(|| {
        format!(
            "this eSIM is {}: its code cannot be installed again, on this phone or another",
            label(class)
        )
    })
}

pub fn label(class: Class) -> &'static str {
    match class {
        Class::ReadyToInstall => "ready to install",
        Class::Downloading => "downloading, unfinished",
        Class::InstalledNoData => "installed, no data yet",
        Class::InUse => "in use",
        Class::TurnedOff => "turned off on the phone",
        Class::Deleted => "deleted from the phone",
        Class::UsedUp => "used up: no data left",
        Class::ExpiredUnused => "expired unused",
        Class::ExpiredUsed => "expired",
        Class::Cancelled => "cancelled",
        Class::Revoked => "revoked",
        Class::Suspended => "suspended",
        Class::Pending => "pending: no eSIM yet",
        Class::Unknown => "state not known",
    }
}

/// Usage is reported by the provider hours late, and the record has no time for it.
const USAGE_AGE: &str = "as last reported by the provider";

const NEW_ESIM: &str = "It cannot be used again: the customer needs a new eSIM (the same plan can be bought again).";

/// `2026-11-30 (in 3 days)`, `2026-11-20 (3 days ago)`.
fn when(t: DateTime<Utc>, now: DateTime<Utc>) -> String {
    let hours = (t - now).num_hours();
    let span = match hours.abs() {
        0 => "within the hour".to_string(),
        h @ 1..48 => format!("{h} h"),
        h => format!("{} days", h / 24),
    };
    let relative = match (hours, span.as_str()) {
        (_, "within the hour") => span,
        (h, _) if h > 0 => format!("in {span}"),
        _ => format!("{span} ago"),
    };
    format!("{} ({relative})", t.format("%Y-%m-%d"))
}

fn device(f: &Facts<'_>) -> String {
    if f.has_eid() {
        format!("a device (EID {})", f.eid.trim())
    } else {
        "a device".to_string()
    }
}

fn usage(f: &Facts<'_>) -> Option<String> {
    Some(format!(
        "{} of {} used, {} left ({USAGE_AGE})",
        format_bytes(f.used?),
        format_bytes(f.total?),
        format_bytes(f.left()?)
    ))
}

fn validity_start(f: &Facts<'_>) -> String {
    let days = f.days.map_or("Its validity".to_string(), |d| {
        format!("Its {d} day{}", if d == 1 { "" } else { "s" })
    });
    match f.active_type {
        Some(1) => format!("{days} start when it is installed: install it shortly before the trip."),
        Some(2) => format!("{days} start at its first connection abroad: it can be installed before the trip."),
        _ => "When its validity starts is not reported.".to_string(),
    }
}

/// The steps that bring an installed eSIM online, read out to the customer.
fn roaming_steps(f: &Facts<'_>, area: &str) -> Vec<String> {
    let mut steps = vec![
        "iPhone: Settings → Mobile Data → this eSIM: Turn On This Line and Data Roaming; choose it for Mobile Data."
            .to_string(),
        "Android: Settings → Network & internet → SIMs → this eSIM: Use SIM, Mobile data and Roaming on.".to_string(),
    ];
    if !f.apn.trim().is_empty() {
        steps.push(format!(
            "APN: {} (enter it under Mobile Data Network / Access Point Names if the phone does not fill it in).",
            f.apn.trim()
        ));
    }
    steps.push(format!(
        "It connects only in {area}, and data shows here hours after use."
    ));
    steps
}

/// The verdict on an eSIM as the API gives it.
pub fn of(esim: &Esim, now: DateTime<Utc>) -> Verdict {
    verdict(
        &esim.facts(),
        &esim.record.location_code,
        &esim.record.package_name,
        now,
    )
}

/// The verdict on an eSIM of the plan sold for `area_code` (the order's location code), named
/// `plan` (which says a region's countries).
pub fn verdict(f: &Facts<'_>, area_code: &str, plan: &str, now: DateTime<Utc>) -> Verdict {
    let class = f.classify();
    let area = match esimdash_domain::location::area(area_code, plan) {
        a if a.is_empty() => "the plan's area".to_string(),
        a => a,
    };
    let expires = f.expires.map(|t| when(t, now));
    let (summary, steps) = words(class, f, &area, expires.as_deref());
    Verdict {
        state: class,
        label: label(class),
        summary,
        steps,
    }
}

fn words(class: Class, f: &Facts<'_>, area: &str, expires: Option<&str>) -> (String, Vec<String>) {
    let used = usage(f);
    match class {
        Class::ReadyToInstall => ready(f, expires),
        Class::Downloading => (
            format!("{} started downloading it but has not finished.", capital(&device(f))),
            vec![
                "Keep the phone on Wi-Fi for a few minutes, then look for the eSIM under Settings → Mobile Data (iPhone) or Network & internet → SIMs (Android).".to_string(),
                "If it does not appear, do not scan again: ask the provider to reset the profile.".to_string(),
            ],
        ),
        Class::InstalledNoData => installed_no_data(f, area),
        Class::InUse => in_use(f, used, expires),
        Class::TurnedOff => (
            format!("Installed on {} but turned off in the phone's settings.", device(f)),
            vec![
                "iPhone: Settings → Mobile Data → this eSIM → Turn On This Line.".to_string(),
                "Android: Settings → Network & internet → SIMs → this eSIM → Use SIM.".to_string(),
            ],
        ),
        Class::Deleted => deleted(f),
        Class::UsedUp => (
            format!(
                "All its data is used{}.",
                f.total.map(|t| format!(" ({})", format_bytes(t))).unwrap_or_default()
            ),
            vec!["A top-up adds data to this same eSIM: nothing to install again.".to_string()],
        ),
        Class::ExpiredUnused => (
            format!("Expired unused{}: it was never installed.", on(expires)),
            vec![
                "A refund may apply to an unused eSIM: check with the provider.".to_string(),
                NEW_ESIM.to_string(),
            ],
        ),
        Class::ExpiredUsed => (
            format!(
                "Expired{}{}.",
                on(expires),
                used.map(|u| format!(" after use: {u}")).unwrap_or_default()
            ),
            vec![NEW_ESIM.to_string()],
        ),
        Class::Cancelled => (
            "Cancelled before it was installed (refunded).".to_string(),
            vec![NEW_ESIM.to_string()],
        ),
        Class::Revoked => (
            "Revoked by the provider: it no longer connects.".to_string(),
            vec!["Ask the provider why.".to_string(), NEW_ESIM.to_string()],
        ),
        Class::Suspended => (
            "Suspended by the provider: it does not connect until the provider lifts it.".to_string(),
            vec!["Nothing on the phone helps: ask the provider why.".to_string()],
        ),
        Class::Pending => (
            "The order is being processed: no eSIM yet.".to_string(),
            vec!["It appears once the provider allocates it, usually within a minute.".to_string()],
        ),
        Class::Unknown => unknown(f),
    }
}

fn ready(f: &Facts<'_>, expires: Option<&str>) -> (String, Vec<String>) {
    (
        "Not installed yet: the QR code can be scanned now.".to_string(),
        [
            Some(validity_start(f)),
            Some("Scan it once, on the phone that will use it: a downloaded code cannot be used again.".to_string()),
            expires.map(|e| format!("Install it by {e}.")),
        ]
        .into_iter()
        .flatten()
        .collect(),
    )
}

fn in_use(f: &Facts<'_>, used: Option<String>, expires: Option<&str>) -> (String, Vec<String>) {
    (
        format!(
            "Installed on {} and in use: {}. This QR code cannot be installed again.",
            device(f),
            used.unwrap_or_else(|| "usage not reported".to_string())
        ),
        [
            expires.map(|e| format!("Valid until {e}.")),
            Some(
                "If it does not connect: Data Roaming on, this eSIM chosen for data, then restart the phone."
                    .to_string(),
            ),
            Some("More data or days: a top-up adds them to this same eSIM, nothing to install.".to_string()),
        ]
        .into_iter()
        .flatten()
        .collect(),
    )
}

fn installed_no_data(f: &Facts<'_>, area: &str) -> (String, Vec<String>) {
    let waiting = match (f.active_type, f.activated) {
        (Some(2), None) => " Its validity starts at its first connection.",
        _ => "",
    };
    (
        format!(
            "Installed on {} and switched on; no data used yet ({USAGE_AGE}). This QR code cannot be installed again.{waiting}",
            device(f)
        ),
        roaming_steps(f, area),
    )
}

fn deleted(f: &Facts<'_>) -> (String, Vec<String>) {
    let left = match f.left() {
        Some(0) => " No data was left on it.".to_string(),
        Some(left) => format!(" {} of data was left unused ({USAGE_AGE}).", format_bytes(left)),
        None => String::new(),
    };
    (
        format!(
            "Deleted from {}: a deleted eSIM cannot be installed again.{left}",
            device(f)
        ),
        vec![NEW_ESIM.to_string()],
    )
}

/// What is known, as it is: a combination outside the provider's table is not interpreted.
fn unknown(f: &Facts<'_>) -> (String, Vec<String>) {
    let status = f.status.map_or("none", |s| s.as_str());
    let smdp = if f.smdp.trim().is_empty() {
        "none"
    } else {
        f.smdp.trim()
    };
    let mut known = vec![format!("Status {status}, SM-DP+ status {smdp}.")];
    if f.has_eid() {
        known.push(format!("Downloaded to {}.", device(f)));
    }
    if let Some(u) = usage(f) {
        known.push(format!("Data: {u}."));
    }
    (
        "This combination of states is not one the provider documents: shown as reported, with no guess.".to_string(),
        known,
    )
}

/// The verdict as text for a terminal: the state, what is so, and the steps.
pub fn text(v: &Verdict) -> String {
    let mut out = format!("{}: {}\n", v.label, v.summary);
    for step in &v.steps {
        out.push_str(&format!("  - {step}\n"));
    }
    out
}

fn on(expires: Option<&str>) -> String {
    expires.map(|e| format!(" on {e}")).unwrap_or_default()
}

fn capital(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|c| c.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_states_label_starts_with_its_list_words() {
        for class in Class::ALL {
            if let Some(words) = list_words(class) {
                assert!(words.chars().count() <= 16, "{words}");
                assert!(label(class).starts_with(words), "{class:?}: {words} / {}", label(class));
            }
        }
    }
}
