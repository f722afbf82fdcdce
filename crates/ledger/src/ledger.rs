//! The account's orders as the money view reads them: newest first, only back to the start of
//! the period asked for, and what was read is kept (in memory, and on disk when the account
//! keeps an index), so that the next look reads from the top only until it meets an order of
//! the stretch kept whole (`Run`): a page or two. A longer period than the run reads on from
//! where the run ends, found by counting its orders and checked against them.
//!
//! Only a look that reaches its period's start, the list's end or the run makes a run: a look
//! cut off or failed keeps what it read, but the next one reads those pages again, since
//! between them and the run there may be orders nobody read.
//!
//! An order's money is what it was when read: a refund of an order read before (`cancel`) is
//! seen when that order is read again, which a look from the top does not do (noted in
//! docs/money.md).

use super::kept::{self, Kept, Loaded, Run};
use super::sale::Sale;
use chrono::{DateTime, Utc};
use esimdash_api::model::OrderQuery;
use esimdash_api::{ApiError, Client};
use std::collections::{HashMap, HashSet};
use std::path::Path;

/// Orders a page: the most the API gives.
pub const PAGE: u64 = 100;

/// The orders' answer read, but of no use to the money view: said as an answer that could not
/// be read, with what is wrong with it.
fn unusable(detail: String) -> ApiError {
    ApiError::Decode {
        endpoint: esimdash_api::ORDERS,
        status: 200,
        detail,
        excerpt: String::new(),
    }
}

/// What a look cost and brought.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Refreshed {
    /// Pages requested.
    pub pages: u64,
    /// Orders not known before.
    pub new: u64,
}

pub struct Ledger {
    sales: HashMap<String, Sale>,
    /// The stretch of the list every order of which is kept (`None`: none yet).
    run: Option<Run>,
    kept: Option<Kept>,
    /// Where it is kept (the directory and the account), to open it again after a write that
    /// was cut off with its look.
    place: Option<(std::path::PathBuf, String)>,
    /// The look under way (what a look cut off had read, until the next one keeps it).
    look: Look,
    /// What the user is to be told of the kept orders (they could not be opened or written),
    /// until it is taken.
    trouble: Option<String>,
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger")
            .field("sales", &self.sales.len())
            .field("run", &self.run)
            .finish()
    }
}

impl Default for Ledger {
    fn default() -> Self {
        Self::in_memory()
    }
}

/// A ledger of these sales (tests, benchmarks), kept in memory, with no run known whole.
impl FromIterator<Sale> for Ledger {
    fn from_iter<I: IntoIterator<Item = Sale>>(sales: I) -> Self {
        let mut ledger = Self::in_memory();
        ledger.sales = sales.into_iter().map(|s| (s.order_no.clone(), s)).collect();
        ledger
    }
}

impl Ledger {
    /// Kept for this session only (`--demo`, no index kept).
    pub fn in_memory() -> Self {
        Self {
            sales: HashMap::new(),
            run: None,
            kept: None,
            place: None,
            look: Look::default(),
            trouble: None,
        }
    }

    /// Kept on disk at `at` (the inventory index's directory and the account's key), else
    /// for this session only.
    pub fn open(at: Option<(&Path, &str)>) -> Self {
        match at {
            Some((dir, account)) => Self::kept_in(dir, account),
            None => Self::in_memory(),
        }
    }

    /// Kept on disk in `dir` (the inventory index's) for `account`; when that cannot be
    /// opened, for this session only, and said.
    pub fn kept_in(dir: &Path, account: &str) -> Self {
        let mut ledger = Self::in_memory();
        ledger.place = Some((dir.to_path_buf(), account.to_string()));
        match Kept::open(dir, account) {
            Ok(mut kept) => {
                ledger.trouble = kept.set_aside.take();
                match kept.load() {
                    Ok(Loaded { sales, run }) => {
                        ledger.run = run;
                        ledger.sales = sales.into_iter().map(|s| (s.order_no.clone(), s)).collect();
                    }
                    Err(e) => {
                        // Emptied, so that what is read again is not mixed with what could not be.
                        tracing::warn!("the kept orders: {}; they are read again", kept::why(&e));
                        if let Err(e) = kept.write(&[], None, true) {
                            ledger.trouble = Some(format!("the kept orders could not be emptied: {}", kept::why(&e)));
                        }
                    }
                }
                ledger.kept = Some(kept);
            }
            Err(e) => {
                ledger.trouble = Some(format!(
                    "the orders read are not kept between sessions ({}: {})",
                    kept::path_in(dir, account).display(),
                    kept::why(&e)
                ))
            }
        }
        ledger
    }

    /// What the user is to be told of the kept orders, once.
    pub fn take_trouble(&mut self) -> Option<String> {
        self.trouble.take()
    }

    /// The sales kept from `since` on, newest first.
    pub fn since(&self, since: DateTime<Utc>) -> Vec<&Sale> {
        let mut sales: Vec<&Sale> = self.sales.values().filter(|s| s.at >= since).collect();
        sales.sort_by(|a, b| b.at.cmp(&a.at).then_with(|| b.order_no.cmp(&a.order_no)));
        sales
    }

    /// Reads the orders newest first until every order from `since` on is known: from the top
    /// until it meets the run, then (when the run does not reach back to `since`) on from
    /// where the run ends, until an order older than `since`.
    pub async fn refresh(&mut self, client: &Client, since: DateTime<Utc>) -> Result<Refreshed, ApiError> {
        // A look cut off before its end (its task aborted: nobody waited any more) left what it
        // read here: kept, as a failed look's is, though not as part of the run.
        let left = std::mem::take(&mut self.look);
        if !left.read.is_empty() {
            self.keep(left, None).await;
        }
        let mut outcome = read(&self.sales, self.run, client, since, &mut self.look).await;
        if let Ok(Step::Changed) = outcome {
            // The same number at another time: the server's history is not the one kept (a
            // sandbox started again). What was kept goes, and the list is read as if new.
            self.sales.clear();
            self.run = None;
            self.look = Look {
                anew: true,
                pages: self.look.pages,
                ..Look::default()
            };
            outcome = read(&self.sales, self.run, client, since, &mut self.look).await;
        }
        let look = std::mem::take(&mut self.look);
        let run = match outcome {
            Ok(Step::Whole(from)) => Some(Run {
                from,
                top: look.top.unwrap_or(from),
            }),
            _ => None,
        };
        let refreshed = Refreshed {
            pages: look.pages,
            new: look.new,
        };
        self.keep(look, run).await;
        outcome.map(|_| refreshed)
    }

    /// What a look read goes into the ledger, and to disk when kept there (off the async
    /// threads: a write may wait for another session's); `run`: the stretch it read whole,
    /// joined to the run it met.
    async fn keep(&mut self, look: Look, run: Option<Run>) {
        for sale in &look.read {
            self.sales.insert(sale.order_no.clone(), sale.clone());
        }
        if let Some(run) = run {
            self.run = Some(run.joined(self.run));
        }
        let (kept, place) = (self.kept.take(), self.place.clone());
        if kept.is_none() && place.is_none() {
            return;
        }
        let (read, anew) = (look.read, look.anew);
        let written = tokio::task::spawn_blocking(move || {
            let mut kept = match kept {
                Some(kept) => kept,
                None => {
                    let (dir, account) = place.unwrap_or_default();
                    Kept::open(&dir, &account).map_err(|e| kept::why(&e))?
                }
            };
            let result = kept.write(&read, run, anew).map_err(|e| kept::why(&e));
            Ok::<_, String>((kept, result))
        })
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r);
        let result = match written {
            Ok((kept, result)) => {
                self.kept = Some(kept);
                result
            }
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            tracing::warn!("{e}");
            self.trouble
                .get_or_insert_with(|| format!("the orders read could not be kept: {e}"));
        }
    }
}

/// One look at the list from the top, against the orders kept (`known`) and the run among them.
/// The kept orders are only read here (a `Connection` is not shared between threads).
async fn read(
    known: &HashMap<String, Sale>,
    run: Option<Run>,
    client: &Client,
    since: DateTime<Utc>,
    look: &mut Look,
) -> Result<Step, ApiError> {
    let in_run = |sale: &Sale| run.is_some_and(|r| r.holds(sale.at)) && known.contains_key(&sale.order_no);
    let mut page = 1;
    // The size the server pages by: as asked, until a short page that is not the last says less.
    let mut size = PAGE;
    // Where a jump to the run's end was made from, until the page jumped to shows it was right.
    let mut jumped_from: Option<u64> = None;
    let mut jumped = false;
    loop {
        let answer = client
            .orders(&OrderQuery {
                page: Some(page),
                page_size: Some(PAGE),
                ..OrderQuery::default()
            })
            .await?;
        look.pages += 1;
        let orders = &answer.orders;
        if !orders.is_empty()
            && orders
                .iter()
                .all(|o| look.seen.contains(&o.record.provider_order_no.to_string()))
        {
            return Err(unusable(format!(
                "page {page} of the orders holds only orders of pages before it: the server does not page the list"
            )));
        }
        let (mut met, mut oldest) = (None, None::<DateTime<Utc>>);
        for (i, order) in orders.iter().enumerate() {
            let sale = Sale::of(order).map_err(unusable)?;
            match known.get(&sale.order_no) {
                Some(k) if k.at.timestamp() != sale.at.timestamp() => return Ok(Step::Changed),
                Some(_) => {}
                None if look.seen.contains(&sale.order_no) => {}
                None => look.new += 1,
            }
            if met.is_none() && in_run(&sale) {
                met = Some((i as u64, sale.at));
            }
            look.seen.insert(sale.order_no.clone());
            oldest = Some(oldest.map_or(sale.at, |o| o.min(sale.at)));
            look.top = Some(look.top.map_or(sale.at, |t| t.max(sale.at)));
            look.read.push(sale);
        }
        if let Some(from) = jumped_from.take()
            && met.is_none()
        {
            // Not where the run ends (the list changed below the top): on page by page from
            // where the jump was made.
            page = from + 1;
            continue;
        }
        if oldest.is_some_and(|o| o < since) {
            return Ok(Step::Whole(since));
        }
        let read_so_far = (page - 1) * size + orders.len() as u64;
        let short = (orders.len() as u64) < size;
        if orders.is_empty() || (short && (answer.total == 0 || read_so_far >= answer.total)) {
            return Ok(Step::Whole(DateTime::<Utc>::MIN_UTC));
        }
        if short {
            size = orders.len() as u64;
        }
        match (met, run) {
            (Some(_), Some(r)) if r.from <= since => return Ok(Step::Whole(r.from)),
            (Some((at, met_at)), Some(r)) if !jumped => {
                // The run follows on from here: the page of its oldest order is the next one
                // worth reading. Its orders placed in the same second as the one met may lie
                // either side of it, so the count may fall short, never over.
                jumped = true;
                let below = known.values().filter(|k| r.holds(k.at) && k.at < met_at).count() as u64;
                let next = ((page - 1) * size + at + below) / size + 1;
                if next > page + 1 {
                    jumped_from = Some(page);
                    page = next;
                    continue;
                }
                page += 1;
            }
            _ => page += 1,
        }
    }
}

/// Where a read ended.
enum Step {
    /// Every order from this time to the top is known.
    Whole(DateTime<Utc>),
    /// A known order came at another time: the kept orders are of another history.
    Changed,
}

/// One look at the list: what it read, what it cost.
#[derive(Default)]
struct Look {
    read: Vec<Sale>,
    seen: HashSet<String>,
    /// The newest order it read.
    top: Option<DateTime<Utc>>,
    pages: u64,
    new: u64,
    anew: bool,
}
