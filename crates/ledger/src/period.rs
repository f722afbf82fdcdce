//! The days money is summed over: a person's days, in the time zone of the machine (as `date`
//! shows them), from a first day to today. `--since` reads `30d` (the last 30 days, today
//! among them), a day (`2026-11-01`) or an RFC 3339 time.

use chrono::{DateTime, Days, NaiveDate, TimeZone, Utc};

/// From the start of `first` to now, in the zone `tz`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    pub first: NaiveDate,
    pub last: NaiveDate,
}

/// The longest period summed: ten years of days.
pub const MOST_DAYS: u32 = 3660;

impl Period {
    /// The last `n` days, today the last of them.
    pub fn last_days(n: u32, today: NaiveDate) -> Self {
        let first = today
            .checked_sub_days(Days::new(u64::from(n.max(1)) - 1))
            .unwrap_or(today);
        Self { first, last: today }
    }

    /// `--since` as the period from it to today: `30d`, `YYYY-MM-DD` or an RFC 3339 time.
    pub fn since<Tz: TimeZone>(text: &str, now: DateTime<Utc>, tz: &Tz) -> Result<Self, String> {
        let text = text.trim();
        let today = now.with_timezone(tz).date_naive();
        let first = if let Some(n) = text.strip_suffix('d').and_then(|n| n.parse::<u32>().ok()) {
            if n == 0 || n > MOST_DAYS {
                return Err(format!("{text:?}: the number of days must be 1 to {MOST_DAYS}"));
            }
            Self::last_days(n, today).first
        } else if let Ok(day) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
            day
        } else {
            DateTime::parse_from_rfc3339(text)
                .map_err(|_| format!("{text:?}: expected a number of days (30d), YYYY-MM-DD or an RFC 3339 time"))?
                .with_timezone(tz)
                .date_naive()
        };
        if first > today {
            return Err(format!("{text:?} is after today ({today})"));
        }
        // The same bound as `30d`'s: a period of days is summed and drawn day by day.
        let earliest = Self::last_days(MOST_DAYS, today).first;
        if first < earliest {
            return Err(format!(
                "{text:?} is more than {MOST_DAYS} days back (the earliest day is {earliest})"
            ));
        }
        Ok(Self { first, last: today })
    }

    /// When its first day starts, in `tz`.
    pub fn start<Tz: TimeZone>(&self, tz: &Tz) -> DateTime<Utc> {
        day_start(self.first, tz)
    }

    /// Its days, first to last.
    pub fn days(&self) -> impl Iterator<Item = NaiveDate> + use<> {
        let last = self.last;
        self.first.iter_days().take_while(move |d| *d <= last)
    }

    pub fn len(&self) -> u32 {
        (self.last - self.first).num_days().max(0) as u32 + 1
    }

    pub fn is_empty(&self) -> bool {
        false
    }
}

/// When `day` starts in `tz` (on a day that skips midnight for summer time, its first hour).
pub fn day_start<Tz: TimeZone>(day: NaiveDate, tz: &Tz) -> DateTime<Utc> {
    let midnight = day.and_hms_opt(0, 0, 0).unwrap_or_default();
    tz.from_local_datetime(&midnight)
        .earliest()
        .or_else(|| {
            tz.from_local_datetime(&(midnight + chrono::Duration::hours(1)))
                .earliest()
        })
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(|| midnight.and_utc())
}

/// The day `at` falls on in `tz`.
pub fn day_of<Tz: TimeZone>(at: DateTime<Utc>, tz: &Tz) -> NaiveDate {
    at.with_timezone(tz).date_naive()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::FixedOffset;

    #[test]
    fn since_reads_days_back_a_day_or_a_time_in_the_zone() {
        let now = DateTime::parse_from_rfc3339("2026-11-26T23:30:00Z").unwrap().to_utc();
        let east = FixedOffset::east_opt(2 * 3600).unwrap();
        // In UTC+2 it is already the 27th.
        let p = Period::since("30d", now, &east).unwrap();
        assert_eq!(
            (p.first.to_string(), p.last.to_string(), p.len()),
            ("2026-10-29".into(), "2026-11-27".into(), 30)
        );
        assert_eq!(p.start(&east).to_rfc3339(), "2026-10-28T22:00:00+00:00");
        assert_eq!(Period::since("2026-11-01", now, &Utc).unwrap().len(), 26);
        assert_eq!(
            Period::since("2026-11-20T10:00:00Z", now, &Utc)
                .unwrap()
                .first
                .to_string(),
            "2026-11-20"
        );
        assert!(Period::since("2026-12-01", now, &Utc).is_err());
        assert!(Period::since("0d", now, &Utc).is_err());
        assert!(Period::since("lots", now, &Utc).unwrap_err().contains("30d"));
        // Dates no period of days can reach are refused in words, never allocated.
        for far in ["-262143-01-01", "1900-01-01", "0001-01-01T00:00:00Z"] {
            let error = Period::since(far, now, &Utc).unwrap_err();
            assert!(error.contains("3660 days back"), "{far}: {error}");
        }
        assert_eq!(Period::since("3660d", now, &Utc).unwrap().len(), 3660);
    }
}
