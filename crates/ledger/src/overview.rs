//! What the dashboard shows of the money: the last 30 days day by day (spend, cost, margin),
//! the plans and countries that sold most in them, and the pace the runway is told at. Made
//! from the ledger in one place, after each read, so that drawing it only lays it out.

use super::Ledger;
use super::period::Period;
use super::sums::{self, By, PACE_DAYS, Row, Totals};
use chrono::{DateTime, Duration, FixedOffset, Offset, TimeZone, Utc};
use rust_decimal::Decimal;

/// The days the dashboard's chart shows.
pub const DAYS: u32 = 30;

/// The plans and countries kept for the dashboard's lists (the rest are in `report`).
pub const TOP: usize = 10;

#[derive(Debug, Clone, PartialEq)]
pub struct Overview {
    pub period: Period,
    /// Every day of the period, the oldest first.
    pub days: Vec<Row>,
    pub plans: Vec<Row>,
    pub countries: Vec<Row>,
    /// The period as a whole.
    pub total: Totals,
    /// What the wallet paid a day over the last seven days: the runway's pace.
    pub per_day: Decimal,
    /// When the orders were read.
    pub read_at: DateTime<Utc>,
    /// The zone's offset then: the days, the runway's date and the time shown are in it, so
    /// that a drawing of the overview is the same wherever it is drawn.
    pub offset: FixedOffset,
}

impl Overview {
    /// When the orders were read, in the zone the overview was made in.
    pub fn read_local(&self) -> DateTime<FixedOffset> {
        self.read_at.with_timezone(&self.offset)
    }

    /// The first time the overview reads from: the start of its first day.
    pub fn since<Tz: TimeZone>(now: DateTime<Utc>, tz: &Tz) -> DateTime<Utc> {
        let today = now.with_timezone(tz).date_naive();
        // The pace's seven days reach back further than the chart's first day only if the
        // chart were shorter than a week; the older of the two is read.
        Period::last_days(DAYS, today)
            .start(tz)
            .min(now - Duration::days(PACE_DAYS))
    }

    /// The overview of what `ledger` holds, as of `now` in `tz`.
    pub fn of<Tz: TimeZone>(ledger: &Ledger, now: DateTime<Utc>, tz: &Tz) -> Overview {
        let period = Period::last_days(DAYS, now.with_timezone(tz).date_naive());
        let sales = ledger.since(Self::since(now, tz));
        let days = sums::rows(sales.iter().copied(), By::Day, &period, tz);
        let total = days.iter().fold(Totals::default(), |t, r| t.plus(&r.totals));
        let top = |by| {
            let mut rows = sums::rows(sales.iter().copied(), by, &period, tz);
            rows.truncate(TOP);
            rows
        };
        Overview {
            days,
            plans: top(By::Plan),
            countries: top(By::Country),
            total,
            per_day: sums::pace(sales.iter().copied(), now),
            read_at: now,
            offset: now.with_timezone(tz).offset().fix(),
            period,
        }
    }
}
