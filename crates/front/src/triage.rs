//! "My eSIM has no data": the first-line checks a wholesaler asks its partners to walk before
//! escalating (after eSIM Go's first-line troubleshooting guide), read from the eSIM's records
//! as the API gives them, each passed, failed or needing the customer, with what to say; and a
//! paste-ready escalation pack: the ICCID, its profiles with their times, the checks, and the
//! requests made with their answers' status. The same for `esimdash triage` and the dashboard.
//! Every text is sanitised as on screen; nothing of the account's credentials is in it.

use crate::format::verdict::{self, Verdict};
use crate::format::volume::format_bytes;
use chrono::{DateTime, Utc};
use esimdash_api::calls::Calls;
use esimdash_domain::esim_state::Class;
use esimdash_domain::location::{COUNTRIES, GLOBAL, REGIONAL, area, location_name};
use esimdash_domain::lpa::ActivationCode;
use esimdash_domain::model::Esim;
use esimdash_domain::text::sanitize;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What a check came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Passed,
    Failed,
    /// The records cannot settle it: the customer must do or tell something.
    NeedsCustomer,
}

impl Outcome {
    pub fn words(self) -> &'static str {
        match self {
            Outcome::Passed => "passed",
            Outcome::Failed => "failed",
            Outcome::NeedsCustomer => "needs the customer",
        }
    }
}

/// One check: what it looked at, what it found, and what to say to the customer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    /// A stable name for scripts: `state`, `installed`, `usage`, `validity`, `coverage`,
    /// `apn`, `manual_install`.
    pub id: &'static str,
    pub title: &'static str,
    pub outcome: Outcome,
    pub found: String,
    pub say: Option<String>,
}

/// A profile of the ICCID, as the history lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    pub order_no: String,
    pub plan: String,
    pub status: String,
    pub state: &'static str,
    pub installed_at: Option<DateTime<Utc>>,
    pub activated_at: Option<DateTime<Utc>>,
    pub expires_at: Option<DateTime<Utc>>,
}

/// A triage: the eSIM's verdict, its profiles (the current first), the checks, and the
/// requests it took.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Triage {
    pub iccid: String,
    pub at: DateTime<Utc>,
    /// The country the customer is in, as asked (a code), if it was.
    pub country: Option<String>,
    pub verdict: Verdict,
    pub profiles: Vec<Profile>,
    pub checks: Vec<Check>,
    pub requests: Vec<esimdash_api::calls::Call>,
    /// Requests made that were let go of the client's log before they could be listed.
    pub requests_not_listed: u64,
}

/// What the last triage of an eSIM read of its usage, for "is data moving".
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Reading {
    pub used: u64,
    pub at: DateTime<Utc>,
}

/// A country as the customer says it: a code (`FR`) or a name (`France`); its code.
pub fn country_code(said: &str) -> Option<&'static str> {
    let said = said.trim();
    COUNTRIES
        .iter()
        .find(|(code, name)| code.eq_ignore_ascii_case(said) || name.eq_ignore_ascii_case(said))
        .map(|(code, _)| *code)
}

/// What a triage reads of an eSIM besides its records.
#[derive(Debug, Clone)]
pub struct Read {
    /// The customer's country (a code), if asked.
    pub country: Option<String>,
    /// The usage the previous triage read.
    pub last: Option<Reading>,
    /// The activation code as the client reads it (`Client::activation_code`: the record's, else
    /// decoded from its QR image, as the pane and `qr` show it), or why there is none.
    pub code: Result<String, String>,
    /// The requests made for it.
    pub calls: Calls,
}

impl Default for Read {
    fn default() -> Self {
        Self {
            country: None,
            last: None,
            code: Err("not read".to_string()),
            calls: Calls::default(),
        }
    }
}

/// Reads what a triage needs besides the records (`esim`'s code, its last usage, kept for the
/// next), the requests made since `mark` (`Client::calls_made`) among them.
pub async fn read(client: &esimdash_api::Client, esim: &Esim, country: Option<&str>, mark: u64) -> Read {
    let now = Utc::now();
    let code = client.activation_code(esim).await;
    Read {
        country: country.map(str::to_string),
        last: last_reading(client, esim, now),
        code,
        calls: client.calls_since(mark),
    }
}

/// The checks on `esim` (the current profile; `earlier`: the ICCID's older ones) with what
/// was read besides (`read`).
pub fn assess(esim: &Esim, earlier: &[Esim], read: Read, now: DateTime<Utc>) -> Triage {
    let Read {
        country,
        last,
        code,
        calls,
    } = read;
    let country = country.as_deref();
    let facts = esim.facts();
    let class = facts.classify();
    let verdict = verdict::of(esim, now);
    let checks = vec![
        state(class, &verdict),
        installed(esim, class),
        usage(esim, class, last),
        validity(esim, class, now),
        coverage(esim, country),
        apn(esim),
        manual_install(&code, class),
    ];
    Triage {
        iccid: sanitize(esim.raw_order_json.iccid.as_str()).into_owned(),
        at: now,
        country: country.map(str::to_string),
        verdict,
        profiles: std::iter::once(esim).chain(earlier).map(profile).collect(),
        checks,
        requests: calls.calls,
        requests_not_listed: calls.let_go,
    }
}

fn profile(esim: &Esim) -> Profile {
    let raw = &esim.raw_order_json;
    Profile {
        order_no: sanitize(esim.record.provider_order_no.as_str()).into_owned(),
        plan: sanitize(&esim.record.package_name).into_owned(),
        status: sanitize(esim.record.status.as_str()).into_owned(),
        state: esim.facts().classify().key(),
        installed_at: raw.installation_time.at(),
        activated_at: raw.activate_time.at(),
        expires_at: raw.expired_time.at(),
    }
}

fn check(id: &'static str, title: &'static str, outcome: Outcome, found: String, say: Option<String>) -> Check {
    Check {
        id,
        title,
        outcome,
        found: sanitize(&found).into_owned(),
        say: say.map(|s| sanitize(&s).into_owned()),
    }
}

/// The profile's state: usable, waiting for the customer, or past help at first line.
fn state(class: Class, verdict: &Verdict) -> Check {
    let outcome = match class {
        Class::InUse | Class::InstalledNoData => Outcome::Passed,
        Class::ReadyToInstall | Class::Downloading | Class::TurnedOff => Outcome::NeedsCustomer,
        _ => Outcome::Failed,
    };
    check(
        "state",
        "Profile state",
        outcome,
        format!("{}: {}", verdict.label, verdict.summary),
        verdict.steps.first().cloned(),
    )
}

fn when(t: Option<DateTime<Utc>>) -> String {
    t.map_or_else(
        || "time not given".to_string(),
        |t| t.format("%Y-%m-%d %H:%M UTC").to_string(),
    )
}

fn installed(esim: &Esim, class: Class) -> Check {
    let raw = &esim.raw_order_json;
    let on = |eid: &str| {
        if eid.is_empty() {
            String::new()
        } else {
            format!(" on device EID {eid}")
        }
    };
    let (outcome, found, say) = match class {
        Class::InUse | Class::InstalledNoData | Class::TurnedOff | Class::UsedUp | Class::ExpiredUsed => (
            Outcome::Passed,
            format!("installed {}{}", when(raw.installation_time.at()), on(&raw.eid)),
            None,
        ),
        Class::ReadyToInstall => (
            Outcome::NeedsCustomer,
            "not installed yet: the QR code has not been scanned".to_string(),
            Some(
                "Install it: scan the QR code (or type the SM-DP+ address and activation code below) on the phone that will use it, on Wi-Fi.",
            ),
        ),
        Class::Downloading => (
            Outcome::NeedsCustomer,
            format!("the download started{} and did not finish", on(&raw.eid)),
            Some(
                "Stay on Wi-Fi and wait a few minutes; if it stays stuck, restart the phone. Do not delete and scan again: a code works once.",
            ),
        ),
        Class::Deleted => (
            Outcome::Failed,
            "removed from the device: it cannot be installed again".to_string(),
            Some("This eSIM cannot come back: a new eSIM is needed."),
        ),
        _ => (
            Outcome::Failed,
            format!("not on a device (state: {})", class.key()),
            None,
        ),
    };
    check(
        "installed",
        "Installed on a device",
        outcome,
        found,
        say.map(str::to_string),
    )
}

fn usage(esim: &Esim, class: Class, last: Option<Reading>) -> Check {
    let used = esim.raw_order_json.order_usage;
    let title = "Data moving";
    if !matches!(class, Class::InUse | Class::InstalledNoData) {
        return check(
            "usage",
            title,
            Outcome::NeedsCustomer,
            format!("not a profile that can use data now (state: {})", class.key()),
            Some("Settle the checks above first.".to_string()),
        );
    }
    let Some(used) = used else {
        return check(
            "usage",
            title,
            Outcome::NeedsCustomer,
            "the provider reports no usage for it".to_string(),
            Some("Ask the customer to open a web page, then run the triage again.".to_string()),
        );
    };
    match last {
        Some(last) if used > last.used => check(
            "usage",
            title,
            Outcome::Passed,
            format!(
                "{} used since {} (now {} in all): the network carries its data",
                format_bytes(used - last.used),
                when(Some(last.at)),
                format_bytes(used)
            ),
            None,
        ),
        Some(last) => check(
            "usage",
            title,
            Outcome::NeedsCustomer,
            format!("no data used since {} ({} in all)", when(Some(last.at)), format_bytes(used)),
            Some("Check on the phone: this eSIM chosen for mobile data, data roaming on, airplane mode off; restart the phone, then browse for a minute.".to_string()),
        ),
        None => check(
            "usage",
            title,
            Outcome::NeedsCustomer,
            format!("{} used so far; no earlier reading to compare with", format_bytes(used)),
            Some("Ask the customer to browse for a minute, then run the triage again: it tells whether data moved.".to_string()),
        ),
    }
}

fn validity(esim: &Esim, class: Class, now: DateTime<Utc>) -> Check {
    let raw = &esim.raw_order_json;
    let title = "Validity and data left";
    let left = esim.facts().left();
    if matches!(class, Class::UsedUp) || left == Some(0) && esim.facts().total.is_some() {
        return check(
            "validity",
            title,
            Outcome::Failed,
            "no data left".to_string(),
            Some("Its data is used up: top it up (esimdash topup) or sell a new plan.".to_string()),
        );
    }
    match raw.expired_time.at() {
        Some(expires) if expires <= now => check(
            "validity",
            title,
            Outcome::Failed,
            format!("expired {}", when(Some(expires))),
            Some("It has expired: a top-up or a new eSIM is needed.".to_string()),
        ),
        Some(expires) => check(
            "validity",
            title,
            Outcome::Passed,
            format!(
                "valid until {} ({} days){}",
                when(Some(expires)),
                (expires - now).num_days(),
                left.map_or_else(String::new, |l| format!("; {} left", format_bytes(l)))
            ),
            None,
        ),
        None => check(
            "validity",
            title,
            Outcome::Passed,
            format!(
                "its validity starts when it is installed or first connects{}",
                left.map_or_else(String::new, |l| format!("; {} left", format_bytes(l)))
            ),
            None,
        ),
    }
}

fn coverage(esim: &Esim, country: Option<&str>) -> Check {
    let title = "Covers the customer's country";
    let code = esim.record.location_code.trim();
    let sold = area(code, &esim.record.package_name);
    let Some(country) = country else {
        return check(
            "coverage",
            title,
            Outcome::NeedsCustomer,
            format!("the plan connects in {sold}; the customer's country was not asked"),
            Some("Ask which country the customer is in now (triage --country CC).".to_string()),
        );
    };
    let name = location_name(country).unwrap_or(country);
    let (outcome, found, say) = if code.eq_ignore_ascii_case(country) || code == GLOBAL {
        (
            Outcome::Passed,
            format!("the plan connects in {sold}, and the customer is in {name}"),
            None,
        )
    } else if code == REGIONAL && sold.to_lowercase().contains(&name.to_lowercase()) {
        (
            Outcome::Passed,
            format!("the plan connects in {sold}, which names {name}"),
            None,
        )
    } else if code == REGIONAL {
        (
            Outcome::NeedsCustomer,
            format!("the plan connects in {sold}; whether {name} is among its countries is not in its record"),
            Some(format!("Check the plan's countries in the catalog for {name}.")),
        )
    } else {
        (
            Outcome::Failed,
            format!("the plan connects in {sold}, and the customer is in {name}"),
            Some(format!(
                "This plan does not connect in {name}: offer a plan for {name}."
            )),
        )
    };
    check("coverage", title, outcome, found, say)
}

fn apn(esim: &Esim) -> Check {
    let apn = esim.raw_order_json.apn.trim();
    if apn.is_empty() {
        return check(
            "apn",
            "APN",
            Outcome::Passed,
            "set by the network (the provider names no APN)".to_string(),
            None,
        );
    }
    check(
        "apn",
        "APN",
        Outcome::NeedsCustomer,
        format!("the provider's APN is {apn}"),
        Some(format!(
            "If data does not start by itself, set the APN to {apn} (iPhone: Settings › Mobile Data › this eSIM › Mobile Data Network; Android: Settings › Network › SIMs › Access Point Names)."
        )),
    )
}

fn manual_install(code: &Result<String, String>, class: Class) -> Check {
    let title = "Manual SM-DP+ address and activation code";
    let parsed = code.as_deref().ok().and_then(ActivationCode::parse);
    match parsed {
        Some(code) => check(
            "manual_install",
            title,
            Outcome::Passed,
            format!(
                "SM-DP+ address {}, activation code {}",
                code.smdp_address, code.matching_id
            ),
            class.installable().then(|| {
                "Where the QR code cannot be scanned, type these in: Add eSIM › Enter details manually.".to_string()
            }),
        ),
        None => check(
            "manual_install",
            title,
            Outcome::Failed,
            match code {
                Err(why) => format!("no activation code: {why}"),
                Ok(_) => "the activation code is not one a phone takes".to_string(),
            },
            Some("Escalate: the provider must give the activation code.".to_string()),
        ),
    }
}

/// The usage `esim`'s previous triage read (if this session keeps a state folder), and this
/// one's kept for the next.
fn last_reading(client: &esimdash_api::Client, esim: &Esim, now: DateTime<Utc>) -> Option<Reading> {
    let (dir, account) = client.state_place()?;
    let readings = Readings::at(&dir, &account);
    let iccid = esim.raw_order_json.iccid.as_str();
    let last = readings.last(iccid);
    if let Some(used) = esim.raw_order_json.order_usage {
        readings.keep(iccid, Reading { used, at: now });
    }
    last
}

/// A triage of the eSIM `iccid` as the API gives it now (the dashboard's), read as the eSIM
/// pane reads it: by the lookup, or where the index saw it (`seen`) on a server without one;
/// then `assess`. An eSIM not found is said in words (`Err`), as the pane says it.
pub async fn of_iccid(
    client: &esimdash_api::Client,
    iccid: &esimdash_domain::iccid::Iccid,
    seen: Option<esimdash_api::model::Whereabouts>,
    country: Option<&str>,
) -> Result<Result<Triage, String>, esimdash_api::ApiError> {
    let mark = client.calls_made();
    let (found, earlier) = client.find_profiles_at(iccid, seen).await?;
    let esim = match found {
        esimdash_api::Found::Esim(esim) => esim,
        esimdash_api::Found::Absent => return Ok(Err(format!("no eSIM {iccid} in this account"))),
        esimdash_api::Found::Unknown(searched) => return Ok(Err(searched.describe(iccid))),
    };
    let read = read(client, &esim, country, mark).await;
    Ok(Ok(assess(&esim, &earlier, read, Utc::now())))
}

/// The escalation pack: plain text to paste into a ticket.
pub fn pack(t: &Triage) -> String {
    let mut out = format!(
        "eSIM triage, {}\nICCID: {}\nState: {}: {}\n",
        when(Some(t.at)),
        t.iccid,
        t.verdict.label,
        t.verdict.summary
    );
    if let Some(country) = &t.country {
        let name = location_name(country).unwrap_or(country);
        out.push_str(&format!("Customer's country: {name} ({country})\n"));
    }
    out.push_str("\nProfiles (the current first):\n");
    for p in &t.profiles {
        out.push_str(&format!(
            "- order {} · {} · status {} ({}) · installed {} · activated {} · expires {}\n",
            p.order_no,
            p.plan,
            p.status,
            p.state,
            when(p.installed_at),
            when(p.activated_at),
            when(p.expires_at)
        ));
    }
    out.push_str("\nChecks:\n");
    for c in &t.checks {
        out.push_str(&format!("- [{}] {}: {}\n", c.outcome.words(), c.title, c.found));
    }
    out.push_str("\nRequests made:\n");
    if t.requests_not_listed > 0 {
        out.push_str(&format!("- ({} earlier ones not kept)\n", t.requests_not_listed));
    }
    for r in &t.requests {
        out.push_str(&format!("- {} {} → {}\n", when(Some(r.at)), r.request, r.answer));
    }
    sanitize_lines(&out)
}

/// Writes the pack to `path`, whole (a reader never sees half), readable by its owner only.
pub fn write_pack(path: &Path, pack: &str) -> std::io::Result<()> {
    esimdash_files::write_whole(path, |out| out.write_all(pack.as_bytes()))
}

/// Every line sanitised, the line breaks kept.
fn sanitize_lines(text: &str) -> String {
    text.lines()
        .map(|l| sanitize(l).into_owned())
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// The usage each eSIM had at its last triage, kept per account in the state folder (the
/// latest `MOST` eSIMs), for "is data moving".
pub struct Readings {
    path: PathBuf,
}

const MOST_READINGS: usize = 1_000;
const MOST_BYTES: u64 = 256 * 1024;

impl Readings {
    pub fn at(state: &Path, account: &str) -> Self {
        Self {
            path: state.join("triage").join(format!("{account}.json")),
        }
    }

    fn all(&self) -> Vec<(String, Reading)> {
        esimdash_files::read_regular_at_most(&self.path, MOST_BYTES)
            .ok()
            .flatten()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// The last reading of `iccid`.
    pub fn last(&self, iccid: &str) -> Option<Reading> {
        self.all().into_iter().find(|(i, _)| i == iccid).map(|(_, r)| r)
    }

    /// Keeps `reading` as `iccid`'s last; a failure to write loses only the comparison.
    pub fn keep(&self, iccid: &str, reading: Reading) {
        let mut all = self.all();
        all.retain(|(i, _)| i != iccid);
        all.insert(0, (iccid.to_string(), reading));
        all.truncate(MOST_READINGS);
        let Ok(bytes) = serde_json::to_vec(&all) else { return };
        let written = match self.path.parent() {
            Some(dir) => esimdash_files::create_dir(dir),
            None => Ok(()),
        }
        .and_then(|()| esimdash_files::write_whole(&self.path, |out| out.write_all(&bytes)));
        if let Err(e) = written {
            tracing::warn!(%e, "the triage's usage reading was not kept");
        }
    }
}
