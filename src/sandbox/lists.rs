//! The list indexes of one reseller: its eSIMs in list order, its eSIMs by ICCID, and the
//! matching items of recent queries. With them any page of 100 000 orders or eSIMs is a slice
//! and a lookup by ICCID is one hash probe, instead of a walk through every record.

use super::store::{OrderRecord, PlanRecord, iccid_number};
use crate::domain::status::{Status, StatusFilter};
use std::collections::HashMap;
use std::sync::Arc;

/// Where an eSIM is kept: its order's index and its place in that order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EsimAt {
    pub order: u32,
    pub esim: u32,
}

/// What a list request filters by, normalised: lowercase status and `q`, an ICCID without
/// spaces and dashes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct Filter {
    pub status: Option<String>,
    pub q: Option<String>,
    pub iccid: Option<String>,
}

impl Filter {
    pub fn new(status: Option<&str>, q: Option<&str>, iccid: Option<&str>) -> Self {
        Self {
            status: status.map(str::to_ascii_lowercase),
            q: q.map(str::to_lowercase),
            iccid: iccid.map(|i| i.chars().filter(|c| !matches!(c, ' ' | '-')).collect()),
        }
    }

    fn is_empty(&self) -> bool {
        *self == Self::default()
    }

    /// `active`, or one status by name; any other text matches nothing (not even `all`).
    fn status_filter(&self) -> Option<StatusFilter> {
        self.status.as_deref().map(|s| match s {
            "active" => StatusFilter::Active,
            s => StatusFilter::Is(Status::parse(s)),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Kind {
    Orders,
    Esims,
}

/// Queries whose matches are kept; a client paging through one query asks for it again and
/// again, and each answer is then a slice.
const CACHED_QUERIES: usize = 32;

/// The matching items of one query, newest first: order indexes, or places in `esims`.
type Matches = Arc<Vec<u32>>;

#[derive(Debug, Default)]
struct Columns {
    /// The status's place in `Status::KNOWN`, or `OTHER_STATUS`.
    status: Vec<u8>,
    plan: Vec<u32>,
    /// Every order number, each followed by a newline; `starts[i]` is where order `i`'s begins.
    numbers: String,
    starts: Vec<u32>,
}

const OTHER_STATUS: u8 = u8::MAX;

fn status_code(status: &Status) -> u8 {
    Status::KNOWN
        .iter()
        .position(|k| k == status)
        .map_or(OTHER_STATUS, |p| p as u8)
}

impl Columns {
    fn push(&mut self, order: &OrderRecord) {
        self.status.push(status_code(&order.status));
        self.plan.push(order.plan.id as u32);
        self.starts.push(self.numbers.len() as u32);
        self.numbers.push_str(&order.provider_order_no);
        self.numbers.push('\n');
    }

    /// Which orders' numbers contain `text`: one pass over all the numbers.
    fn numbers_containing(&self, text: &str) -> Vec<bool> {
        let mut hits = vec![false; self.starts.len()];
        if text.is_empty() || text.contains('\n') {
            return hits;
        }
        for (at, _) in self.numbers.match_indices(text) {
            let order = self.starts.partition_point(|&s| s as usize <= at) - 1;
            hits[order] = true;
        }
        hits
    }
}

/// A `q` prepared once per query: which plans match it (a few hundred checks, not one per
/// order) and the text as order numbers spell it (uppercase ASCII).
struct TextQuery {
    plans: Vec<bool>,
    number: String,
}

impl TextQuery {
    /// `plans` in the order of their ids.
    fn new<'a>(q_lower: &str, plans: impl Iterator<Item = &'a PlanRecord>) -> Self {
        let plans = plans
            .map(|p| p.name.to_lowercase().contains(q_lower) || p.slug.to_lowercase().contains(q_lower))
            .collect();
        Self {
            plans,
            number: q_lower.to_ascii_uppercase(),
        }
    }

    fn plan_matches(&self, plan: u32) -> bool {
        self.plans.get(plan as usize).copied().unwrap_or(false)
    }
}

/// Whether an order passes the status filter, read from its column; an unknown status is
/// checked on the record.
fn status_test<'a>(
    filter: Option<StatusFilter>,
    columns: &'a Columns,
    orders: &'a [OrderRecord],
) -> impl Fn(usize) -> bool + 'a {
    let known: Vec<bool> = Status::KNOWN
        .iter()
        .map(|k| filter.as_ref().is_none_or(|f| f.matches(k)))
        .collect();
    move |i| match columns.status.get(i).copied() {
        Some(OTHER_STATUS) | None => filter.as_ref().is_none_or(|f| f.matches(&orders[i].status)),
        Some(code) => known[code as usize],
    }
}

#[derive(Debug, Default)]
pub struct ListIndex {
    /// Every eSIM in the order the eSIM list shows them: newest order first.
    esims: Vec<EsimAt>,
    /// ICCID (as a number) → where its current profile is kept (the one stored last: a
    /// provider reissues an ICCID to a newer order).
    by_iccid: HashMap<u128, EsimAt>,
    /// ICCID → where its earlier profiles are kept, for the few ICCIDs issued more than once.
    earlier: HashMap<u128, Vec<EsimAt>>,
    /// Orders that are top-ups, oldest first.
    topups: Vec<u32>,
    /// Per order, by index, what filters read: a walk over these columns stays in a few MB
    /// instead of visiting 100 000 records.
    columns: Columns,
    cache: HashMap<(Kind, Filter), Matches>,
}

impl ListIndex {
    pub fn build(orders: &[OrderRecord]) -> Self {
        let mut index = Self::default();
        for (i, order) in orders.iter().enumerate() {
            index.order_added(i, order);
        }
        index.rebuild_esim_order(orders);
        index
    }

    /// A new order was stored at `i` (the newest); its eSIMs, if it has any yet, are indexed.
    pub fn order_added(&mut self, i: usize, order: &OrderRecord) {
        if order.topup_of.is_some() {
            self.topups.push(i as u32);
        }
        self.columns.push(order);
        self.esims_added(i, order);
        self.cache.clear();
    }

    /// The order at `i` got its eSIMs (a pending order was allocated): they go where the order
    /// stands in the list, not at the top.
    pub fn esims_allocated(&mut self, i: usize, orders: &[OrderRecord]) {
        if let Some(order) = orders.get(i) {
            self.esims_added(i, order);
            if let Some(code) = self.columns.status.get_mut(i) {
                *code = status_code(&order.status);
            }
        }
        self.rebuild_esim_order(orders);
    }

    /// The order at `i` changed status (a used-up eSIM was topped up).
    pub fn status_changed(&mut self, i: usize, status: &Status) {
        if let Some(code) = self.columns.status.get_mut(i) {
            *code = status_code(status);
        }
        self.cache.clear();
    }

    fn esims_added(&mut self, i: usize, order: &OrderRecord) {
        for (k, esim) in order.esims.iter().enumerate() {
            let at = EsimAt {
                order: i as u32,
                esim: k as u32,
            };
            if let Some(before) = self.by_iccid.insert(esim.iccid, at) {
                self.earlier.entry(esim.iccid).or_default().push(before);
            }
        }
    }

    fn rebuild_esim_order(&mut self, orders: &[OrderRecord]) {
        self.esims.clear();
        for (i, order) in orders.iter().enumerate().rev() {
            self.esims.extend((0..order.esims.len()).map(|k| EsimAt {
                order: i as u32,
                esim: k as u32,
            }));
        }
        self.cache.clear();
    }

    /// Where the current profile with exactly this ICCID is kept.
    pub fn esim(&self, orders: &[OrderRecord], iccid: &str) -> Option<EsimAt> {
        let at = *self.by_iccid.get(&iccid_number(iccid)?)?;
        let record = orders.get(at.order as usize)?.esims.get(at.esim as usize)?;
        record.has_iccid(iccid).then_some(at)
    }

    /// Every profile with exactly this ICCID: the current one first, then the earlier ones.
    fn profiles(&self, orders: &[OrderRecord], iccid: &str) -> Vec<EsimAt> {
        let Some(current) = self.esim(orders, iccid) else {
            return Vec::new();
        };
        let earlier = iccid_number(iccid).and_then(|n| self.earlier.get(&n));
        std::iter::once(current)
            .chain(earlier.into_iter().flatten().rev().copied())
            .collect()
    }

    /// The matching orders, newest first: `total` and the indexes on `page`.
    /// `plans` (in the order of their ids) are read only when `q` is not answered from the cache.
    pub fn orders<'a>(
        &mut self,
        orders: &[OrderRecord],
        plans: impl Iterator<Item = &'a PlanRecord>,
        filter: &Filter,
        page: u64,
        size: u64,
    ) -> (u64, Vec<usize>) {
        if filter.is_empty() {
            let newest_first = (0..orders.len()).rev();
            return (orders.len() as u64, page_of(newest_first, page, size).collect());
        }
        let matches = self.matches(Kind::Orders, filter, |index| {
            let candidates: Vec<u32> = match &filter.iccid {
                Some(iccid) => index.orders_of_iccid(orders, iccid),
                None => (0..orders.len() as u32).rev().collect(),
            };
            let status_ok = status_test(filter.status_filter(), &index.columns, orders);
            let q = filter.q.as_deref().map(|q| TextQuery::new(q, plans));
            let numbers = q.as_ref().map(|q| index.columns.numbers_containing(&q.number));
            let text_ok = |i: usize| match (&q, &numbers) {
                (Some(q), Some(numbers)) => {
                    numbers[i] || q.plan_matches(index.columns.plan.get(i).copied().unwrap_or(u32::MAX))
                }
                _ => true,
            };
            candidates
                .into_iter()
                .filter(|&i| status_ok(i as usize) && text_ok(i as usize))
                .collect()
        });
        let found = page_of(matches.iter().map(|&i| i as usize), page, size).collect();
        (matches.len() as u64, found)
    }

    /// The order that made this eSIM and its top-ups, newest first.
    fn orders_of_iccid(&self, orders: &[OrderRecord], iccid: &str) -> Vec<u32> {
        let mut found: Vec<u32> = self
            .topups
            .iter()
            .copied()
            .filter(|&i| orders[i as usize].topup_of.as_deref() == Some(iccid))
            .collect();
        found.extend(self.profiles(orders, iccid).into_iter().map(|at| at.order));
        found.sort_unstable_by(|a, b| b.cmp(a));
        found
    }

    /// The matching eSIMs in list order (`q` does not apply to eSIMs: the spec has none).
    pub fn esims(&mut self, orders: &[OrderRecord], filter: &Filter, page: u64, size: u64) -> (u64, Vec<EsimAt>) {
        let filter = Filter {
            q: None,
            ..filter.clone()
        };
        if filter.is_empty() {
            let all = &self.esims;
            return (all.len() as u64, page_of(all.iter().copied(), page, size).collect());
        }
        let matches = self.matches(Kind::Esims, &filter, |index| {
            let status_test = status_test(filter.status_filter(), &index.columns, orders);
            let status_ok = |at: &EsimAt| status_test(at.order as usize);
            match &filter.iccid {
                Some(iccid) => index
                    .profiles(orders, iccid)
                    .into_iter()
                    .filter(status_ok)
                    .filter_map(|at| index.esims.iter().position(|e| *e == at))
                    .map(|place| place as u32)
                    .collect(),
                None => (0..index.esims.len() as u32)
                    .filter(|&place| status_ok(&index.esims[place as usize]))
                    .collect(),
            }
        });
        let found = page_of(matches.iter().map(|&p| self.esims[p as usize]), page, size).collect();
        (matches.len() as u64, found)
    }

    fn matches(&mut self, kind: Kind, filter: &Filter, compute: impl FnOnce(&Self) -> Vec<u32>) -> Matches {
        let key = (kind, filter.clone());
        if let Some(found) = self.cache.get(&key) {
            return found.clone();
        }
        let found = Arc::new(compute(self));
        if self.cache.len() >= CACHED_QUERIES {
            self.cache.clear();
        }
        self.cache.insert(key, found.clone());
        found
    }
}

/// The items of one page (1-based) of `size`.
fn page_of<T>(items: impl Iterator<Item = T>, page: u64, size: u64) -> impl Iterator<Item = T> {
    let skip = usize::try_from(page.saturating_sub(1).saturating_mul(size)).unwrap_or(usize::MAX);
    items.skip(skip).take(usize::try_from(size).unwrap_or(usize::MAX))
}
