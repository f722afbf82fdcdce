//! One look at the order list, and what it checks before anything it read is summed: the list
//! comes newest first, its pages hold no more and no fewer orders than its total says, it ends
//! within the pages its total allows and within the look's time, and an order listed twice
//! has one amount. A list that fails a check gives no figure (said in words); a list out of
//! order is read whole instead, where its total and the time allow (`Order::Any`).

use super::kept::Run;
use super::sale::Sale;
use chrono::{DateTime, Utc};
use esimdash_api::model::{OrderPage, OrderQuery};
use esimdash_api::{ApiError, Client};
use std::collections::HashMap;
use tokio::time::{Duration, Instant};

/// Orders a page: the most the API gives.
pub const PAGE: u64 = 100;

/// The orders' answer read, but of no use to the money view: said as an answer that could not
/// be read, with what is wrong with it.
pub(crate) fn unusable(detail: String) -> ApiError {
    ApiError::Decode {
        endpoint: esimdash_api::ORDERS,
        status: 200,
        detail,
        excerpt: String::new(),
    }
}

/// How the list is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Order {
    /// Newest first, as the spec says: read back to the period's start or the run kept.
    Newest,
    /// In no order to be relied on: read to its end.
    Any,
}

/// Where a read ended.
pub(crate) enum Step {
    /// Every order from this time to the top is known.
    Whole(DateTime<Utc>),
    /// A known order came at another time or with other amounts: the kept orders are of
    /// another history.
    Changed,
    /// The list is not newest first (what broke it).
    Unsorted(String),
    /// The list cannot be taken for whole: why, in words. Nothing of it is summed or kept.
    Untrusted(String),
}

/// One look at the list: what it read, what it cost.
#[derive(Default)]
pub(crate) struct Look {
    pub read: Vec<Sale>,
    /// Where each order read stands in `read`.
    pub seen: HashMap<String, usize>,
    /// The newest order it read.
    pub top: Option<DateTime<Utc>>,
    pub pages: u64,
    pub new: u64,
    pub anew: bool,
    /// Read as a list out of order (`Order::Any`): kept for this session only.
    pub unsorted: bool,
    /// The time of the order read last, in the list's order (newest first: none after it newer).
    last_at: Option<DateTime<Utc>>,
    /// Where in the list the last order read stands (1 for the first).
    through: u64,
}

impl Look {
    /// A look that starts over, having cost `pages` so far (`unsorted`: of a list out of order).
    pub fn anew(unsorted: bool, pages: u64) -> Self {
        Self {
            anew: true,
            unsorted,
            pages,
            ..Self::default()
        }
    }
}

/// Where a look must stop: its time, and its pages once the list's total is known.
pub(crate) struct Bounds {
    pub deadline: Instant,
    pub budget: Duration,
    /// The most pages the largest total seen allows.
    most_pages: Option<u64>,
}

impl Bounds {
    pub fn of(budget: Duration) -> Self {
        Self {
            deadline: Instant::now() + budget,
            budget,
            most_pages: None,
        }
    }

    /// Page `page` of the orders, within the look's time and the pages the total allows.
    async fn page(
        &mut self,
        client: &Client,
        page: u64,
        look: &mut Look,
    ) -> Result<Result<OrderPage, String>, ApiError> {
        if let Some(most) = self.most_pages
            && page > most
        {
            return Ok(Err(format!(
                "the order list goes on past its total: {} pages read, its total allows {most}",
                look.pages
            )));
        }
        let query = OrderQuery {
            page: Some(page),
            page_size: Some(PAGE),
            ..OrderQuery::default()
        };
        // Out of time is a bound met, as the pages' is: what the look read is not kept (an
        // endless list's orders would otherwise count in the next look's figures).
        let Ok(answer) = tokio::time::timeout_at(self.deadline, client.orders(&query)).await else {
            return Ok(Err(format!(
                "the order list was still being read after {} s ({} pages): no figure is given (a longer --timeout gives it more time)",
                self.budget.as_secs(),
                look.pages
            )));
        };
        let answer = answer?;
        look.pages += 1;
        // One page more than the total fills, to see the end; at the smallest size a page can
        // be (the server may page by fewer than asked).
        let size = (answer.orders.len() as u64).clamp(1, PAGE);
        let most = answer.total.div_ceil(size) + 1;
        self.most_pages = Some(self.most_pages.map_or(most, |m| m.max(most)));
        Ok(Ok(answer))
    }
}

/// The orders kept and the run among them, as a look reads against them.
pub(crate) struct Known<'a> {
    pub sales: &'a HashMap<String, Sale>,
    pub run: Option<Run>,
}

impl Known<'_> {
    fn in_run(&self, sale: &Sale) -> bool {
        self.run.is_some_and(|r| r.holds(sale.at)) && self.sales.contains_key(&sale.order_no)
    }
}

/// What one page held, as far as where to read next goes.
struct Taken {
    /// Where in the page the first order of the run stands, and its time.
    met: Option<(u64, DateTime<Utc>)>,
    oldest: Option<DateTime<Utc>>,
}

/// Takes a page's orders into the look, checking each; `Err`: where the look ends instead.
fn take(
    known: &Known<'_>,
    order: Order,
    page: u64,
    answer: &OrderPage,
    look: &mut Look,
) -> Result<Taken, Result<Step, ApiError>> {
    let orders = &answer.orders;
    if !orders.is_empty()
        && orders
            .iter()
            .all(|o| look.seen.contains_key(o.record.provider_order_no.as_str()))
    {
        return Err(Err(unusable(format!(
            "page {page} of the orders holds only orders of pages before it: the server does not page the list"
        ))));
    }
    let mut taken = Taken {
        met: None,
        oldest: None,
    };
    for (i, order_of) in orders.iter().enumerate() {
        let sale = Sale::of(order_of).map_err(|e| Err(unusable(e)))?;
        if order == Order::Newest
            && let Some(last) = look.last_at
            && sale.at > last
        {
            return Err(Ok(Step::Unsorted(format!(
                "order {} ({}) comes after an older one on page {page}",
                sale.order_no, sale.at
            ))));
        }
        match known.sales.get(&sale.order_no) {
            Some(k) if k.at.timestamp() != sale.at.timestamp() || !k.same_amounts(&sale) => {
                return Err(Ok(Step::Changed));
            }
            Some(_) => {}
            None if look.seen.contains_key(&sale.order_no) => {}
            None => look.new += 1,
        }
        if let Some(&at) = look.seen.get(&sale.order_no)
            && !look.read[at].same_amounts(&sale)
        {
            return Err(Ok(Step::Untrusted(format!(
                "order {} is listed twice with different amounts ({} and {} USD): neither is summed",
                sale.order_no, look.read[at].paid, sale.paid
            ))));
        }
        if taken.met.is_none() && known.in_run(&sale) {
            taken.met = Some((i as u64, sale.at));
        }
        look.seen.insert(sale.order_no.clone(), look.read.len());
        look.last_at = Some(sale.at);
        taken.oldest = Some(taken.oldest.map_or(sale.at, |o| o.min(sale.at)));
        look.top = Some(look.top.map_or(sale.at, |t| t.max(sale.at)));
        look.read.push(sale);
    }
    Ok(taken)
}

/// One look at the list from the top, against the orders kept (`known`), in `order`.
pub(crate) async fn read(
    known: Known<'_>,
    order: Order,
    client: &Client,
    since: DateTime<Utc>,
    look: &mut Look,
    bounds: &mut Bounds,
) -> Result<Step, ApiError> {
    let mut page = 1;
    // The size the server pages by: as asked, until a short page that is not the last says less.
    let mut size = PAGE;
    // Where a jump to the run's end was made from (and the time read last there), until the
    // page jumped to shows it was right.
    let mut jumped_from: Option<(u64, Option<DateTime<Utc>>)> = None;
    let mut jumped = false;
    loop {
        let answer = match bounds.page(client, page, look).await? {
            Ok(answer) => answer,
            Err(why) => return Ok(Step::Untrusted(why)),
        };
        let taken = match take(&known, order, page, &answer, look) {
            Ok(taken) => taken,
            Err(step) => return step,
        };
        if let Some((from, last_at)) = jumped_from.take()
            && taken.met.is_none()
        {
            // Not where the run ends (the list changed below the top): on page by page from
            // where the jump was made.
            page = from + 1;
            look.last_at = last_at;
            continue;
        }
        let end = ended(&answer, page, size, look);
        if let Some(Step::Untrusted(why)) = end {
            return Ok(Step::Untrusted(why));
        }
        if order == Order::Newest && taken.oldest.is_some_and(|o| o < since) {
            return Ok(Step::Whole(since));
        }
        if let Some(end) = end {
            return Ok(end);
        }
        if (answer.orders.len() as u64) < size {
            size = answer.orders.len() as u64;
        }
        match (taken.met, known.run) {
            (Some(_), Some(r)) if r.from <= since => return Ok(Step::Whole(r.from)),
            (Some((at, met_at)), Some(r)) if !jumped => {
                // The run follows on from here: the page of its oldest order is the next one
                // worth reading. Its orders placed in the same second as the one met may lie
                // either side of it, so the count may fall short, never over.
                jumped = true;
                let below = known.sales.values().filter(|k| r.holds(k.at) && k.at < met_at).count() as u64;
                let next = ((page - 1) * size + at + below) / size + 1;
                if next > page + 1 {
                    jumped_from = Some((page, look.last_at));
                    page = next;
                    continue;
                }
                page += 1;
            }
            _ => page += 1,
        }
    }
}

/// Whether the list ends at this page, checked against its total: an empty page ends it; a
/// page shorter than the server's pages ends it only where the total agrees and the server
/// pages as asked (else the next page, empty, must say so). Pages that hold more orders than
/// the total, or end short of it, make no figure.
fn ended(answer: &OrderPage, page: u64, size: u64, look: &mut Look) -> Option<Step> {
    let len = answer.orders.len() as u64;
    if len > 0 {
        look.through = (page - 1) * size + len;
    }
    let (through, total) = (look.through, answer.total);
    if through > total {
        return Some(Step::Untrusted(format!(
            "the order list holds more orders than its total says (at least {through}, against {total})"
        )));
    }
    // A short page is the end only from a server that says it pages as asked: one that pages
    // by fewer could be capping a list whose total lies.
    let as_asked = answer.page_size == PAGE;
    let last = len == 0 || (len < size && size == PAGE && as_asked && through >= total);
    if !last {
        return None;
    }
    Some(if through < total {
        Step::Untrusted(format!(
            "the order list ended after {through} orders, but its total says {total}"
        ))
    } else {
        Step::Whole(DateTime::<Utc>::MIN_UTC)
    })
}
