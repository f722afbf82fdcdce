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
use esimdash_ledger::Ledger;
use esimdash_ledger::period::Period;
use esimdash_ledger::sums::{self, By, PACE_DAYS, Row, Runway, Totals};
use rust_decimal::Decimal;
use serde::Serialize;

/// How long `balance` lasts at the last seven days' pace: the account's orders of those days
/// read (from the top only until a kept one), their mean spend a day; what went wrong keeping
/// them said on stderr.
pub async fn runway(
    client: &Client,
    saved: &Saved,
    balance: Decimal,
    now: DateTime<Utc>,
) -> Result<Runway, esimdash_api::ApiError> {
    pace(client, saved.ledger(), now)
        .await
        .map(|per_day| Runway::of(balance, per_day, now, &Local))
}

/// What the wallet paid a day over the last seven days: the kept orders, brought up to date.
async fn pace(
    client: &Client,
    mut ledger: esimdash_ledger::Ledger,
    now: DateTime<Utc>,
) -> Result<Decimal, esimdash_api::ApiError> {
    let since = now - Duration::days(PACE_DAYS);
    let read = ledger.refresh(client, since).await;
    said(&mut ledger);
    read?;
    Ok(sums::pace(ledger.since(since), now))
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
    #[serde(skip_serializing_if = "Option::is_none")]
    runway_error: Option<String>,
}

/// `esimdash balance`: the balance, and under it how long it lasts. The balance is the answer;
/// a runway that cannot be told (the orders unreadable) is said instead of it, and the
/// command still succeeds.
pub async fn balance(client: &Client, saved: &Saved, output: &Output) -> Result<(), CommandError> {
    let now = Utc::now();
    let (balance, runway) = balance_and_runway(client, saved, now).await?;
    if output.is_json() {
        return output.print_json(&balance_json(balance, &runway));
    }
    let today = now.with_timezone(&Local).date_naive();
    outln!("Balance: {} USD", format_amount(balance));
    match runway {
        Ok(r) => outln!("Runway: {}", words::runway(&r, today)),
        Err(e) => outln!("Runway: not known: {e}"),
    }
    Ok(())
}

/// The balance, and how long it lasts at the last 7 days' pace (or why that is not known).
pub(super) async fn balance_and_runway(
    client: &Client,
    saved: &Saved,
    now: DateTime<Utc>,
) -> Result<(Decimal, Result<Runway, esimdash_api::ApiError>), CommandError> {
    // The kept orders are opened while the balance is on its way; they are brought up to date
    // after it, so that a key with one request left spends it on the balance.
    let (balance, ledger) = tokio::join!(client.balance(), saved.ledger_opened_aside());
    let balance = balance?;
    let runway = pace(client, ledger, now)
        .await
        .map(|per_day| Runway::of(balance, per_day, now, &Local));
    Ok((balance, runway))
}

/// `balance --json`.
pub(super) fn balance_json(balance: Decimal, runway: &Result<Runway, esimdash_api::ApiError>) -> BalanceJson {
    let (spend, days, until, error) = match runway {
        Ok(r) => (
            Some(format_amount(round_cents(r.per_day))),
            r.days,
            r.until.map(|d| d.to_string()),
            None,
        ),
        Err(e) => (None, None, None, Some(e.to_string())),
    };
    BalanceJson {
        balance_usd: format_amount(balance),
        spend_per_day7d: spend,
        runway_days: days,
        runway_until: until,
        runway_error: error,
    }
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
