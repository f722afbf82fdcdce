//! When a reseller's orders were placed: more on weekdays than at weekends, and more each month
//! than the month before, as a growing business's are, so that a chart of the sandbox's sales
//! shows something true to life. The seed draws the gaps between orders as it always has (so
//! the rest of the seed is unchanged), and this bends them onto that calendar: the drawn time
//! is spent at the calendar's pace, hour by hour.
//!
//! Times here are not money: `f64` is fine.

use chrono::{DateTime, Datelike, Duration, Utc, Weekday};

/// How far back a seeded history may reach, whatever its length: a reseller's records are a
/// recent business, and older dates read as a bug ("expired 20 897 days ago").
pub const HISTORY: Duration = Duration::days(3 * 365);

/// The span a long history is fitted into: short of `HISTORY` by the room the draws' chance
/// may need (at 100 000 orders it is a fraction of a day).
const LONGEST_SPAN_HOURS: f64 = (3.0 * 365.0 - 30.0) * 24.0;

/// The mean of the drawn gaps between orders, in minutes: a history of `n` orders spans about
/// `n` such gaps until it would pass `LONGEST_SPAN_HOURS` (the demo's 400 orders: 84 days; at
/// 100 000 orders the whole span, about 140 orders on a weekday at the end).
pub const MEAN_GAP_MINUTES: f64 = 302.5;

/// Sales at the start of the longest history, against its end: the business grew 2.5-fold.
const FIRST_PACE: f64 = 0.4;

/// An hour's share of the week's sales, by its day (UTC).
fn weekday(at: DateTime<Utc>) -> f64 {
    match at.weekday() {
        Weekday::Sat => 0.6,
        Weekday::Sun => 0.45,
        _ => 1.0,
    }
}

/// The drawn time of a history laid onto the calendar from its newest order back.
pub struct Calendar {
    /// The calendar's weight of the hours before the newest order, summed: `summed[h]` is the
    /// weight of hours `0..h` back.
    summed: Vec<f64>,
    /// The weight one drawn minute spends.
    per_minute: f64,
    /// The time ages are counted back from.
    newest: DateTime<Utc>,
    /// Where the last lookup ended (ages are asked for in order, each older than the last).
    cursor: usize,
}

impl Calendar {
    /// The calendar of `orders` orders drawn back from `newest`.
    pub fn new(newest: DateTime<Utc>, orders: usize) -> Self {
        let drawn = (orders as f64 * MEAN_GAP_MINUTES).max(60.0);
        let span = (drawn / 60.0).min(LONGEST_SPAN_HOURS).ceil() as usize;
        let mut summed = Vec::with_capacity(span + 1);
        let mut total = 0.0;
        summed.push(total);
        for h in 0..span {
            let growth = 1.0 - (1.0 - FIRST_PACE) * (h as f64 / span as f64);
            total += growth * weekday(newest - Duration::hours(h as i64));
            summed.push(total);
        }
        Self {
            summed,
            per_minute: total / drawn,
            cursor: 0,
            newest,
        }
    }

    /// The time ages are counted back from.
    pub fn newest(&self) -> DateTime<Utc> {
        self.newest
    }

    /// How long before the newest order the one `minutes` of drawn gaps behind it was placed.
    /// Asked in order of `minutes`, growing.
    pub fn age(&mut self, minutes: f64) -> Duration {
        let want = minutes * self.per_minute;
        let last = self.summed.len() - 1;
        while self.cursor < last && self.summed[self.cursor + 1] <= want {
            self.cursor += 1;
        }
        let h = self.cursor;
        let hours = if h == last {
            // Past the span by chance: on at the oldest pace.
            last as f64 + (want - self.summed[last]) / FIRST_PACE.max(f64::EPSILON)
        } else {
            let weight = self.summed[h + 1] - self.summed[h];
            h as f64 + (want - self.summed[h]) / weight.max(f64::EPSILON)
        };
        let millis = (hours * 3_600_000.0).min(HISTORY.num_milliseconds() as f64);
        Duration::milliseconds(millis as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The drawn time is spent at the calendar's pace: ages grow with it, a weekday hour holds
    /// more orders than a Sunday's, and nothing is older than `HISTORY`.
    #[test]
    fn ages_follow_the_calendar() {
        let newest = DateTime::parse_from_rfc3339("2026-11-26T12:00:00Z").unwrap().to_utc();
        let mut calendar = Calendar::new(newest, 100_000);
        let mut per_weekday = [0u32; 7];
        let mut last = Duration::zero();
        for i in 1..=100_000 {
            let age = calendar.age(i as f64 * MEAN_GAP_MINUTES);
            assert!(age >= last);
            last = age;
            per_weekday[(newest - age).weekday().num_days_from_monday() as usize] += 1;
        }
        assert!(last <= HISTORY);
        assert!(last > HISTORY - Duration::days(40), "{} days", last.num_days());
        assert!(
            per_weekday[2] as f64 > 2.0 * per_weekday[6] as f64 * 0.9,
            "{per_weekday:?}"
        );
    }
}
