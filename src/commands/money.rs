//! The money over time, as commands give it: `balance` with its runway, `report`, and the
//! runway `check balance` alerts on. The figures are the ledger's (`esimdash_ledger::sums`),
//! as the dashboard's Profile shows them.

use super::output::{Form, Output, out, outln};
use super::table::{Align, Table};
use super::{CommandError, Saved};
use chrono::{DateTime, Duration, Local, Utc};
use esimdash_api::Client;
use esimdash_domain::money::{format_amount, round_cents, ser_opt_number};
use esimdash_front::format::money as words;
use esimdash_ledger::period::Period;
use esimdash_ledger::sums::{self, By, PACE_DAYS, Row, Runway, Totals};
use esimdash_ledger::{Ledger, Sale};
use rust_decimal::Decimal;
use serde::Serialize;

/// A runway, and when the orders it is told from were read from the list's top.
pub struct Told {
    pub runway: Runway,
    pub orders_read: DateTime<Utc>,
}

/// The orders a runway is told from: the last seven days' alone, kept and young enough
/// (`Ledger::young`), or the kept orders, to be brought up to date.
pub enum Orders {
    Young { sales: Vec<Sale>, read_at: DateTime<Utc> },
    Kept(Box<Ledger>),
}

/// The first day of the runway's pace, at `now`.
fn pace_since(now: DateTime<Utc>) -> DateTime<Utc> {
    now - Duration::days(PACE_DAYS)
}

/// How long `balance` lasts at the last seven days' pace: the account's orders of those days
/// (kept, and read from the top until a kept one unless they were read no longer than
/// `max_age` ago), their mean spend a day; what went wrong keeping them said on stderr.
pub async fn runway(
    client: &Client,
    saved: &Saved,
    balance: Decimal,
    now: DateTime<Utc>,
    max_age: Duration,
) -> Result<Told, esimdash_api::ApiError> {
    let orders = saved.orders_aside(pace_since(now), now, max_age).await;
    told(client, orders, balance, now, max_age).await
}

/// The runway from `orders`, the kept ones brought up to date first unless they hold the last
/// seven days as read no longer than `max_age` ago: a 7-day pace moves little in an hour, and
/// a monitor's check or a script's balance every minute then costs the balance's request alone.
async fn told(
    client: &Client,
    orders: Orders,
    balance: Decimal,
    now: DateTime<Utc>,
    max_age: Duration,
) -> Result<Told, esimdash_api::ApiError> {
    let since = pace_since(now);
    let (per_day, orders_read) = match orders {
        Orders::Young { sales, read_at } => (sums::pace(&sales, now), read_at),
        Orders::Kept(mut ledger) => {
            let orders_read = match ledger.young_since(since, now, max_age) {
                Some(at) => at,
                None => {
                    let read = ledger.refresh(client, since).await;
                    said(&mut ledger);
                    read?;
                    ledger.read_at().unwrap_or(now)
                }
            };
            (sums::pace(ledger.since(since), now), orders_read)
        }
    };
    Ok(Told {
        runway: Runway::of(balance, per_day, now, &Local),
        orders_read,
    })
}

/// How old the orders a runway was told from are, in words, when older than a minute (`None`:
/// as good as read now).
pub fn orders_age(now: DateTime<Utc>, read: DateTime<Utc>) -> Option<String> {
    let age = now - read;
    (age >= Duration::minutes(1)).then(|| format!("orders as read {} ago", esimdash_domain::text::age(age)))
}

/// A line on stderr while the orders are read, where stderr is a terminal; wiped when done.
struct Reading(bool);

impl Reading {
    fn show(text: &str) -> Self {
        use std::io::{IsTerminal, Write};
        let shown = std::io::stderr().is_terminal();
        if shown {
            let _ = write!(std::io::stderr(), "\r\x1b[2K{text}");
        }
        Self(shown)
    }
}

impl Drop for Reading {
    fn drop(&mut self) {
        if self.0 {
            eprint!("\r\x1b[2K");
        }
    }
}

/// What went wrong keeping the orders, said on stderr.
fn said(ledger: &mut Ledger) {
    if let Some(trouble) = ledger.take_trouble() {
        super::say(&trouble);
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct BalanceJson {
    balance_usd: String,
    /// Rounded to cents; null when the orders could not be read.
    spend_per_day7d: Option<String>,
    /// To a tenth; null when nothing was spent (or the orders could not be read).
    #[serde(serialize_with = "ser_opt_number")]
    runway_days: Option<Decimal>,
    runway_until: Option<String>,
    /// When the orders the runway is told from were read from the list's top (null when they
    /// could not be read).
    orders_read_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    runway_error: Option<String>,
}

/// `esimdash balance`: the balance, and under it how long it lasts. The balance is the answer;
/// a runway that cannot be told (the orders unreadable) is said instead of it, and the
/// command still succeeds.
pub async fn balance(client: &Client, saved: &Saved, max_age: Duration, output: &Output) -> Result<(), CommandError> {
    let now = Utc::now();
    let (balance, runway) = balance_and_runway(client, saved, now, max_age).await?;
    if output.is_json() {
        return output.print_json(&balance_json(balance, &runway));
    }
    let today = now.with_timezone(&Local).date_naive();
    outln!("Balance: {} USD", format_amount(balance));
    match runway {
        Ok(told) => match orders_age(now, told.orders_read) {
            Some(age) => outln!("Runway: {} ({age})", words::runway(&told.runway, today)),
            None => outln!("Runway: {}", words::runway(&told.runway, today)),
        },
        Err(e) => outln!("Runway: not known: {e}"),
    }
    Ok(())
}

/// The balance, and how long it lasts at the last 7 days' pace (or why that is not known).
pub(super) async fn balance_and_runway(
    client: &Client,
    saved: &Saved,
    now: DateTime<Utc>,
    max_age: Duration,
) -> Result<(Decimal, Result<Told, esimdash_api::ApiError>), CommandError> {
    // The kept orders, read aside while the balance is on its way; brought up to date after it
    // (where they are not young), so that a key with one request left spends it on the balance.
    let orders = saved.orders_aside(pace_since(now), now, max_age);
    let balance = client.balance().await;
    let (balance, orders) = (balance?, orders.await);
    let runway = told(client, orders, balance, now, max_age).await;
    Ok((balance, runway))
}

/// `balance --json`.
pub(super) fn balance_json(balance: Decimal, runway: &Result<Told, esimdash_api::ApiError>) -> BalanceJson {
    let mut json = BalanceJson {
        balance_usd: format_amount(balance),
        spend_per_day7d: None,
        runway_days: None,
        runway_until: None,
        orders_read_at: None,
        runway_error: None,
    };
    match runway {
        Ok(Told { runway: r, orders_read }) => {
            json.spend_per_day7d = Some(format_amount(round_cents(r.per_day)));
            json.runway_days = r.days;
            json.runway_until = r.until.map(|d| d.to_string());
            json.orders_read_at = Some(orders_read.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
        }
        Err(e) => json.runway_error = Some(e.to_string()),
    }
    json
}

/// One figure of the report: its name in JSON and CSV, its column in the table, and its value
/// (a number or a string in JSON; its text in CSV and the table). The three forms are made from
/// `FIGURES`, so a figure is added in one place.
struct Figure {
    name: &'static str,
    header: &'static str,
    value: fn(&Totals) -> serde_json::Value,
}

const FIGURES: [Figure; 4] = [
    Figure {
        name: "orders",
        header: "ORDERS",
        value: |t| t.orders.into(),
    },
    Figure {
        name: "spend",
        header: "SPEND",
        value: |t| format_amount(t.spend).into(),
    },
    Figure {
        name: "cost",
        header: "COST",
        value: |t| format_amount(t.cost).into(),
    },
    Figure {
        name: "margin",
        header: "MARGIN",
        value: |t| format_amount(t.margin()).into(),
    },
];

impl Figure {
    fn text(&self, totals: &Totals) -> String {
        match (self.value)(totals) {
            serde_json::Value::String(text) => text,
            other => other.to_string(),
        }
    }
}

/// A row in JSON: its key and name (where it has them), then its figures in `FIGURES`' order.
struct RowJson<'a> {
    key: Option<&'a str>,
    name: &'a str,
    totals: &'a Totals,
}

impl Serialize for RowJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(None)?;
        if let Some(key) = self.key {
            map.serialize_entry("key", key)?;
        }
        if !self.name.is_empty() {
            map.serialize_entry("name", self.name)?;
        }
        for figure in &FIGURES {
            map.serialize_entry(figure.name, &(figure.value)(self.totals))?;
        }
        map.end()
    }
}

/// `esimdash report`: the period's orders read (newest first, back to its start; kept ones
/// from the top only), then one row per day, week, plan or country, and their total.
/// A report's rows and total, over the period `since` names, one row a `by`.
pub(super) struct Report {
    period: Period,
    by: By,
    rows: Vec<Row>,
    total: Totals,
}

/// The orders back to the period's start read (a second look reads only what is new), summed.
pub(super) async fn report_of(client: &Client, since: &str, by: &str, saved: &Saved) -> Result<Report, CommandError> {
    let now = Utc::now();
    let period = Period::since(since, now, &Local).map_err(|e| CommandError::Usage(format!("--since {e}")))?;
    let by = By::parse(by).ok_or_else(|| CommandError::Usage(format!("--by {by:?}: day, week, plan or country")))?;
    let mut ledger = saved.ledger();
    let read = {
        // A first look at a long period reads many pages: said while it does, on a terminal.
        let _line = Reading::show(&format!("reading the orders back to {}…", period.first));
        ledger.refresh(client, period.start(&Local)).await
    };
    said(&mut ledger);
    read?;
    let sales = ledger.since(period.start(&Local));
    let rows = sums::rows(sales.iter().copied(), by, &period, &Local);
    let total = rows.iter().fold(Totals::default(), |t, r| t.plus(&r.totals));
    Ok(Report {
        period,
        by,
        rows,
        total,
    })
}

/// `report --json`.
pub(super) fn report_json(report: &Report) -> serde_json::Value {
    let Report {
        period,
        by,
        rows,
        total,
    } = report;
    serde_json::json!({
        "since": period.first.to_string(),
        "until": period.last.to_string(),
        "by": by.name(),
        "currency": "USD",
        "rows": rows.iter().map(|r| RowJson { key: Some(&r.key), name: &r.name, totals: &r.totals }).collect::<Vec<_>>(),
        "total": RowJson { key: None, name: "", totals: total },
    })
}

pub async fn report(
    client: &Client,
    since: &str,
    by: &str,
    saved: &Saved,
    output: &Output,
) -> Result<(), CommandError> {
    let report = report_of(client, since, by, saved).await?;
    let Report {
        period,
        by,
        rows,
        total,
    } = &report;
    let by = *by;
    match &output.form {
        Form::Json => output.print_json(&report_json(&report)),
        Form::Csv(file) => {
            let header: Vec<&str> = [by.name(), "name"]
                .into_iter()
                .chain(FIGURES.iter().map(|f| f.name))
                .collect();
            let mut csv = super::lists::Csv::start(file.as_deref(), &header)?;
            csv.rows(rows, csv_row)?;
            csv.finish()
        }
        Form::Human => {
            out!("{}", report_table(by, rows, total));
            outln!(
                "{} to {}, in USD; cancelled orders were refunded and are not counted",
                period.first,
                period.last
            );
            Ok(())
        }
    }
}

fn column(by: By) -> &'static str {
    match by {
        By::Day => "DAY",
        By::Week => "WEEK",
        By::Plan => "PLAN",
        By::Country => "COUNTRY",
    }
}

fn csv_row(r: &Row) -> Vec<String> {
    let named = [&r.key, &r.name].map(|t| esimdash_front::export::csv_rows::text(t));
    named
        .into_iter()
        .chain(FIGURES.iter().map(|f| f.text(&r.totals)))
        .collect()
}

fn report_table(by: By, rows: &[Row], total: &Totals) -> String {
    let named = matches!(by, By::Plan | By::Country);
    let mut headers = vec![(column(by), Align::Left)];
    if named {
        headers.push(("NAME", Align::Left));
    }
    headers.extend(FIGURES.iter().map(|f| (f.header, Align::Right)));
    let mut table = Table::new(&headers);
    let cells = |key: &str, name: &str, t: &Totals| {
        let mut cells = vec![key.to_string()];
        if named {
            cells.push(name.to_string());
        }
        cells.extend(FIGURES.iter().map(|f| f.text(t)));
        cells
    };
    for r in rows {
        table.row(cells(&r.key, &r.name, &r.totals));
    }
    table.row(cells("total", "", total));
    table.render()
}
