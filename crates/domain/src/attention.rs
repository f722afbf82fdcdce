//! "Needs attention": a usable eSIM (its class says so: `Class::is_usable`) that has used most
//! of its data or is about to expire, the eSIMs a reseller contacts before their customer runs
//! out. Read from `rawOrderJson` (`orderUsage`, `totalVolume`, `expiredTime`); the thresholds
//! come from the config file. One rule for the dashboard's `!`, `esims --attention`, `check
//! attention` and `metrics`.

use super::esim_state::Class;
use chrono::{DateTime, Utc};

/// The thresholds: used at least `used_pct` % of its data, or expiring within `days` days.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AttentionRule {
    pub used_pct: u8,
    pub days: u32,
}

impl Default for AttentionRule {
    fn default() -> Self {
        Self { used_pct: 80, days: 3 }
    }
}

/// What the rule reads of an eSIM, compact enough to keep for 100 000 of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Limits {
    /// Whole percent of the data used (floored, at most 100); `None` when not given.
    pub used_pct: Option<u8>,
    /// When it expires, in Unix seconds; `None` when not given or unreadable.
    pub expires: Option<i64>,
}

impl Limits {
    /// From the bytes used of the bytes bought, and when it expires.
    pub fn new(used: Option<u64>, total: Option<u64>, expires: Option<DateTime<Utc>>) -> Self {
        let used_pct = match (used, total) {
            (Some(used), Some(total)) if total > 0 => Some((u128::from(used) * 100 / u128::from(total)).min(100) as u8),
            _ => None,
        };
        Self {
            used_pct,
            expires: expires.map(|t| t.timestamp()),
        }
    }
}

/// What the rule is applied to: an eSIM record (the API's, in `api::model`) or a row of the index.
pub trait Judged {
    fn class(&self) -> Class;
    fn limits(&self) -> Limits;
}

impl<T: Judged> Judged for &T {
    fn class(&self) -> Class {
        (**self).class()
    }
    fn limits(&self) -> Limits {
        (**self).limits()
    }
}

impl AttentionRule {
    pub fn needs(&self, class: Class, limits: Limits, now: DateTime<Utc>) -> bool {
        if !class.is_usable() {
            return false;
        }
        let data = limits.used_pct.is_some_and(|p| p >= self.used_pct);
        let time = limits.expires.is_some_and(|t| t <= self.expiring_by(now));
        data || time
    }

    /// The expiry (Unix seconds) at or before which an eSIM is expiring at `now`.
    pub fn expiring_by(&self, now: DateTime<Utc>) -> i64 {
        now.timestamp().saturating_add(i64::from(self.days) * 86_400)
    }

    pub fn needs_esim(&self, e: &impl Judged, now: DateTime<Utc>) -> bool {
        self.needs(e.class(), e.limits(), now)
    }

    /// How close an eSIM is to a limit, as a share of the rule's room (in thousandths; lower is
    /// more urgent): 95 % used under an 80 % rule is 250, one day left of a 3-day window 333.
    /// Whichever limit is nearer counts; nothing to go by sorts last.
    pub fn urgency(&self, limits: Limits, now: DateTime<Utc>) -> u64 {
        let data = limits.used_pct.map(|p| {
            let room = u64::from(100u8.saturating_sub(self.used_pct)).max(1);
            u64::from(100u8.saturating_sub(p)) * 1000 / room
        });
        let time = limits.expires.map(|t| {
            let left = u64::try_from(t.saturating_sub(now.timestamp())).unwrap_or(0);
            let window = (u64::from(self.days) * 86_400).max(3_600);
            left.saturating_mul(1000) / window
        });
        match (data, time) {
            (Some(d), Some(t)) => d.min(t),
            (one, other) => one.or(other).unwrap_or(u64::MAX),
        }
    }

    /// For titles and help: "≥ 80 % of data used or expiring within 3 days".
    pub fn describe(&self) -> String {
        let days = if self.days == 1 {
            "1 day".to_string()
        } else {
            format!("{} days", self.days)
        };
        format!("usable, ≥ {} % of data used or expiring within {days}", self.used_pct)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Item(Class, Limits);

    impl Judged for Item {
        fn class(&self) -> Class {
            self.0
        }
        fn limits(&self) -> Limits {
            self.1
        }
    }

    fn esim(class: Class, used: u64, total: u64, expires: &str) -> Item {
        let expires = DateTime::parse_from_rfc3339(expires)
            .ok()
            .map(|t| t.with_timezone(&Utc));
        Item(class, Limits::new(Some(used), Some(total), expires))
    }
    #[test]
    fn usable_and_near_a_limit() {
        let now = DateTime::parse_from_rfc3339("2026-11-21T12:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let rule = AttentionRule::default();
        let later = "2026-12-30T00:00:00Z";
        assert!(rule.needs_esim(&esim(Class::InUse, 80, 100, later), now), "80 % used");
        assert!(!rule.needs_esim(&esim(Class::InUse, 79, 100, later), now), "79 % used");
        assert!(
            rule.needs_esim(&esim(Class::Suspended, 0, 100, "2026-11-24T12:00:00Z"), now),
            "3 days left"
        );
        assert!(
            !rule.needs_esim(&esim(Class::InUse, 0, 100, "2026-11-24T12:00:01Z"), now),
            "a second more"
        );
        assert!(
            !rule.needs_esim(&esim(Class::UsedUp, 100, 100, later), now),
            "not usable"
        );
        assert!(
            !rule.needs_esim(&esim(Class::Deleted, 90, 100, later), now),
            "deleted from the phone, though its status may still say in use"
        );
        assert!(
            !rule.needs_esim(&esim(Class::InUse, 5, 0, "not a time"), now),
            "nothing to go by"
        );
        let urgency = |used, expires| rule.urgency(esim(Class::InUse, used, 100, expires).1, now);
        assert_eq!(urgency(95, later), 250, "5 % left of a 20 % room");
        assert_eq!(urgency(10, "2026-11-22T12:00:00Z"), 333, "1 day left of 3");
        assert!(urgency(99, later) < urgency(10, "2026-11-22T12:00:00Z"));
        assert_eq!(urgency(10, "2026-11-20T12:00:00Z"), 0, "already past");
        let strict = AttentionRule { used_pct: 50, days: 0 };
        assert!(strict.needs_esim(&esim(Class::ReadyToInstall, 50, 100, later), now));
    }
}
