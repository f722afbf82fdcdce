//! The list indexes of one reseller: its orders and eSIMs by status, its eSIMs in list order, by
//! ICCID and by `esimTranNo`, and the matching orders of recent text queries. With them any page
//! of a million orders or eSIMs, with or without a status, is a slice, and a lookup by ICCID or
//! of a QR image is a binary search, instead of a walk through every record.
//!
//! Lists are kept oldest first and read from the end: a new order, and the profiles of an order
//! allocated late, go at or near the end, so keeping them sorted moves little.

use super::records::{OrderRecord, PlanRecord, iccid_key};
use esimdash_domain::status::{Status, StatusFilter};
use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

/// Where an eSIM is kept: its order's index and its place in that order. Ordered as stored:
/// by order, then place.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct EsimAt {
    pub order: u32,
    pub esim: u32,
}

/// How eSIM lists are kept: the reverse of the list's order, which shows the newest order first
/// and an order's first eSIM first.
fn kept(at: EsimAt) -> (u32, Reverse<u32>) {
    (at.order, Reverse(at.esim))
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

    /// `active`, or one status by name; any other text matches nothing (not even `all`).
    fn status_filter(&self) -> Option<StatusFilter> {
        self.status.as_deref().map(|s| match s {
            "active" => StatusFilter::Active,
            s => StatusFilter::Is(Status::parse(s)),
        })
    }
}

/// The groups lists are kept by: each known status (its place in `Status::KNOWN`), the `active`
/// filter's, and one for any other status (which the sandbox never stores; kept for honesty).
const ACTIVE: usize = Status::KNOWN.len();
const OTHER: usize = ACTIVE + 1;
const GROUPS: usize = OTHER + 1;

/// The groups an order of this status is listed in.
fn groups(status: &Status) -> impl Iterator<Item = usize> + use<> {
    let own = Status::KNOWN.iter().position(|k| k == status).unwrap_or(OTHER);
    std::iter::once(own).chain(status.is_active().then_some(ACTIVE))
}

/// The group a status filter reads; `None`: every order.
fn group_of(filter: &StatusFilter) -> Option<usize> {
    match filter {
        StatusFilter::All => None,
        StatusFilter::Active => Some(ACTIVE),
        StatusFilter::Is(s) => Some(Status::KNOWN.iter().position(|k| k == s).unwrap_or(OTHER)),
    }
}

/// Text queries whose matches are kept; a client paging through one query asks for it again
/// and again, and each answer is then a slice.
const CACHED_QUERIES: usize = 32;
/// At most this many matches are kept in all (4 bytes each): a few broad queries over a million
/// orders must not hold more memory than the orders themselves.
const CACHED_MATCHES: usize = 4_000_000;

/// The matching orders of one query, oldest first.
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
    fn with_capacity(orders: usize) -> Self {
        Self {
            status: Vec::with_capacity(orders),
            plan: Vec::with_capacity(orders),
            // `B`, 12 digits and the newline, as the seed numbers them.
            numbers: String::with_capacity(orders * 14),
            starts: Vec::with_capacity(orders),
        }
    }

    fn push(&mut self, order: &OrderRecord) {
        self.status.push(status_code(&order.status));
        self.plan.push(order.plan.id as u32);
        self.starts.push(self.numbers.len() as u32);
        self.numbers.push_str(&order.provider_order_no());
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

/// Keys (ICCIDs without their check digit, `esimTranNo`s) to eSIMs: sorted pairs probed by
/// binary search, and the few stored since, merged in once there are many. A hash map of a
/// million entries takes three times the room.
#[derive(Debug, Default)]
struct Lookup {
    sorted: Vec<(u64, EsimAt)>,
    recent: Vec<(u64, EsimAt)>,
}

/// Added pairs are searched one by one until there are this many, then merged.
const RECENT: usize = 1024;

impl Lookup {
    fn build(mut pairs: Vec<(u64, EsimAt)>) -> Self {
        pairs.sort_unstable();
        Self {
            sorted: pairs,
            recent: Vec::new(),
        }
    }

    fn add(&mut self, key: u64, at: EsimAt) {
        self.recent.push((key, at));
        if self.recent.len() >= RECENT {
            // Exactly: growing by doubling would leave a million pairs' room unused.
            self.sorted.reserve_exact(self.recent.len());
            self.sorted.append(&mut self.recent);
            self.sorted.sort_unstable();
        }
    }

    /// Every eSIM stored under `key`, in the order they are stored.
    fn find(&self, key: u64) -> Vec<EsimAt> {
        let from = self.sorted.partition_point(|(k, _)| *k < key);
        let mut found: Vec<EsimAt> = self.sorted[from..]
            .iter()
            .take_while(|(k, _)| *k == key)
            .map(|(_, at)| *at)
            .collect();
        found.extend(self.recent.iter().filter(|(k, _)| *k == key).map(|(_, at)| *at));
        found.sort_unstable();
        found
    }

    #[cfg(test)]
    fn heap_bytes(&self) -> usize {
        (self.sorted.capacity() + self.recent.capacity()) * size_of::<(u64, EsimAt)>()
    }
}

/// Inserts `item` into `list`, sorted by `key`, after its equals.
fn insert_sorted<T: Copy, K: Ord>(list: &mut Vec<T>, item: T, key: impl Fn(T) -> K) {
    let at = list.partition_point(|&e| key(e) <= key(item));
    list.insert(at, item);
}

/// Removes `item` from `list`, sorted by `key`, if it is there.
fn remove_sorted<T: Copy + PartialEq, K: Ord>(list: &mut Vec<T>, item: T, key: impl Fn(T) -> K) {
    let from = list.partition_point(|&e| key(e) < key(item));
    if let Some(at) = list[from..].iter().position(|&e| e == item) {
        list.remove(from + at);
    }
}

/// The places of one page (1-based) of `size` in a list of `len` kept oldest first, which the
/// page reads backwards.
fn newest_first(len: usize, page: u64, size: u64) -> Range<usize> {
    let skip = usize::try_from(page.saturating_sub(1).saturating_mul(size)).unwrap_or(usize::MAX);
    let end = len.saturating_sub(skip);
    end.saturating_sub(usize::try_from(size).unwrap_or(usize::MAX))..end
}

/// One page of a list kept oldest first, newest first.
fn page_of<T: Copy>(oldest_first: &[T], page: u64, size: u64) -> Vec<T> {
    oldest_first[newest_first(oldest_first.len(), page, size)]
        .iter()
        .rev()
        .copied()
        .collect()
}

#[derive(Debug, Default)]
pub struct ListIndex {
    /// Every eSIM, kept as `kept` orders them.
    esims: Vec<EsimAt>,
    /// Per status group: its orders' indexes, oldest first.
    orders_by: [Vec<u32>; GROUPS],
    /// Per status group: its orders' eSIMs, kept as `esims`.
    esims_by: [Vec<EsimAt>; GROUPS],
    /// By ICCID (without its check digit): every profile with it, the current one stored last
    /// (a provider reissues an ICCID to a newer order).
    by_iccid: Lookup,
    /// By `esimTranNo`: where each QR image's eSIM is kept.
    by_tran_no: Lookup,
    /// Orders that are top-ups, oldest first.
    topups: Vec<u32>,
    /// Per order, by index, what text queries read: a walk over these columns stays in a few
    /// MB instead of visiting a million records.
    columns: Columns,
    /// Text queries' matches, and how many they hold in all.
    cache: HashMap<Filter, Matches>,
    cached: usize,
}

impl ListIndex {
    pub fn build(orders: &[OrderRecord]) -> Self {
        let esim_count: usize = orders.iter().map(|o| o.esims.len()).sum();
        let (mut in_group, mut esims_in_group) = ([0usize; GROUPS], [0usize; GROUPS]);
        for order in orders {
            for g in groups(&order.status) {
                in_group[g] += 1;
                esims_in_group[g] += order.esims.len();
            }
        }
        // Sized exactly up front: growing a list of millions by doubling leaves up to half
        // its room unused, and for a moment holds both copies.
        let mut index = Self {
            esims: Vec::with_capacity(esim_count),
            orders_by: std::array::from_fn(|g| Vec::with_capacity(in_group[g])),
            esims_by: std::array::from_fn(|g| Vec::with_capacity(esims_in_group[g])),
            columns: Columns::with_capacity(orders.len()),
            ..Self::default()
        };
        let mut iccids = Vec::with_capacity(esim_count);
        let mut tran_nos = Vec::with_capacity(esim_count);
        for (i, order) in orders.iter().enumerate() {
            if order.topup_of.is_some() {
                index.topups.push(i as u32);
            }
            index.columns.push(order);
            for g in groups(&order.status) {
                index.orders_by[g].push(i as u32);
            }
            for (at, esim) in stored(i, order) {
                index.esims.push(at);
                for g in groups(&order.status) {
                    index.esims_by[g].push(at);
                }
                iccids.push((esim.iccid_body, at));
                tran_nos.push((esim.tran_no, at));
            }
        }
        index.by_iccid = Lookup::build(iccids);
        index.by_tran_no = Lookup::build(tran_nos);
        index
    }

    /// A new order was stored at `i` (the newest); its eSIMs, if it has any yet, are indexed.
    pub fn order_added(&mut self, i: usize, order: &OrderRecord) {
        if order.topup_of.is_some() {
            self.topups.push(i as u32);
        }
        self.columns.push(order);
        for g in groups(&order.status) {
            insert_sorted(&mut self.orders_by[g], i as u32, |o| o);
        }
        self.esims_added(i, order);
        self.forget_queries();
    }

    /// The order at `i` got its eSIMs and left `was` (a pending order was allocated): they go
    /// where the order stands in the list, not at the top.
    pub fn esims_allocated(&mut self, i: usize, was: &Status, orders: &[OrderRecord]) {
        if let Some(order) = orders.get(i) {
            self.regroup_order(i, was, &order.status);
            self.esims_added(i, order);
        }
        self.forget_queries();
    }

    /// The order at `i` changed status from `was` (an eSIM installed, a used-up eSIM topped up).
    pub fn status_changed(&mut self, i: usize, was: &Status, order: &OrderRecord) {
        self.regroup_order(i, was, &order.status);
        let (before, after): (Vec<_>, Vec<_>) = (groups(was).collect(), groups(&order.status).collect());
        for (at, _) in stored(i, order) {
            for &g in before.iter().filter(|g| !after.contains(g)) {
                remove_sorted(&mut self.esims_by[g], at, kept);
            }
            for &g in after.iter().filter(|g| !before.contains(g)) {
                insert_sorted(&mut self.esims_by[g], at, kept);
            }
        }
        self.forget_queries();
    }

    fn regroup_order(&mut self, i: usize, was: &Status, now: &Status) {
        let (before, after): (Vec<_>, Vec<_>) = (groups(was).collect(), groups(now).collect());
        for &g in before.iter().filter(|g| !after.contains(g)) {
            remove_sorted(&mut self.orders_by[g], i as u32, |o| o);
        }
        for &g in after.iter().filter(|g| !before.contains(g)) {
            insert_sorted(&mut self.orders_by[g], i as u32, |o| o);
        }
        if let Some(code) = self.columns.status.get_mut(i) {
            *code = status_code(now);
        }
    }

    fn esims_added(&mut self, i: usize, order: &OrderRecord) {
        for (at, esim) in stored(i, order) {
            insert_sorted(&mut self.esims, at, kept);
            for g in groups(&order.status) {
                insert_sorted(&mut self.esims_by[g], at, kept);
            }
            self.by_iccid.add(esim.iccid_body, at);
            self.by_tran_no.add(esim.tran_no, at);
        }
    }

    fn forget_queries(&mut self) {
        self.cache.clear();
        self.cached = 0;
    }

    /// Where the current profile with exactly this ICCID is kept.
    pub fn esim(&self, orders: &[OrderRecord], iccid: &str) -> Option<EsimAt> {
        let at = *self.by_iccid.find(iccid_key(iccid)?).last()?;
        let record = orders.get(at.order as usize)?.esims.get(at.esim as usize)?;
        record.has_iccid(iccid).then_some(at)
    }

    /// Where the eSIM with this `esimTranNo` is kept, if it still is.
    pub fn esim_of_tran_no(&self, tran_no: u64) -> Option<EsimAt> {
        self.by_tran_no.find(tran_no).last().copied()
    }

    /// Every profile with exactly this ICCID: the current one first, then the earlier ones,
    /// newest first.
    fn profiles(&self, orders: &[OrderRecord], iccid: &str) -> Vec<EsimAt> {
        let (Some(_), Some(key)) = (self.esim(orders, iccid), iccid_key(iccid)) else {
            return Vec::new();
        };
        let mut all = self.by_iccid.find(key);
        all.reverse();
        all
    }

    /// The orders of a status group, oldest first; the group of other statuses is checked on
    /// the records.
    fn status_orders(&self, orders: &[OrderRecord], filter: &StatusFilter, group: usize) -> Cow<'_, [u32]> {
        if group != OTHER {
            return Cow::Borrowed(&self.orders_by[group]);
        }
        let of = |i: u32| orders.get(i as usize).is_some_and(|o| filter.matches(&o.status));
        Cow::Owned(self.orders_by[OTHER].iter().copied().filter(|&i| of(i)).collect())
    }

    /// As `status_orders`, for eSIMs.
    fn status_esims(&self, orders: &[OrderRecord], filter: &StatusFilter, group: usize) -> Cow<'_, [EsimAt]> {
        if group != OTHER {
            return Cow::Borrowed(&self.esims_by[group]);
        }
        let of = |at: &EsimAt| orders.get(at.order as usize).is_some_and(|o| filter.matches(&o.status));
        Cow::Owned(self.esims_by[OTHER].iter().copied().filter(of).collect())
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
        let status = filter.status_filter();
        let group = status.as_ref().and_then(group_of);
        let found: Cow<'_, [u32]> = match (&filter.q, &filter.iccid, &status, group) {
            (None, None, Some(status), Some(group)) => self.status_orders(orders, status, group),
            (None, None, _, _) => {
                let range = newest_first(orders.len(), page, size);
                return (orders.len() as u64, range.rev().collect());
            }
            (None, Some(iccid), _, _) => {
                let status_ok = status_test(status.clone(), &self.columns, orders);
                let found: Vec<u32> = self.orders_of_iccid(orders, iccid);
                Cow::Owned(found.into_iter().filter(|&i| status_ok(i as usize)).collect())
            }
            (Some(q), _, _, _) => Cow::Owned(self.text_matches(orders, plans, filter, q).to_vec()),
        };
        let total = found.len() as u64;
        (
            total,
            page_of(&found, page, size).into_iter().map(|i| i as usize).collect(),
        )
    }

    /// The orders matching a filter with `q`, oldest first: computed once, then cached.
    fn text_matches<'a>(
        &mut self,
        orders: &[OrderRecord],
        plans: impl Iterator<Item = &'a PlanRecord>,
        filter: &Filter,
        q: &str,
    ) -> Matches {
        if let Some(found) = self.cache.get(filter) {
            return found.clone();
        }
        let status = filter.status_filter();
        let candidates: Vec<u32> = match (&filter.iccid, status.as_ref().and_then(|s| Some((s, group_of(s)?)))) {
            (Some(iccid), _) => self.orders_of_iccid(orders, iccid),
            (None, Some((status, group))) => self.status_orders(orders, status, group).into_owned(),
            (None, None) => (0..orders.len() as u32).collect(),
        };
        let found: Matches = {
            let status_ok = status_test(status, &self.columns, orders);
            let text = TextQuery::new(q, plans);
            let numbers = self.columns.numbers_containing(&text.number);
            let plan = |i: usize| self.columns.plan.get(i).copied().unwrap_or(u32::MAX);
            let text_ok = |i: usize| numbers[i] || text.plan_matches(plan(i));
            Arc::new(
                candidates
                    .into_iter()
                    .filter(|&i| status_ok(i as usize) && text_ok(i as usize))
                    .collect(),
            )
        };
        if self.cache.len() >= CACHED_QUERIES || self.cached + found.len() > CACHED_MATCHES {
            self.forget_queries();
        }
        self.cached += found.len();
        self.cache.insert(filter.clone(), found.clone());
        found
    }

    /// The order that made this eSIM and its top-ups, oldest first.
    fn orders_of_iccid(&self, orders: &[OrderRecord], iccid: &str) -> Vec<u32> {
        let mut found: Vec<u32> = self
            .topups
            .iter()
            .copied()
            .filter(|&i| orders[i as usize].topup_of.as_deref() == Some(iccid))
            .collect();
        found.extend(self.profiles(orders, iccid).into_iter().map(|at| at.order));
        found.sort_unstable();
        found
    }

    /// The matching eSIMs in list order (`q` does not apply to eSIMs: the spec has none).
    pub fn esims(&self, orders: &[OrderRecord], filter: &Filter, page: u64, size: u64) -> (u64, Vec<EsimAt>) {
        let status = filter.status_filter();
        let group = status.as_ref().and_then(group_of);
        let found = match (&filter.iccid, &status, group) {
            (Some(iccid), _, _) => {
                // Not a list's slice: the current profile first, then the earlier ones.
                let status_ok = status_test(status.clone(), &self.columns, orders);
                let found: Vec<EsimAt> = self
                    .profiles(orders, iccid)
                    .into_iter()
                    .filter(|at| status_ok(at.order as usize))
                    .collect();
                let skip = usize::try_from(page.saturating_sub(1).saturating_mul(size)).unwrap_or(usize::MAX);
                let size = usize::try_from(size).unwrap_or(usize::MAX);
                return (found.len() as u64, found.into_iter().skip(skip).take(size).collect());
            }
            (None, Some(status), Some(group)) => self.status_esims(orders, status, group),
            (None, _, _) => Cow::Borrowed(&self.esims[..]),
        };
        (found.len() as u64, page_of(&found, page, size))
    }

    /// The memory its lists take, in bytes (the hash map of cached queries left out).
    #[cfg(test)]
    pub fn heap_bytes(&self) -> usize {
        let esim_lists: usize = std::iter::once(&self.esims)
            .chain(&self.esims_by)
            .map(Vec::capacity)
            .sum();
        let order_lists: usize = std::iter::once(&self.topups)
            .chain(&self.orders_by)
            .map(Vec::capacity)
            .sum();
        let c = &self.columns;
        esim_lists * size_of::<EsimAt>()
            + (order_lists + c.plan.capacity() + c.starts.capacity()) * 4
            + c.status.capacity()
            + c.numbers.capacity()
            + self.by_iccid.heap_bytes()
            + self.by_tran_no.heap_bytes()
    }
}

/// The eSIMs of the order at `i`, each with where it is kept, as `kept` orders them.
fn stored(i: usize, order: &OrderRecord) -> impl Iterator<Item = (EsimAt, &super::records::EsimRecord)> {
    order.esims.iter().enumerate().rev().map(move |(k, esim)| {
        (
            EsimAt {
                order: i as u32,
                esim: k as u32,
            },
            esim,
        )
    })
}
