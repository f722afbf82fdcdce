//! What `esimdash watch` remembers between polls, and the changes it reports. The API has no
//! events, so a change is what differs between what was seen and what is read now: the
//! balance crossing below a threshold, an eSIM's status or SM-DP+ status moving (installed,
//! deleted, used up, expired), an eSIM coming to need attention, a new order. The memory is
//! kept in the state directory (`memory`), so that after a restart the changes made meanwhile
//! are reported once.

pub mod memory;

use chrono::{DateTime, Utc};
use esimdash_api::model::{Esim, Order};
use esimdash_domain::attention::AttentionRule;
use esimdash_domain::iccid::EsimIccid;
use esimdash_domain::status::Status;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// How many of the newest order numbers are remembered: more than any poll meets.
const ORDERS_KEPT: usize = 1000;

/// What was seen, as kept in the state file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Seen {
    /// Whether the balance was below the threshold at the last poll.
    #[serde(default)]
    pub balance_below: Option<bool>,
    /// The newest order numbers, newest first.
    #[serde(default)]
    pub orders: Vec<String>,
    /// The eSIMs this poll read that are new or whose memory changed, by ICCID and order
    /// ("8944…@B1…"): what the poll adds to the memory of every eSIM read so far
    /// (`memory::Memory`), never a copy of it. (A memory an earlier version wrote whole as
    /// JSON has them all here, once, as it is taken in.)
    #[serde(default, skip_serializing)]
    pub esims: HashMap<String, EsimSeen>,
    /// Where the next poll's window of eSIM pages starts (the list is read round, a window a poll).
    #[serde(default)]
    pub next_page: u64,
    /// When the last poll ended well.
    #[serde(default)]
    pub at: Option<DateTime<Utc>>,
    /// Changes told but not yet taken by `--exec`, in the order they are handed over again.
    #[serde(default)]
    pub pending: Vec<Pending>,
}

/// A change `--exec` has yet to take: its line, sent again as it was.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pending {
    pub id: String,
    pub line: String,
    /// Hand-overs that failed so far.
    #[serde(default)]
    pub failures: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EsimSeen {
    pub status: String,
    pub smdp: String,
    #[serde(default)]
    pub attention: bool,
    /// Its state's key (`Class::key`), as every view words it; empty in a memory written
    /// before it was kept.
    #[serde(default)]
    pub state: String,
}

/// A change, printed as one JSON line (`"event"` says which).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum Event {
    /// The balance went below the threshold (once per crossing).
    BalanceBelow { balance_usd: String, threshold_usd: String },
    /// An eSIM's status or SM-DP+ status changed; `what` in a word where one fits.
    EsimChanged {
        iccid: EsimIccid,
        what: &'static str,
        status_from: String,
        status_to: String,
        smdp_from: String,
        smdp_to: String,
        /// The state before and now (`Class::key`, as `--json`'s `state`): the same words as
        /// the dashboard and `esims` ("deleted", "in_use"); `stateFrom` empty when not known.
        state_from: String,
        state_to: String,
    },
    /// An eSIM came to need attention (config `[attention]`).
    EsimAttention {
        iccid: EsimIccid,
        status: String,
        used_percent: Option<u8>,
        expires: Option<String>,
    },
    /// An order the watch had not seen (a purchase or a top-up, from anywhere).
    NewOrder {
        order_no: String,
        slug: String,
        quantity: Option<u64>,
        status: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        iccid: Option<EsimIccid>,
    },
}

impl Event {
    /// What makes this change the one it is, without what may differ when it is found again
    /// (an order's status, a percentage used): the same change found again gets the same id.
    fn identity(&self) -> String {
        match self {
            Event::BalanceBelow { threshold_usd, .. } => format!("balance_below {threshold_usd}"),
            Event::EsimChanged {
                iccid,
                status_from,
                status_to,
                smdp_from,
                smdp_to,
                ..
            } => format!("esim_changed {iccid} {status_from} {status_to} {smdp_from} {smdp_to}"),
            Event::EsimAttention { iccid, .. } => format!("esim_attention {iccid}"),
            Event::NewOrder { order_no, .. } => format!("new_order {order_no}"),
        }
    }
}

/// The ids of one poll's changes, found against the memory of the poll that ended at `since`:
/// 16 hex digits of a SHA-256 of that time and each change's identity. A watch killed after
/// telling and before saving finds the same changes against the same memory when started
/// again, so they are told again with the same ids (a hook drops the repeats); the same change
/// happening again later is found against a later memory, and is another event.
pub fn ids(events: &[Event], since: Option<DateTime<Utc>>) -> Vec<String> {
    use sha2::{Digest, Sha256};
    let since = since.map(|at| at.to_rfc3339()).unwrap_or_default();
    // Two changes alike in one poll (an ICCID re-issued in another order) are told apart by
    // their rank among their likes.
    let mut alike: HashMap<String, u32> = HashMap::new();
    events
        .iter()
        .map(|event| {
            let identity = event.identity();
            let rank = alike.entry(identity.clone()).or_default();
            *rank += 1;
            let digest = Sha256::digest(format!("{since}\n{identity}\n{rank}"));
            esimdash_domain::text::hex(&digest[..8])
        })
        .collect()
}

impl Seen {
    /// Whether nothing was ever seen: the first poll only learns, and reports no change.
    pub fn is_new(&self) -> bool {
        self.at.is_none()
    }

    /// The balance read now: an event when it has just gone below `threshold`.
    pub fn balance(&mut self, balance: Decimal, threshold: Decimal) -> Option<Event> {
        let below = balance < threshold;
        let crossed = below && self.balance_below != Some(true);
        self.balance_below = Some(below);
        crossed.then(|| Event::BalanceBelow {
            balance_usd: esimdash_domain::money::format_amount(balance),
            threshold_usd: esimdash_domain::money::format_amount(threshold),
        })
    }

    /// Orders read now, newest first: those not seen before, unless this is the first poll.
    /// Whether the read can stop: it met an order seen before.
    pub fn orders(&mut self, page: &[Order], events: &mut Vec<Event>) -> bool {
        let known: std::collections::HashSet<&str> = self.orders.iter().map(String::as_str).collect();
        let mut met = false;
        let mut new = Vec::new();
        for order in page {
            let no = order.record.provider_order_no.to_string();
            if known.contains(no.as_str()) {
                met = true;
                continue;
            }
            if !self.is_new() {
                events.push(Event::NewOrder {
                    order_no: no.clone(),
                    slug: order.record.slug.clone(),
                    quantity: order.record.quantity,
                    status: order.record.status.as_str().to_string(),
                    iccid: (!order.iccid.is_empty()).then(|| order.iccid.clone()),
                });
            }
            new.push(no);
        }
        // Newest first: what a page brings goes before what was kept.
        new.append(&mut self.orders);
        new.truncate(ORDERS_KEPT);
        self.orders = new;
        met || self.is_new()
    }

    /// eSIMs read now: what changed of those seen before (this poll, or as `before` remembers).
    pub fn esims(&mut self, page: &[Esim], rule: AttentionRule, now: DateTime<Utc>, events: &mut Vec<Event>) {
        self.esims_against(page, rule, now, events, &|_| None);
    }

    /// The same, against what `before` remembers of each eSIM (the memory kept between polls).
    pub fn esims_against(
        &mut self,
        page: &[Esim],
        rule: AttentionRule,
        now: DateTime<Utc>,
        events: &mut Vec<Event>,
        before: &dyn Fn(&str) -> Option<EsimSeen>,
    ) {
        for esim in page {
            let raw = &esim.raw_order_json;
            if raw.iccid.is_empty() {
                continue;
            }
            let attention = rule.needs_esim(esim, now);
            let seen = EsimSeen {
                status: esim.record.status.as_str().to_string(),
                smdp: raw.smdp_status.clone(),
                attention,
                state: esim.facts().classify().key().to_string(),
            };
            let iccid = &raw.iccid;
            // An ICCID can come back in a later order (a profile re-issued): each order's
            // profile is followed on its own.
            let key = format!("{iccid}@{}", esim.record.provider_order_no);
            let remembered = match self.esims.get(&key) {
                Some(this_poll) => Some(this_poll.clone()),
                None => before(&key),
            };
            if remembered.as_ref() == Some(&seen) {
                continue;
            }
            if let Some(before) = &remembered {
                if before.status != seen.status || before.smdp != seen.smdp {
                    events.push(Event::EsimChanged {
                        iccid: iccid.clone(),
                        what: what_changed(before, &seen),
                        status_from: before.status.clone(),
                        status_to: seen.status.clone(),
                        smdp_from: before.smdp.clone(),
                        smdp_to: seen.smdp.clone(),
                        state_from: before.state.clone(),
                        state_to: seen.state.clone(),
                    });
                }
                if attention && !before.attention {
                    let limits = esimdash_domain::attention::Judged::limits(esim);
                    events.push(Event::EsimAttention {
                        iccid: iccid.clone(),
                        status: seen.status.clone(),
                        used_percent: limits.used_pct,
                        expires: raw.expired_time.at().map(|t| t.to_rfc3339()),
                    });
                }
            }
            self.esims.insert(key, seen);
        }
    }
}

/// The change in a word: what a reseller is told of by wholesalers' consoles.
fn what_changed(before: &EsimSeen, now: &EsimSeen) -> &'static str {
    let status = Status::parse(&now.status);
    let smdp = now.smdp.to_ascii_uppercase();
    if smdp != before.smdp.to_ascii_uppercase() {
        match smdp.as_str() {
            "ENABLED"
                if matches!(
                    before.smdp.to_ascii_uppercase().as_str(),
                    "RELEASED" | "DOWNLOAD" | "INSTALLATION" | ""
                ) =>
            {
                return "installed";
            }
            "DELETED" => return "deleted",
            "DISABLED" => return "disabled",
            "ENABLED" => return "enabled",
            "DOWNLOAD" | "INSTALLATION" => return "downloading",
            _ => {}
        }
    }
    match status {
        Status::UsedUp => "used_up",
        Status::UsedExpired | Status::UnusedExpired => "expired",
        Status::InUse if before.status.eq_ignore_ascii_case("got_resource") => "installed",
        Status::Cancel => "cancelled",
        Status::Revoked => "revoked",
        Status::Suspended => "suspended",
        _ => "changed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esim(iccid: &str, status: &str, smdp: &str, used: u64) -> Esim {
        serde_json::from_value(serde_json::json!({
            "status": status,
            "rawOrderJson": {
                "iccid": iccid, "smdpStatus": smdp, "orderUsage": used, "totalVolume": 100,
                "expiredTime": "2099-01-01T00:00:00Z"
            }
        }))
        .unwrap()
    }

    #[test]
    fn the_first_poll_learns_and_later_ones_tell_each_change_once() {
        let rule = AttentionRule::default();
        let now = Utc::now();
        let mut seen = Seen::default();
        let mut events = Vec::new();
        // One eSIM polled in this state; the balance against a threshold of 100.
        let poll = |seen: &mut Seen, status, smdp, used, events: &mut Vec<Event>| {
            seen.esims(&[esim("8944100000000000018", status, smdp, used)], rule, now, events);
        };
        let balance = |seen: &mut Seen, usd| seen.balance(Decimal::new(usd, 0), Decimal::new(100, 0));
        assert!(balance(&mut seen, 50).is_some(), "below, first seen");
        poll(&mut seen, "GOT_RESOURCE", "RELEASED", 0, &mut events);
        assert!(events.is_empty(), "the first poll reports no change");
        seen.at = Some(now);

        assert_eq!(balance(&mut seen, 40), None, "still below: once per crossing");
        assert_eq!(balance(&mut seen, 140), None);
        assert!(balance(&mut seen, 90).is_some(), "crossed again");

        poll(&mut seen, "IN_USE", "ENABLED", 90, &mut events);
        assert_eq!(events.len(), 2, "{events:?}");
        assert!(matches!(&events[0], Event::EsimChanged { what: "installed", .. }));
        assert!(matches!(
            &events[1],
            Event::EsimAttention {
                used_percent: Some(90),
                ..
            }
        ));
        let line = serde_json::to_value(&events[0]).unwrap();
        assert_eq!(line["event"], "esim_changed");
        assert_eq!(line["smdpFrom"], "RELEASED");
        events.clear();
        poll(&mut seen, "IN_USE", "ENABLED", 95, &mut events);
        assert!(events.is_empty(), "no change, no event; attention told once");
        poll(&mut seen, "USED_UP", "ENABLED", 100, &mut events);
        assert!(matches!(&events[0], Event::EsimChanged { what: "used_up", .. }));
    }

    #[test]
    fn a_change_found_again_against_the_same_memory_keeps_its_id() {
        let order = |status: &str| Event::NewOrder {
            order_no: "B1".to_string(),
            slug: "fr-1gb-7d".to_string(),
            quantity: Some(1),
            status: status.to_string(),
            iccid: None,
        };
        let attention = |used: u8| Event::EsimAttention {
            iccid: EsimIccid::parse("8944100000000000018"),
            status: "IN_USE".to_string(),
            used_percent: Some(used),
            expires: None,
        };
        let since = Some(Utc::now());
        let first = ids(&[order("PROCESSING"), attention(90), attention(90)], since);
        assert_eq!(first.len(), 3);
        assert!(
            first
                .iter()
                .all(|id| id.len() == 16 && id.chars().all(|c| c.is_ascii_hexdigit()))
        );
        assert_ne!(first[1], first[2], "two alike in one poll are two events");
        let again = ids(&[order("COMPLETED"), attention(95), attention(92)], since);
        assert_eq!(again, first, "what moved meanwhile does not make it another change");
        let later = ids(
            &[order("COMPLETED")],
            since.map(|at| at + chrono::Duration::seconds(60)),
        );
        assert_ne!(later[0], first[0], "against a later memory, another event");
    }

    proptest::proptest! {
        /// Polls of random states: every change of status or SM-DP+ status is told exactly
        /// once, in the poll that first sees it, and nothing else is told as a change.
        #[test]
        fn each_change_is_told_exactly_once(
            polls in proptest::collection::vec(proptest::collection::vec((0usize..3, 0usize..3, 0usize..3), 1..6), 1..12),
        ) {
            const STATUSES: [&str; 3] = ["GOT_RESOURCE", "IN_USE", "USED_UP"];
            const SMDP: [&str; 3] = ["RELEASED", "ENABLED", "DELETED"];
            const ICCIDS: [&str; 3] = ["8944100000000000018", "8944100000000000000", "8944100000000099994"];
            let rule = AttentionRule::default();
            let mut seen = Seen::default();
            let mut last: HashMap<usize, (usize, usize)> = HashMap::new();
            for (n, poll) in polls.iter().enumerate() {
                let page: Vec<Esim> = poll.iter().map(|&(e, s, d)| esim(ICCIDS[e], STATUSES[s], SMDP[d], 0)).collect();
                let mut events = Vec::new();
                seen.esims(&page, rule, Utc::now(), &mut events);
                let mut expected = 0;
                for &(e, s, d) in poll {
                    if last.get(&e).is_some_and(|&before| before != (s, d)) {
                        expected += 1;
                    }
                    last.insert(e, (s, d));
                }
                let changes = events.iter().filter(|e| matches!(e, Event::EsimChanged { .. })).count();
                proptest::prop_assert_eq!(changes, expected, "poll {}: {:?}", n, events);
                seen.at = Some(Utc::now());
            }
        }
    }
}
