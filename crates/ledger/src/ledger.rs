//! The account's orders as the money view reads them: newest first, only back to the start of
//! the period asked for, and what was read is kept (in memory, and on disk when the account
//! keeps an index), so that the next look reads from the top only until it meets an order it
//! knows: a page or two. A longer period than the one kept reads on from where the kept orders
//! end, found by their count and checked against them.
//!
//! An order's money is what it was when read: a refund of an order read before (`cancel`) is
//! seen when that order is read again, which a look from the top does not do (noted in
//! docs/money.md).

use super::kept::{Kept, Loaded};
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
    /// Every order from this time to the newest kept is kept (`None`: nothing is whole yet).
    whole_from: Option<DateTime<Utc>>,
    kept: Option<Kept>,
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
            .field("whole_from", &self.whole_from)
            .finish()
    }
}

impl Default for Ledger {
    fn default() -> Self {
        Self::in_memory()
    }
}

/// A ledger of these sales (tests, benchmarks), kept in memory, with nothing known whole.
impl FromIterator<Sale> for Ledger {
    fn from_iter<I: IntoIterator<Item = Sale>>(sales: I) -> Self {
        let mut ledger = Self::in_memory();
        ledger.sales = sales.into_iter().map(|s| (s.order_no.clone(), s)).collect();
        ledger
    }
}

impl Ledger {
    /// Kept for this session only (`--demo`, `--no-cache`).
    pub fn in_memory() -> Self {
        Self {
            sales: HashMap::new(),
            whole_from: None,
            kept: None,
            look: Look::default(),
            trouble: None,
        }
    }

    /// Kept on disk in `dir` (the inventory index's) for `account`; when that cannot be
    /// opened, for this session only, and said.
    pub fn kept_in(dir: &Path, account: &str) -> Self {
        let mut ledger = Self::in_memory();
        match Kept::open(dir, account) {
            Ok(mut kept) => {
                ledger.trouble = kept.set_aside.take();
                match kept.load() {
                    Ok(Loaded { sales, whole_from }) => {
                        ledger.whole_from = whole_from;
                        ledger.sales = sales.into_iter().map(|s| (s.order_no.clone(), s)).collect();
                    }
                    Err(e) => {
                        // Emptied, so that what is read again is not mixed with what could not be.
                        tracing::warn!("{e}; the orders are read again");
                        if let Err(e) = kept.write(&[], None, true) {
                            ledger.trouble = Some(format!("the kept orders could not be emptied: {e}"));
                        }
                    }
                }
                ledger.kept = Some(kept);
            }
            Err(e) => ledger.trouble = Some(format!("the orders are not kept between sessions: {e}")),
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
    /// until it meets a known order, then (when what is kept does not reach back to `since`)
    /// on from where the kept orders end, until an order older than `since`.
    pub async fn refresh(&mut self, client: &Client, since: DateTime<Utc>) -> Result<Refreshed, ApiError> {
        // A look cut off before its end (its task aborted: nobody waited any more) left what it
        // read here: kept first, as a failed look's is, so that the next look goes on from it.
        let left = std::mem::take(&mut self.look);
        if !left.read.is_empty() {
            self.keep(&left, None);
        }
        let mut outcome = read(&self.sales, self.whole_from, client, since, &mut self.look).await;
        if let Ok(Step::Changed) = outcome {
            // The same number at another time: the server's history is not the one kept (a
            // sandbox started again). What was kept goes, and the list is read as if new.
            self.sales.clear();
            self.whole_from = None;
            self.look = Look {
                anew: true,
                pages: self.look.pages,
                ..Look::default()
            };
            outcome = read(&self.sales, self.whole_from, client, since, &mut self.look).await;
        }
        let look = std::mem::take(&mut self.look);
        // What was read is kept even when a later page failed: the next look starts from it.
        let whole_from = match outcome {
            Ok(Step::Whole(from)) => from,
            _ => None,
        };
        self.keep(&look, whole_from);
        outcome.map(|_| Refreshed {
            pages: look.pages,
            new: look.new,
        })
    }

    /// What a look read goes into the ledger, and to disk when kept there.
    fn keep(&mut self, look: &Look, whole_from: Option<DateTime<Utc>>) {
        for sale in &look.read {
            self.sales.insert(sale.order_no.clone(), sale.clone());
        }
        if let Some(from) = whole_from {
            self.whole_from = Some(self.whole_from.map_or(from, |w| w.min(from)));
        }
        if let Some(kept) = &mut self.kept
            && let Err(e) = kept.write(&look.read, whole_from, look.anew)
        {
            tracing::warn!("{e}");
            self.trouble = Some(format!("the orders read could not be kept: {e}"));
        }
    }
}

/// One look at the list from the top, against the orders known (`known`, whole from
/// `whole_from`). The kept orders are only read (a `Connection` is not shared between threads).
async fn read(
    known: &HashMap<String, Sale>,
    whole_from: Option<DateTime<Utc>>,
    client: &Client,
    since: DateTime<Utc>,
    look: &mut Look,
) -> Result<Step, ApiError> {
    let whole_enough = whole_from.is_some_and(|w| w <= since);
    let mut page = 1;
    // Where a jump to the kept orders' end was made from, until a page shows it was right.
    let mut jumped_from: Option<u64> = None;
    let mut jumped = false;
    let mut first_of_last_page: Option<String> = None;
    loop {
        let answer = client
            .orders(&OrderQuery {
                page: Some(page),
                page_size: Some(PAGE),
                ..OrderQuery::default()
            })
            .await?;
        look.pages += 1;
        // The size the server pages by (one that caps it lower says so in `pageSize`).
        let size = if answer.page_size > 0 {
            answer.page_size.min(PAGE)
        } else {
            PAGE
        };
        let first = answer.orders.first().map(|o| o.record.provider_order_no.to_string());
        if first.is_some() && first == first_of_last_page {
            return Err(unusable(format!(
                "page {page} of the orders repeats the page before it: the server does not page the list"
            )));
        }
        first_of_last_page = first;
        let (mut first_known, mut oldest) = (None, None);
        for (i, order) in answer.orders.iter().enumerate() {
            let sale = Sale::of(order).ok_or_else(|| {
                unusable(format!(
                    "order {} carries no time (createdAt): spend per day cannot be told",
                    order.record.provider_order_no
                ))
            })?;
            match known.get(&sale.order_no) {
                Some(k) if k.at.timestamp() != sale.at.timestamp() => return Ok(Step::Changed),
                Some(_) => {
                    first_known.get_or_insert(i as u64);
                }
                None if look.seen.contains(&sale.order_no) => {}
                None => look.new += 1,
            }
            look.seen.insert(sale.order_no.clone());
            oldest = Some(sale.at);
            look.read.push(sale);
        }
        let read_so_far = (page - 1) * size + answer.orders.len() as u64;
        if oldest.is_some_and(|o| o < since) {
            return Ok(Step::Whole(Some(since)));
        }
        if (answer.orders.len() as u64) < size || (answer.total > 0 && read_so_far >= answer.total) {
            return Ok(Step::Whole(Some(DateTime::<Utc>::MIN_UTC)));
        }
        if let Some(from) = jumped_from.take()
            && first_known.is_none()
        {
            // Not where the kept orders end (the list changed below the top): on page by
            // page from where the jump was made.
            page = from + 1;
            continue;
        }
        match first_known {
            Some(_) if whole_enough => return Ok(Step::Whole(whole_from)),
            Some(at) if !jumped => {
                // The kept orders follow on from here, as many as are kept: the page of
                // the oldest of them is the next one worth reading.
                jumped = true;
                let oldest_kept = (page - 1) * size + at + known.len() as u64 - 1;
                let next = oldest_kept / size + 1;
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
    /// Every order from this time on is known (`None`: not known yet how far).
    Whole(Option<DateTime<Utc>>),
    /// A known order came at another time: the kept orders are of another history.
    Changed,
}

/// One look at the list: what it read, what it cost.
#[derive(Default)]
struct Look {
    read: Vec<Sale>,
    seen: HashSet<String>,
    pages: u64,
    new: u64,
    anew: bool,
}
