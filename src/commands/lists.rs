//! `plans`, `orders` and `esims` as lists: one page or every page (`--all`), printed as a table,
//! JSON or CSV (to stdout, or to a file that appears only once complete). Reading every page
//! shows its progress on stderr when that is a terminal, and Ctrl-C stops it cleanly: a file
//! being written is removed.

use super::table::{Align, LIST_CELL, Table};
use super::{CommandError, Output, page_footer, print_json};
use crate::api::Client;
use crate::api::model::{Esim, EsimQuery, Order, OrderQuery, Plan};
use crate::api::pages::{Listing, Page, Progress};
use crate::cli::ListArgs;
use crate::commands::output::{out, outln};
use crate::domain::attention::AttentionRule;
use crate::domain::status::{ACTIVE_FILTER, Status, StatusFilter};
use crate::export::csv_rows::{self, writer};
use crate::export::file::{Existing, PendingFile};
use crate::format::money::amount;
use crate::format::records;
use crate::format::verdict::status_words;
use crate::format::volume::format_bytes;
use serde_json::json;
use std::io::{IsTerminal, Write};
use std::path::Path;

/// Where CSV goes.
enum CsvOut {
    Stdout(std::io::Stdout),
    File(PendingFile),
}

impl Write for CsvOut {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            CsvOut::Stdout(s) => s.write(buf),
            CsvOut::File(f) => f.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            CsvOut::Stdout(s) => s.flush(),
            CsvOut::File(f) => f.flush(),
        }
    }
}

/// A CSV being written: its rows go out as they come.
struct Csv(csv::Writer<CsvOut>);

impl Csv {
    fn start(file: Option<&Path>, header: &[&str]) -> Result<Self, CommandError> {
        let out = match file {
            // The user named the file, so an existing one is replaced (as `curl -o` does),
            // but only once the new one is complete.
            Some(path) => CsvOut::File(PendingFile::create(path, Existing::Replace).map_err(io_error)?),
            None => CsvOut::Stdout(std::io::stdout()),
        };
        Ok(Csv(writer(out, header).map_err(csv_error)?))
    }

    fn rows<T>(&mut self, items: &[T], fields: fn(&T) -> Vec<String>) -> Result<(), CommandError> {
        for item in items {
            self.0.write_record(fields(item)).map_err(csv_error)?;
        }
        Ok(())
    }

    /// Flushes, and gives a file its name.
    fn finish(self) -> Result<(), CommandError> {
        let out = self.0.into_inner().map_err(|e| csv_error(e.into_error().into()))?;
        if let CsvOut::File(file) = out {
            let path = file.finish().map_err(io_error)?;
            eprintln!("Wrote {}", path.display());
        }
        Ok(())
    }
}

fn csv_error(e: csv::Error) -> CommandError {
    match e.into_kind() {
        // Kept as it is, so that a closed pipe (`| head`) ends the command quietly.
        csv::ErrorKind::Io(io) => CommandError::Io(io),
        other => CommandError::Io(std::io::Error::other(format!("{other:?}"))),
    }
}

fn io_error(e: crate::export::file::FileError) -> CommandError {
    CommandError::Io(std::io::Error::other(e.to_string()))
}

/// The progress line on stderr, when stderr is a terminal: how far the read has come, and
/// while the client holds requests back for the key's rate limit, for how long.
struct ProgressLine {
    shown: bool,
    what: &'static str,
    last: std::cell::Cell<Progress>,
    /// The line says it waits.
    waited: std::cell::Cell<bool>,
}

impl ProgressLine {
    fn new(what: &'static str) -> Self {
        Self {
            shown: std::io::stderr().is_terminal(),
            what,
            last: Default::default(),
            waited: Default::default(),
        }
    }

    fn show(&self, progress: Progress) {
        self.last.set(progress);
        self.draw(None);
    }

    /// The last progress again, with the wait for the rate limit when there is one.
    fn waiting(&self, until: Option<std::time::Instant>) {
        let left = until
            .map(|t| t.saturating_duration_since(std::time::Instant::now()))
            .filter(|d| !d.is_zero());
        // Drawn while there is a wait, and once more when it is over.
        if left.is_some() || self.waited.replace(left.is_some()) {
            self.draw(left);
        }
    }

    fn draw(&self, wait: Option<std::time::Duration>) {
        if self.shown {
            let wait = wait.map_or_else(String::new, |d| {
                format!(
                    " · waiting {} s for the API's rate limit",
                    d.as_secs() + u64::from(d.subsec_nanos() > 0)
                )
            });
            let _ = write!(
                std::io::stderr(),
                "\r\x1b[2K{}: {}{wait}",
                self.what,
                self.last.get().describe()
            );
        }
    }
}

/// Runs `read`, redrawing `line` every second while the client waits for the rate limit.
async fn paced<T>(client: &Client, line: &ProgressLine, read: impl Future<Output = T>) -> T {
    tokio::pin!(read);
    let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
    loop {
        tokio::select! {
            result = &mut read => return result,
            _ = tick.tick() => line.waiting(client.paced_until()),
        }
    }
}

impl Drop for ProgressLine {
    fn drop(&mut self) {
        if self.shown {
            eprint!("\r\x1b[2K");
        }
    }
}

pub async fn plans(client: &Client, location: Option<&str>, output: &Output) -> Result<(), CommandError> {
    let mut plans = client.plans().await?;
    if let Some(code) = location {
        plans.retain(|p| p.location_code.eq_ignore_ascii_case(code.trim()));
    }
    match output {
        Output::Csv(file) => {
            let mut csv = Csv::start(file.as_deref(), csv_rows::PLAN_HEADER)?;
            csv.rows(&plans, csv_rows::plan)?;
            csv.finish()
        }
        Output::Json => print_json(&json!({ "data": plans })),
        Output::Human => {
            out!("{}", plan_table(&plans));
            Ok(())
        }
    }
}

pub async fn orders(client: &Client, query: OrderQuery, list: &ListArgs, output: &Output) -> Result<(), CommandError> {
    if !list.all {
        let page = client.orders(&query).await?;
        unknown_status_found_nothing(&query.status, page.total, "orders")?;
        let footer = page_footer(page.page, page.page_size, page.total, "orders");
        let columns = (csv_rows::ORDER_HEADER, csv_rows::order as fn(&Order) -> Vec<String>);
        return print_page(output, &page, &page.orders, columns, order_table, &footer);
    }
    let take = |page: Page| match page {
        Page::Orders(items) => items,
        Page::Esims(_) => Vec::new(),
    };
    let rows = (csv_rows::ORDER_HEADER, csv_rows::order as fn(&Order) -> Vec<String>);
    let Some((all, progress)) = every_page(client, Listing::Orders(query), output, "orders", rows, take).await? else {
        return Ok(());
    };
    if output.is_json() {
        return print_json(&json!({ "orders": all, "total": progress.total }));
    }
    out!("{}", order_table(&all));
    outln!("{} orders", all.len());
    Ok(())
}

/// A CSV header and the fields of one record under it.
type Columns<T> = (&'static [&'static str], fn(&T) -> Vec<String>);

/// One page of a list as the output asks: its records as CSV, the API's page as JSON, or a
/// table of them and the page's footer.
fn print_page<T>(
    output: &Output,
    page: &impl serde::Serialize,
    items: &[T],
    (header, row): Columns<T>,
    table: fn(&[T]) -> String,
    footer: &str,
) -> Result<(), CommandError> {
    match output {
        Output::Csv(file) => {
            let mut csv = Csv::start(file.as_deref(), header)?;
            csv.rows(items, row)?;
            csv.finish()
        }
        Output::Json => print_json(page),
        Output::Human => {
            out!("{}", table(items));
            outln!("{footer}");
            Ok(())
        }
    }
}

/// Reads every page (Ctrl-C stops it: `notices::until_done_or_stopped`). CSV rows go out as they come (then `None`);
/// otherwise the items `take` keeps of each page come back with the progress.
async fn every_page<T>(
    client: &Client,
    listing: Listing,
    output: &Output,
    what: &'static str,
    (header, row): Columns<T>,
    take: impl Fn(Page) -> Vec<T>,
) -> Result<Option<(Vec<T>, Progress)>, CommandError> {
    {
        let line = ProgressLine::new(what);
        if let Output::Csv(file) = output {
            let mut csv = Csv::start(file.as_deref(), header)?;
            let read = listing.read_all(client, |page, progress| {
                line.show(progress);
                csv.rows(&take(page), row)
            });
            let progress = paced(client, &line, read).await?;
            drop(line);
            // Before the file is named: a mistyped status leaves no file behind.
            unknown_status_found_nothing(listing.status(), progress.total, what)?;
            csv.finish()?;
            return Ok(None);
        }
        let mut all = Vec::new();
        let read = listing.read_all(client, |page, progress| {
            line.show(progress);
            all.extend(take(page));
            Ok::<_, CommandError>(())
        });
        let progress = paced(client, &line, read).await?;
        unknown_status_found_nothing(listing.status(), progress.total, what)?;
        Ok(Some((all, progress)))
    }
}

pub async fn esims(
    client: &Client,
    query: EsimQuery,
    list: &ListArgs,
    attention: Option<AttentionRule>,
    output: &Output,
) -> Result<(), CommandError> {
    if !list.all && attention.is_none() {
        let page = client.esims(&query).await?;
        unknown_status_found_nothing(&query.status, page.total, "eSIMs")?;
        let footer = page_footer(page.page, page.page_size, page.total, "eSIMs");
        let columns = (csv_rows::ESIM_HEADER, csv_rows::esim as fn(&Esim) -> Vec<String>);
        if output.is_json() {
            let mut value = serde_json::to_value(&page).map_err(|e| CommandError::Usage(e.to_string()))?;
            value["esims"] = with_states(&page.esims)?;
            return print_json(&value);
        }
        return print_page(output, &page, &page.esims, columns, esim_table, &footer);
    }
    // Only usable eSIMs can need attention: the server's `active` filter saves the pages of
    // the rest, unless the user chose a status.
    let query = match attention {
        Some(_) if query.status == StatusFilter::All => EsimQuery {
            status: StatusFilter::Active,
            ..query
        },
        _ => query,
    };
    let now = chrono::Utc::now();
    let keep = move |items: Vec<Esim>| -> Vec<Esim> {
        match attention {
            Some(rule) => items.into_iter().filter(|e| rule.needs_esim(e, now)).collect(),
            None => items,
        }
    };
    let take = |page: Page| match page {
        Page::Esims(items) => keep(items),
        Page::Orders(_) => Vec::new(),
    };
    let rows = (csv_rows::ESIM_HEADER, csv_rows::esim as fn(&Esim) -> Vec<String>);
    let Some((all, progress)) = every_page(client, Listing::Esims(query), output, "eSIMs", rows, take).await? else {
        return Ok(());
    };
    if output.is_json() {
        let mut out = json!({ "esims": with_states(&all)?, "total": all.len() });
        if attention.is_some() {
            out["read"] = json!(progress.items);
        }
        return print_json(&out);
    }
    out!("{}", esim_table(&all));
    match attention {
        Some(rule) => outln!(
            "{} of {} eSIMs need attention ({})",
            all.len(),
            progress.items,
            rule.describe()
        ),
        None => outln!("{} eSIMs", all.len()),
    }
    Ok(())
}

/// The eSIMs as the API gives them, each with `state`: its verdict's class (`Class::key`), the
/// same word every view and `esims --iccid`'s `verdict.state` give.
fn with_states(esims: &[Esim]) -> Result<serde_json::Value, CommandError> {
    esims
        .iter()
        .map(|e| {
            let mut value = serde_json::to_value(e).map_err(|e| CommandError::Usage(e.to_string()))?;
            value["state"] = json!(e.facts().classify().key());
            Ok(value)
        })
        .collect::<Result<Vec<_>, _>>()
        .map(serde_json::Value::Array)
}

/// `--status` is sent as typed, so that a server that knows a newer status can be asked for
/// it. But a status this version does not know that found nothing is most likely mistyped
/// (`bogus`, `inuse`): an error that lists the statuses there are, not an empty list and exit 0.
fn unknown_status_found_nothing(status: &StatusFilter, total: u64, what: &str) -> Result<(), CommandError> {
    match status {
        StatusFilter::Is(Status::Other(text)) if total == 0 => {
            let known = Status::KNOWN.iter().map(Status::as_str).collect::<Vec<_>>().join(", ");
            Err(CommandError::Usage(format!(
                "no {what} with status {text:?}, which is not a status this version knows: {known}, or {ACTIVE_FILTER} (the usable ones)"
            )))
        }
        _ => Ok(()),
    }
}

/// Whether the tables on stdout get colours.
fn coloured() -> bool {
    std::io::stdout().is_terminal() && crate::text::colour_allowed()
}

fn order_table(orders: &[Order]) -> String {
    let mut t = Table::new(&[
        ("ORDER", Align::Left),
        ("CREATED", Align::Left),
        ("STATUS", Align::Left),
        ("PACKAGE", Align::Left),
        ("LOC", Align::Left),
        ("QTY", Align::Right),
        ("TOTAL", Align::Right),
    ])
    .cut_at(LIST_CELL);
    t.colour_status(2);
    for o in orders {
        t.row(vec![
            o.record.provider_order_no.to_string(),
            o.created_at.short(),
            status_words(&o.record.status).to_string(),
            o.record.package_name.clone(),
            crate::domain::location::short(&o.record.location_code).to_string(),
            o.record.quantity.map(|q| q.to_string()).unwrap_or_default(),
            amount(o.total_sell_price),
        ]);
    }
    t.render_coloured(coloured())
}

fn esim_table(esims: &[Esim]) -> String {
    let mut t = Table::new(&[
        ("ICCID", Align::Left),
        ("STATUS", Align::Left),
        ("SM-DP+", Align::Left),
        ("PACKAGE", Align::Left),
        ("LOC", Align::Left),
        ("USED", Align::Right),
        ("EXPIRES", Align::Left),
    ])
    .cut_at(LIST_CELL);
    t.colour_status(1);
    for e in esims {
        let raw = &e.raw_order_json;
        t.row(vec![
            raw.iccid.to_string(),
            crate::format::verdict::esim_cell(e),
            raw.smdp_status.clone(),
            e.record.package_name.clone(),
            crate::domain::location::short(&e.record.location_code).to_string(),
            records::usage(raw.order_usage, raw.total_volume),
            raw.expired_time.date(),
        ]);
    }
    t.render_coloured(coloured())
}

pub(super) fn plan_table(plans: &[Plan]) -> String {
    let mut t = Table::new(&[
        ("SLUG", Align::Left),
        ("NAME", Align::Left),
        ("LOC", Align::Left),
        ("DATA", Align::Right),
        ("VALIDITY", Align::Right),
        ("COST", Align::Right),
        ("PRICE", Align::Right),
        ("MARGIN %", Align::Right),
    ])
    .cut_at(LIST_CELL);
    for p in plans {
        let pricing = p.pricing.as_ref();
        t.row(vec![
            p.slug.clone(),
            p.name.clone(),
            crate::domain::location::short(&p.location_code).to_string(),
            p.volume.map(format_bytes).unwrap_or_default(),
            records::validity(p),
            amount(pricing.and_then(|x| x.cost_price)),
            amount(p.sell_price()),
            amount(pricing.and_then(|x| x.margin_pct)),
        ]);
    }
    let mut out = t.render();
    out.push_str(&format!("{} plans\n", plans.len()));
    out
}
