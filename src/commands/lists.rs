//! `plans`, `orders` and `esims` as lists: one page or every page (`--all`), printed as a table,
//! JSON or CSV (to stdout, or to a file that appears only once complete). Every page is written
//! out as it is read and then dropped, so that a million eSIMs take the memory a hundred do.
//! Reading every page shows its progress on stderr when that is a terminal, and Ctrl-C stops it
//! cleanly: a file being written is removed.

use super::table::{LIST_CELL, SpooledTable, Table};
use super::{CommandError, Form, Output, page_footer};
use crate::cli::ListArgs;
use crate::commands::output::{out, outln};
use esimdash_api::Client;
use esimdash_api::model::{Esim, EsimQuery, Order, OrderQuery, Plan};
use esimdash_api::pages::{Listing, Page, Progress};
use esimdash_domain::status::{ACTIVE_FILTER, Status, StatusFilter};
use esimdash_front::export::csv_rows::{self, writer};
use esimdash_front::export::file::{Existing, PendingFile};
use esimdash_front::format::money::amount;
use esimdash_front::format::records;
use esimdash_front::format::verdict::status_words;
use esimdash_front::format::volume::format_bytes;
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
pub(super) struct Csv(csv::Writer<CsvOut>);

impl Csv {
    pub(super) fn start(file: Option<&Path>, header: &[&str]) -> Result<Self, CommandError> {
        let out = match file {
            // The user named the file, so an existing one is replaced (as `curl -o` does),
            // but only once the new one is complete.
            Some(path) => CsvOut::File(PendingFile::create(path, Existing::Replace).map_err(io_error)?),
            None => CsvOut::Stdout(std::io::stdout()),
        };
        Ok(Csv(writer(out, header).map_err(csv_error)?))
    }

    pub(super) fn rows<T>(&mut self, items: &[T], fields: fn(&T) -> Vec<String>) -> Result<(), CommandError> {
        for item in items {
            self.0.write_record(fields(item)).map_err(csv_error)?;
        }
        Ok(())
    }

    /// Flushes, and gives a file its name.
    pub(super) fn finish(self) -> Result<(), CommandError> {
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

fn io_error(e: esimdash_front::export::file::FileError) -> CommandError {
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
    /// `streamed`: the output goes to stdout as it is read, where on the same terminal the
    /// line's redraws would wipe out what was just written.
    fn new(what: &'static str, streamed: bool) -> Self {
        Self {
            shown: std::io::stderr().is_terminal() && !(streamed && std::io::stdout().is_terminal()),
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

/// The catalog, or its plans for one location code.
pub(super) async fn catalog(client: &Client, location: Option<&str>) -> Result<Vec<Plan>, CommandError> {
    let mut plans = client.plans().await?;
    if let Some(code) = location {
        plans.retain(|p| p.location_code.eq_ignore_ascii_case(code.trim()));
    }
    Ok(plans)
}

pub async fn plans(client: &Client, location: Option<&str>, output: &Output) -> Result<(), CommandError> {
    let plans = catalog(client, location).await?;
    match &output.form {
        Form::Csv(file) => {
            let mut csv = Csv::start(file.as_deref(), csv_rows::PLAN_HEADER)?;
            csv.rows(&plans, csv_rows::plan)?;
            csv.finish()
        }
        Form::Json => output.print_json(&json!({ "data": plans })),
        Form::Human => {
            out!("{}", plan_table(&plans));
            Ok(())
        }
    }
}

/// A page of the orders, a mistyped status refused in words (`orders --json` prints it).
pub(super) async fn orders_page(
    client: &Client,
    query: &OrderQuery,
) -> Result<esimdash_api::model::OrderPage, CommandError> {
    let page = client.orders(query).await?;
    unknown_status_found_nothing(&query.status, page.total, "orders")?;
    Ok(page)
}

pub async fn orders(client: &Client, query: OrderQuery, list: &ListArgs, output: &Output) -> Result<(), CommandError> {
    if !list.all {
        let page = orders_page(client, &query).await?;
        let footer = page_footer(page.page, page.page_size, page.total, "orders");
        return print_page(output, &page, &page.orders, &ORDERS, &footer);
    }
    let take = |page: Page, _: &Progress| match page {
        Page::Orders(items) => Ok(items),
        Page::Esims(_) => Ok(Vec::new()),
    };
    let (list, progress) = every_page(client, Listing::Orders(query), output, &ORDERS, take).await?;
    let footer = format!("{} orders", list.kept);
    list.finish(json!({ "total": progress.total }), &footer)
}

/// How a list of `T` is written: its CSV header and rows, its JSON key and items, its table.
pub(super) struct Shape<T> {
    /// What the list holds, in messages.
    pub(super) what: &'static str,
    /// The key of its array in JSON.
    pub(super) key: &'static str,
    pub(super) header: &'static [&'static str],
    pub(super) csv: fn(&T) -> Vec<String>,
    pub(super) json: fn(&T) -> Result<serde_json::Value, CommandError>,
    pub(super) table: fn() -> Table,
    pub(super) row: fn(&T) -> Vec<String>,
}

const ORDERS: Shape<Order> = Shape {
    what: "orders",
    key: "orders",
    header: csv_rows::ORDER_HEADER,
    csv: csv_rows::order,
    json: |o| serde_json::to_value(o).map_err(|e| CommandError::Usage(e.to_string())),
    table: order_table,
    row: order_row,
};

const ESIMS: Shape<Esim> = Shape {
    what: "eSIMs",
    key: "esims",
    header: csv_rows::ESIM_HEADER,
    csv: csv_rows::esim,
    json: esim_json,
    table: esim_table,
    row: esim_row,
};

impl<T> Shape<T> {
    fn render(&self, items: &[T]) -> String {
        let mut t = (self.table)();
        for item in items {
            t.row((self.row)(item));
        }
        t.render_coloured(coloured())
    }
}

/// One page of a list as the output asks: its records as CSV, the API's page as JSON, or a
/// table of them and the page's footer.
fn print_page<T>(
    output: &Output,
    page: &impl serde::Serialize,
    items: &[T],
    shape: &Shape<T>,
    footer: &str,
) -> Result<(), CommandError> {
    match &output.form {
        Form::Csv(file) => {
            let mut csv = Csv::start(file.as_deref(), shape.header)?;
            csv.rows(items, shape.csv)?;
            csv.finish()
        }
        Form::Json => output.print_json(page),
        Form::Human => {
            out!("{}", shape.render(items));
            outln!("{footer}");
            Ok(())
        }
    }
}

/// A list of every page being written, each page as it is read and then dropped, so that
/// memory stays the same however long the list is.
pub(super) struct Listed<'a, T> {
    shape: &'a Shape<T>,
    to: ListOut,
    /// The items written.
    pub(super) kept: u64,
}

enum ListOut {
    Csv(Box<Csv>),
    Json(JsonList),
    /// A table needs its widest cells before its first line: its rows wait in a file.
    Table(SpooledTable),
}

impl<'a, T> Listed<'a, T> {
    pub(super) fn start(output: &Output, shape: &'a Shape<T>) -> Result<Self, CommandError> {
        let to = match &output.form {
            Form::Csv(file) => ListOut::Csv(Box::new(Csv::start(file.as_deref(), shape.header)?)),
            Form::Json => ListOut::Json(JsonList::new(shape.key, output)),
            Form::Human => ListOut::Table(SpooledTable::new((shape.table)())?),
        };
        Ok(Self { shape, to, kept: 0 })
    }

    pub(super) fn page(&mut self, items: Vec<T>) -> Result<(), CommandError> {
        self.kept += items.len() as u64;
        match &mut self.to {
            ListOut::Csv(csv) => csv.rows(&items, self.shape.csv),
            ListOut::Json(list) => list.page(items.iter().map(self.shape.json)),
            ListOut::Table(table) => items
                .iter()
                .try_for_each(|item| table.row((self.shape.row)(item)))
                .map_err(CommandError::Io),
        }
    }

    /// Ends the output: the CSV flushed (a file named), the JSON document closed with the
    /// fields of `tail` after the array, or the table drawn and `footer` under it.
    pub(super) fn finish(self, tail: serde_json::Value, footer: &str) -> Result<(), CommandError> {
        match self.to {
            ListOut::Csv(csv) => csv.finish(),
            ListOut::Json(list) => list.finish(tail),
            ListOut::Table(table) => {
                table.draw(coloured(), |text| out!("{text}"))?;
                outln!("{footer}");
                Ok(())
            }
        }
    }
}

/// A list as one JSON document written as its pages are read: `{"esims":[`, then each page's
/// items as they come; once every page is read, `]`, the fields known only then (`total`…)
/// and `}`. `Output::print_json` gives the keys sorted (serde_json's map), the array's first, so the
/// bytes are those of the document held whole. A read that fails midway leaves the document unterminated: not valid
/// JSON, so that no script takes the part for the whole (the error goes to stderr, and the
/// exit code says it as ever).
struct JsonList {
    key: &'static str,
    opened: bool,
    items: u64,
    /// For the earlier payments settled while the list was read, in its tail.
    output: Output,
}

impl JsonList {
    fn new(key: &'static str, output: &Output) -> Self {
        Self {
            key,
            opened: false,
            items: 0,
            output: output.clone(),
        }
    }

    fn page(
        &mut self,
        items: impl Iterator<Item = Result<serde_json::Value, CommandError>>,
    ) -> Result<(), CommandError> {
        let mut text = self.opening();
        for item in items {
            if self.items > 0 {
                text.push(',');
            }
            text.push_str(&json_line(&item?)?);
            self.items += 1;
        }
        out!("{text}");
        Ok(())
    }

    /// `{"key":[` the first time.
    fn opening(&mut self) -> String {
        if std::mem::replace(&mut self.opened, true) {
            return String::new();
        }
        format!("{{\"{}\":[", self.key)
    }

    fn finish(mut self, mut tail: serde_json::Value) -> Result<(), CommandError> {
        self.output.add_settled_earlier(&mut tail);
        let fields = json_line(&tail)?;
        let rest = match fields.strip_prefix('{') {
            Some(rest) if rest != "}" => format!(",{rest}"),
            _ => "}".to_string(),
        };
        out!("{}]{rest}\n", self.opening());
        Ok(())
    }
}

fn json_line(value: &impl serde::Serialize) -> Result<String, CommandError> {
    esimdash_domain::text::json_line(value).map_err(|e| CommandError::Usage(e.to_string()))
}

/// Reads every page (Ctrl-C stops it: `notices::until_done_or_stopped`), writing each as it
/// comes: the items `take` keeps of it, as the output asks.
pub(super) async fn every_page<'a, T>(
    client: &Client,
    listing: Listing,
    output: &Output,
    shape: &'a Shape<T>,
    take: impl Fn(Page, &Progress) -> Result<Vec<T>, CommandError>,
) -> Result<(Listed<'a, T>, Progress), CommandError> {
    let streamed = matches!(&output.form, Form::Json | Form::Csv(None));
    let line = ProgressLine::new(shape.what, streamed);
    // Started at the first page taken: a mistyped status, or a page refused by `take` (a
    // budget), leaves no file behind and prints no CSV header and no document.
    let mut list: Option<Listed<'a, T>> = None;
    let read = listing.read_all(client, |page, progress| {
        line.show(progress);
        unknown_status_found_nothing(listing.status(), progress.total, shape.what)?;
        let items = take(page, &progress)?;
        let listed = match &mut list {
            Some(listed) => listed,
            None => list.insert(Listed::start(output, shape)?),
        };
        listed.page(items)
    });
    let progress = paced(client, &line, read).await?;
    // Before what ends the output (a file's name, a table): the line is cleared first.
    drop(line);
    let list = match list {
        Some(list) => list,
        None => Listed::start(output, shape)?,
    };
    Ok((list, progress))
}

pub async fn esims(client: &Client, query: EsimQuery, list: &ListArgs, output: &Output) -> Result<(), CommandError> {
    if !list.all {
        let page = client.esims(&query).await?;
        unknown_status_found_nothing(&query.status, page.total, "eSIMs")?;
        let footer = page_footer(page.page, page.page_size, page.total, "eSIMs");
        if output.is_json() {
            let mut value = serde_json::to_value(&page).map_err(|e| CommandError::Usage(e.to_string()))?;
            value["esims"] = with_states(&page.esims)?;
            return output.print_json(&value);
        }
        return print_page(output, &page, &page.esims, &ESIMS, &footer);
    }
    let take = |page: Page, _: &Progress| match page {
        Page::Esims(items) => Ok(items),
        Page::Orders(_) => Ok(Vec::new()),
    };
    let (list, _) = every_page(client, Listing::Esims(query), output, &ESIMS, take).await?;
    let (kept, footer) = (list.kept, format!("{} eSIMs", list.kept));
    list.finish(json!({ "total": kept }), &footer)
}

/// The eSIMs as the API gives them, each with `state` (`esim_json`).
fn with_states(esims: &[Esim]) -> Result<serde_json::Value, CommandError> {
    esims
        .iter()
        .map(esim_json)
        .collect::<Result<Vec<_>, _>>()
        .map(serde_json::Value::Array)
}

/// An eSIM as the API gives it, with `state`: its verdict's class (`Class::key`), the same word
/// every view and `esims --iccid`'s `verdict.state` give.
fn esim_json(esim: &Esim) -> Result<serde_json::Value, CommandError> {
    let mut value = serde_json::to_value(esim).map_err(|e| CommandError::Usage(e.to_string()))?;
    value["state"] = json!(esim.facts().classify().key());
    Ok(value)
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
    std::io::stdout().is_terminal() && esimdash_domain::text::colour_allowed()
}

fn order_table() -> Table {
    Table::of(&["ORDER", "CREATED", "STATUS", "PACKAGE", "LOC", "QTY", "TOTAL"])
        .right(&["QTY", "TOTAL"])
        .listed(2)
}

fn order_row(o: &Order) -> Vec<String> {
    vec![
        o.record.provider_order_no.to_string(),
        o.created_at.short(),
        status_words(&o.record.status).to_string(),
        o.record.package_name.clone(),
        esimdash_domain::location::short(&o.record.location_code).to_string(),
        o.record.quantity.map(|q| q.to_string()).unwrap_or_default(),
        amount(o.total_sell_price),
    ]
}

fn esim_table() -> Table {
    Table::of(&["ICCID", "STATUS", "SM-DP+", "PACKAGE", "LOC", "USED", "EXPIRES"])
        .right(&["USED"])
        .listed(1)
}

fn esim_row(e: &Esim) -> Vec<String> {
    let raw = &e.raw_order_json;
    vec![
        raw.iccid.to_string(),
        esimdash_front::format::verdict::esim_cell(e),
        raw.smdp_status.clone(),
        e.record.package_name.clone(),
        esimdash_domain::location::short(&e.record.location_code).to_string(),
        records::usage(raw.order_usage, raw.total_volume),
        raw.expired_time.date(),
    ]
}

pub(super) fn plan_table(plans: &[Plan]) -> String {
    let mut t = Table::of(&["SLUG", "NAME", "LOC", "DATA", "VALIDITY", "COST", "PRICE", "MARGIN %"])
        .right(&["DATA", "VALIDITY", "COST", "PRICE", "MARGIN %"])
        .cut_at(LIST_CELL);
    for p in plans {
        let pricing = p.pricing.as_ref();
        t.row(vec![
            p.slug.clone(),
            p.name.clone(),
            esimdash_domain::location::short(&p.location_code).to_string(),
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
