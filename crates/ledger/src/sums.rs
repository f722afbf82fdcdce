//! The figures of money over time, each computed here once: a chart, a report, the balance
//! command and its check read them from here, so that none counts differently.

use super::period::{Period, day_of};
use super::sale::Sale;
use chrono::{DateTime, Datelike, Duration, NaiveDate, TimeZone, Utc};
use rust_decimal::Decimal;
use std::collections::HashMap;

/// What the runway's pace is taken over: the last seven days (168 hours back from now).
pub const PACE_DAYS: i64 = 7;

/// Orders paid for, what the wallet paid and what they cost, over a day or a group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    /// Orders the wallet paid for (a refunded one is not counted).
    pub orders: u64,
    pub spend: Decimal,
    pub cost: Decimal,
}

impl Totals {
    /// Sums saturate: a server's absurd amounts give an absurd figure, never a crash.
    pub fn add(&mut self, sale: &Sale) {
        if sale.moves_money() {
            self.orders += 1;
            self.spend = self.spend.saturating_add(sale.spend());
            self.cost = self.cost.saturating_add(sale.cost());
        }
    }

    /// Both together (a period's total is its rows summed, so that it is what they show).
    pub fn plus(self, other: &Totals) -> Totals {
        Totals {
            orders: self.orders + other.orders,
            spend: self.spend.saturating_add(other.spend),
            cost: self.cost.saturating_add(other.cost),
        }
    }

    pub fn margin(&self) -> Decimal {
        self.spend.saturating_sub(self.cost)
    }
}

/// What a report's rows are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    Day,
    Week,
    Plan,
    Country,
}

impl By {
    pub const NAMES: [&'static str; 4] = ["day", "week", "plan", "country"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn parse(text: &str) -> Option<By> {
        match text {
            "day" => Some(By::Day),
            "week" => Some(By::Week),
            "plan" => Some(By::Plan),
            "country" => Some(By::Country),
            _ => None,
        }
    }
}

/// One row of a report: a day (`2026-11-26`), a week (`2026-W48`, Monday to Sunday), a plan
/// (its slug, with its name) or a country (its location code, with its name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub key: String,
    pub name: String,
    pub totals: Totals,
}

/// The sales of `period` (in `tz`) by `by`: every day or week of the period in order, empty
/// ones included (a chart's gap is a day without sales); plans and countries by what the
/// wallet paid, most first.
pub fn rows<'a, Tz: TimeZone>(sales: impl IntoIterator<Item = &'a Sale>, by: By, period: &Period, tz: &Tz) -> Vec<Row> {
    let in_period = sales.into_iter().filter(|s| {
        let day = day_of(s.at, tz);
        day >= period.first && day <= period.last
    });
    match by {
        By::Day | By::Week => {
            let key = |day: NaiveDate| match by {
                By::Week => week_key(day),
                _ => day.to_string(),
            };
            let mut rows: Vec<Row> = Vec::new();
            for day in period.days() {
                let k = key(day);
                if rows.last().is_none_or(|r| r.key != k) {
                    rows.push(Row {
                        key: k,
                        name: String::new(),
                        totals: Totals::default(),
                    });
                }
            }
            let place: HashMap<String, usize> = rows.iter().enumerate().map(|(i, r)| (r.key.clone(), i)).collect();
            for sale in in_period {
                if let Some(&i) = place.get(&key(day_of(sale.at, tz))) {
                    rows[i].totals.add(sale);
                }
            }
            rows
        }
        By::Plan | By::Country => {
            let mut groups: HashMap<String, Row> = HashMap::new();
            for sale in in_period {
                let (key, name) = match by {
                    By::Plan => (sale.slug.clone(), sale.package.clone()),
                    // A region or the world is one row: its plans' regions differ.
                    _ => (
                        sale.location.clone(),
                        esimdash_domain::location::location_name(&sale.location)
                            .map_or_else(|| sale.location.clone(), str::to_string),
                    ),
                };
                groups
                    .entry(key.clone())
                    .or_insert_with(|| Row {
                        key,
                        name,
                        totals: Totals::default(),
                    })
                    .totals
                    .add(sale);
            }
            let mut rows: Vec<Row> = groups.into_values().filter(|r| r.totals.orders > 0).collect();
            rows.sort_by(|a, b| b.totals.spend.cmp(&a.totals.spend).then_with(|| a.key.cmp(&b.key)));
            rows
        }
    }
}

/// An ISO week as `2026-W48`.
pub fn week_key(day: NaiveDate) -> String {
    let week = day.iso_week();
    format!("{}-W{:02}", week.year(), week.week())
}

/// What the wallet paid over the last seven days, a day on average: the runway's pace.
pub fn pace<'a>(sales: impl IntoIterator<Item = &'a Sale>, now: DateTime<Utc>) -> Decimal {
    let from = now - Duration::days(PACE_DAYS);
    let spent = sales
        .into_iter()
        .filter(|s| s.at > from && s.at <= now)
        // A refund (an amount below zero) is no spending to count on: the pace is what was paid,
        // so one large refund never makes a week of sales read as nothing spent.
        .fold(Decimal::ZERO, |sum, s| sum.saturating_add(s.spend().max(Decimal::ZERO)));
    spent / Decimal::from(PACE_DAYS)
}

/// The longest runway told, in days.
const CENTURY: Decimal = Decimal::from_parts(36_500, 0, 0, false, 0);

/// How long the balance lasts at a pace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Runway {
    /// The pace: what the wallet paid a day over the last seven days.
    pub per_day: Decimal,
    /// Days the balance lasts at it, to a tenth; `None` when nothing was spent (it lasts).
    pub days: Option<Decimal>,
    /// The same, whole ("about 20 days"), rounded from the exact figure.
    pub whole_days: Option<i64>,
    /// The day it runs out, in the zone it was asked in.
    pub until: Option<NaiveDate>,
}

impl Runway {
    /// `balance` ÷ `per_day`.
    pub fn of<Tz: TimeZone>(balance: Decimal, per_day: Decimal, now: DateTime<Utc>, tz: &Tz) -> Runway {
        if per_day <= Decimal::ZERO {
            return Runway {
                per_day: Decimal::ZERO,
                days: None,
                whole_days: None,
                until: None,
            };
        }
        // A balance absurdly large against the pace lasts a century, as far as a date goes.
        let exact = balance
            .checked_div(per_day)
            .unwrap_or(Decimal::MAX)
            .clamp(Decimal::ZERO, CENTURY);
        let half_up = rust_decimal::RoundingStrategy::MidpointAwayFromZero;
        let days = exact.round_dp_with_strategy(1, half_up);
        let whole_days = i64::try_from(exact.round_dp_with_strategy(0, half_up)).ok();
        let seconds = i64::try_from((exact * Decimal::from(86_400)).trunc()).unwrap_or(0);
        let until = day_of(now + Duration::seconds(seconds), tz);
        Runway {
            per_day,
            days: Some(days),
            whole_days,
            until: Some(until),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each row's key with one of its figures.
    fn keyed<T>(rows: &[Row], figure: impl Fn(&Totals) -> T) -> Vec<(&str, T)> {
        rows.iter().map(|r| (r.key.as_str(), figure(&r.totals))).collect()
    }

    fn sale(no: &str, at: &str, paid: i64, cost: i64, status: &str, slug: &str, location: &str) -> Sale {
        Sale {
            order_no: no.into(),
            at: DateTime::parse_from_rfc3339(at).unwrap().to_utc(),
            status: status.into(),
            slug: slug.into(),
            package: format!("{slug} plan"),
            location: location.into(),
            quantity: 1,
            paid: Decimal::new(paid, 2),
            at_cost: Decimal::new(cost, 2),
            topup: false,
        }
    }

    #[test]
    fn days_weeks_plans_and_countries_sum_what_was_paid_and_not_refunded() {
        let sales = [
            sale("B1", "2026-11-23T10:00:00Z", 1000, 800, "got_resource", "fr-1gb", "FR"),
            sale("B2", "2026-11-23T11:00:00Z", 500, 400, "in_use", "jp-1gb", "JP"),
            sale("B3", "2026-11-24T09:00:00Z", 700, 500, "cancel", "fr-1gb", "FR"),
            sale("B4", "2026-11-26T09:00:00Z", 300, 200, "got_resource", "fr-1gb", "FR"),
            sale("B5", "2026-11-10T09:00:00Z", 9900, 1, "got_resource", "fr-1gb", "FR"),
        ];
        let period = Period {
            first: NaiveDate::from_ymd_opt(2026, 11, 22).unwrap(),
            last: NaiveDate::from_ymd_opt(2026, 11, 26).unwrap(),
        };
        let days = rows(&sales, By::Day, &period, &Utc);
        let spend: Vec<String> = days
            .iter()
            .map(|r| format!("{} {} {}", r.key, r.totals.orders, r.totals.spend))
            .collect();
        assert_eq!(
            spend,
            [
                "2026-11-22 0 0",
                "2026-11-23 2 15.00",
                "2026-11-24 0 0",
                "2026-11-25 0 0",
                "2026-11-26 1 3.00"
            ]
        );
        assert_eq!(days[1].totals.margin(), Decimal::new(300, 2));
        let weeks = rows(&sales, By::Week, &period, &Utc);
        assert_eq!(keyed(&weeks, |t| t.orders), [("2026-W47", 0), ("2026-W48", 3)]);
        let plans = rows(&sales, By::Plan, &period, &Utc);
        assert_eq!(
            keyed(&plans, |t| t.spend),
            [("fr-1gb", Decimal::new(1300, 2)), ("jp-1gb", Decimal::new(500, 2))]
        );
        let countries = rows(&sales, By::Country, &period, &Utc);
        assert_eq!(
            (countries[0].key.as_str(), countries[0].name.as_str()),
            ("FR", "France")
        );
    }

    #[test]
    fn the_runway_is_the_balance_over_the_last_seven_days_mean() {
        let now = DateTime::parse_from_rfc3339("2026-11-26T12:00:00Z").unwrap().to_utc();
        let sales = [
            sale("B1", "2026-11-26T10:00:00Z", 4000, 0, "in_use", "a", "FR"),
            sale("B2", "2026-11-20T10:00:00Z", 3000, 0, "in_use", "a", "FR"),
            // Older than seven days, and refunded: neither counts.
            sale("B3", "2026-11-19T11:00:00Z", 9900, 0, "in_use", "a", "FR"),
            sale("B4", "2026-11-25T11:00:00Z", 9900, 0, "cancel", "a", "FR"),
        ];
        let per_day = pace(&sales, now);
        assert_eq!(per_day, Decimal::new(7000, 2) / Decimal::from(7));
        let runway = Runway::of(Decimal::new(25000, 2), per_day, now, &Utc);
        assert_eq!(runway.days, Some(Decimal::new(250, 1)));
        assert_eq!(runway.until.unwrap().to_string(), "2026-12-21");
        assert_eq!(Runway::of(Decimal::ONE, Decimal::ZERO, now, &Utc).days, None);
        assert_eq!(
            Runway::of(Decimal::new(-5, 0), per_day, now, &Utc).days,
            Some(Decimal::ZERO)
        );
    }
}
