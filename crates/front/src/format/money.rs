//! Money as people read it, in the commands' tables and on every screen: an amount absent or
//! with its currency. The amount's own text is `esimdash_domain::money::format_amount`, the one place an
//! amount becomes text (the form the API's decimal strings have too).

use chrono::{Datelike, NaiveDate};
use esimdash_domain::money::{format_amount, round_cents};
use esimdash_ledger::sums::{PACE_DAYS, Runway};
use rust_decimal::Decimal;

/// `12.50`, or `-` when absent.
pub fn amount(value: Option<Decimal>) -> String {
    value.map_or_else(|| "-".to_string(), format_amount)
}

/// `12.50 USD`, or `-` when absent.
pub fn money(value: Option<Decimal>, currency: &str) -> String {
    money_or(value, currency, "-")
}

/// `12.50 USD`, or `missing` when absent.
pub fn money_or(value: Option<Decimal>, currency: &str, missing: &str) -> String {
    value.map_or_else(|| missing.to_string(), |v| format!("{} {currency}", format_amount(v)))
}

/// How long the balance lasts, in words: "at the last 7 days' pace (12.40 USD a day) the
/// balance lasts about 20 days, until 16 Dec". Every screen and command says it so.
pub fn runway(r: &Runway, today: NaiveDate) -> String {
    let (Some(days), Some(until)) = (r.whole_days, r.until) else {
        return format!("nothing was spent in the last {PACE_DAYS} days: the balance is not being used up");
    };
    let pace = format_amount(round_cents(r.per_day));
    let lasts = match days {
        0 => "less than a day".to_string(),
        1 => "about 1 day".to_string(),
        n => format!("about {n} days"),
    };
    format!(
        "at the last {PACE_DAYS} days' pace ({pace} USD a day) the balance lasts {lasts}, until {}",
        day(until, today)
    )
}

/// A day as a sentence names it: `16 Dec`, with its year when that is not this year's.
pub fn day(day: NaiveDate, today: NaiveDate) -> String {
    if day.year() == today.year() {
        day.format("%-d %b").to_string()
    } else {
        day.format("%-d %b %Y").to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runway_reads_as_a_sentence() {
        let today = NaiveDate::from_ymd_opt(2026, 11, 26).unwrap();
        let r = Runway {
            per_day: Decimal::new(124, 1),
            days: Some(Decimal::new(201, 1)),
            whole_days: Some(20),
            until: NaiveDate::from_ymd_opt(2026, 12, 16),
        };
        assert_eq!(
            runway(&r, today),
            "at the last 7 days' pace (12.40 USD a day) the balance lasts about 20 days, until 16 Dec"
        );
        let later = Runway {
            until: NaiveDate::from_ymd_opt(2027, 1, 2),
            ..r
        };
        assert!(runway(&later, today).ends_with("until 2 Jan 2027"));
        let idle = Runway {
            per_day: Decimal::ZERO,
            days: None,
            whole_days: None,
            until: None,
        };
        assert!(runway(&idle, today).starts_with("nothing was spent"));
    }

    #[test]
    fn formats_with_two_decimals_at_least() {
        assert_eq!(format_amount(Decimal::new(5, 0)), "5.00");
        assert_eq!(format_amount(Decimal::new(2500, 2)), "25.00");
        assert_eq!(format_amount(Decimal::new(125, 3)), "0.125");
        assert_eq!(format_amount(Decimal::new(12000, 3)), "12.00");
    }

    #[test]
    fn an_absent_amount_says_so() {
        assert_eq!(amount(None), "-");
        assert_eq!(money(Some(Decimal::new(-150, 2)), "USD"), "-1.50 USD");
        assert_eq!(money(None, "USD"), "-");
        assert_eq!(money_or(None, "USD", "unknown"), "unknown");
    }
}
