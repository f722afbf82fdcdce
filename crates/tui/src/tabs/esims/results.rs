//! My eSIMs' search over the account's inventory index (`crate::index`): the results that
//! follow the search, the status filter and the attention filter as the index's pages come,
//! and what the tab holds the index's read for.

use super::*;
use crate::index::Index;
use crate::tabs::whole_iccid;
use esimdash_api::Found;
use esimdash_api::model::Esim;
use esimdash_domain::iccid::{EsimIccid, Iccid};
use esimdash_domain::status::StatusFilter;
use esimdash_inventory::{Merged, Row, Selection};
use std::time::Instant;

/// A row of the search results: from the index, or the record the lookup brought.
#[derive(Debug, Clone, Copy)]
pub enum ResultRow<'a> {
    Indexed(Row<'a>),
    Fetched(&'a Esim),
}

impl ResultRow<'_> {
    /// The row's ICCID, as a record carries it (an index row's text read again).
    pub fn iccid(&self) -> EsimIccid {
        match self {
            ResultRow::Indexed(r) => EsimIccid::parse(r.iccid),
            ResultRow::Fetched(e) => e.raw_order_json.iccid.clone(),
        }
    }

    /// Whether it is the eSIM with `iccid`: compared as text, with nothing made, since the
    /// cursor and the drawing ask it of every row.
    pub fn is(&self, iccid: &EsimIccid) -> bool {
        self.text() == iccid.as_str()
    }

    /// The ICCID's text as the row holds it, to look it up in a set of them.
    pub(super) fn text(&self) -> &str {
        match self {
            ResultRow::Indexed(r) => r.iccid,
            ResultRow::Fetched(e) => e.raw_order_json.iccid.as_str(),
        }
    }

    /// The order that made the row's profile (empty where the index kept none).
    pub fn order(&self) -> &str {
        match self {
            ResultRow::Indexed(r) => r.order,
            ResultRow::Fetched(e) => e.record.provider_order_no.as_str(),
        }
    }
}

impl Esims {
    /// The whole ICCID searched for, if the search is one.
    pub fn whole_iccid(&self) -> Option<Iccid> {
        whole_iccid(self.search.applied())
    }

    /// The lookup's record when it is the whole ICCID searched for and the index lacks it.
    pub(super) fn fetched_only(&self) -> Option<&Esim> {
        let whole = self.whole_iccid()?;
        if !self.results.is_empty() {
            return None;
        }
        match self.fresh.as_ref()?.record.value()? {
            Found::Esim(e) if e.raw_order_json.iccid.as_str() == whole.as_str() => Some(e),
            _ => None,
        }
    }

    pub fn result_count(&self) -> usize {
        if self.fetched_only().is_some() {
            1
        } else {
            self.results.len()
        }
    }

    /// The result rows, in order.
    pub fn result_rows<'a>(&'a self, ix: &'a Index) -> impl Iterator<Item = ResultRow<'a>> {
        self.result_rows_from(ix, 0)
    }

    /// The result rows from the `start`th, in order: the rows before are never looked at (a
    /// cursor deep in a million results is drawn in the time of a screenful).
    pub fn result_rows_from<'a>(&'a self, ix: &'a Index, start: usize) -> impl Iterator<Item = ResultRow<'a>> {
        let inventory = ix.inventory();
        let fetched = self.fetched_only().map(ResultRow::Fetched);
        let skip = start.saturating_sub(usize::from(fetched.is_some()));
        let fetched = fetched.filter(|_| start == 0);
        fetched.into_iter().chain(
            self.results
                .get(skip..)
                .unwrap_or_default()
                .iter()
                .filter_map(move |&i| inventory.row(i as usize).map(ResultRow::Indexed)),
        )
    }

    pub(super) fn selected_result<'a>(&'a self, ix: &'a Index) -> Option<ResultRow<'a>> {
        if let Some(e) = self.fetched_only() {
            return (self.result_cursor == 0).then_some(ResultRow::Fetched(e));
        }
        let e = *self.results.get(self.result_cursor)?;
        ix.inventory().row(e as usize).map(ResultRow::Indexed)
    }

    /// Whether the index's read waits on an answer of this tab on its way that may make it
    /// needless: a whole ICCID's lookup (its answer may be all the search needs), or the list's
    /// first page (it may tell that nothing is new at the top). Only while it is on its way: a
    /// lookup a tab switch cancelled, or one that failed, holds nothing (it once held an
    /// order's detail at "looking for it…" for good).
    pub fn holds_index(&self, ix: &Index) -> bool {
        if let Some(whole) = self.whole_iccid() {
            let lookup = self.fresh.as_ref().filter(|f| f.iccid == whole);
            if lookup.is_some_and(|f| f.record.is_loading()) {
                return true;
            }
        }
        ix.read().reads_top() && self.status == StatusFilter::All && self.list.is_loading_page(1)
    }

    /// The eSIM records at hand: the list's loaded pages and the selected eSIM's record (often
    /// also on a page), for what the index alone may not know yet (an order's eSIMs).
    pub fn at_hand(&self, ix: &Index) -> Vec<&Esim> {
        self.list.loaded().chain(self.selected(ix)).collect()
    }

    /// The index was replaced (an earlier session's came): the results are made anew.
    pub fn index_replaced(&mut self, ix: &Index) {
        self.refilter(ix);
    }

    /// eSIMs the client read went into the index (`merged`): the results follow. `true` when
    /// they brought the whole ICCID searched for (now selected).
    pub fn index_merged(&mut self, merged: &Merged, ix: &Index) -> bool {
        (merged.changed() || merged.gone > 0) && self.results_follow(merged, ix)
    }

    /// A page of the list came: its total moves the indexes' places; and if the cursor was
    /// sent to an eSIM found by the search, it lands on that eSIM's row.
    pub(super) fn list_page_arrived(&mut self, page: u64) {
        let Some((iccid, order)) = self.expect.clone() else {
            return;
        };
        if page != self.list.current_page() {
            return;
        }
        self.expect = None;
        let items = self.list.page_items().unwrap_or_default();
        // The profile asked for: its ICCID and its order (a reissued ICCID's old row and its
        // current one are two profiles); the ICCID alone where the order is not on the page.
        let row = items
            .iter()
            .position(|e| e.raw_order_json.iccid == iccid && e.record.provider_order_no.as_str() == order)
            .or_else(|| items.iter().position(|e| e.raw_order_json.iccid == iccid));
        if let Some(row) = row {
            self.list.select_row(row);
        } else if let Some(Found::Esim(e)) = self.fresh.as_ref().and_then(|f| f.record.value()) {
            // Not where the index said (the list changed): it stays selected, pinned.
            if e.raw_order_json.iccid == iccid {
                self.pinned = Some(e.clone());
            }
        }
    }

    /// The search in effect changed: recomputes the results; `true` when it is a whole ICCID
    /// that the index has (now selected).
    pub(super) fn search_changed(&mut self, ix: &Index) -> bool {
        self.pinned = None;
        self.refilter(ix)
    }

    /// The search closes (Esc): the eSIM selected in the results stays selected, the list
    /// going to its page and row, or pinned when its row is not known.
    pub(super) fn close_search(&mut self, now: Instant, ix: &Index) {
        let selected = self.selected_result(ix).map(|r| {
            let indexed = matches!(r, ResultRow::Indexed(_));
            let iccid = match &r {
                ResultRow::Indexed(row) => EsimIccid::parse(row.iccid),
                ResultRow::Fetched(e) => e.raw_order_json.iccid.clone(),
            };
            (iccid, r.order().to_string(), indexed)
        });
        let target = selected.map(|(iccid, order, indexed)| {
            let inventory = ix.inventory();
            let place = indexed
                .then(|| inventory.find_profile(iccid.as_str(), &order))
                .flatten()
                .map(|i| inventory.place_among(i, &self.status))
                // Not in the index (a lookup found it): its row on a page at hand.
                .or_else(|| {
                    self.list.index_of(|e| {
                        e.raw_order_json.iccid.as_str() == iccid.as_str()
                            && e.record.provider_order_no.as_str() == order
                    })
                });
            (iccid, order, place)
        });
        let record = self.selected(ix).cloned();
        self.search.clear();
        self.attention = false;
        self.results.clear();
        self.result_cursor = 0;
        match target {
            Some((iccid, order, Some(place))) => {
                self.list.go_to_index(place, now);
                self.expect = Some((iccid, order));
                if self.list.page_items().is_some() {
                    self.list_page_arrived(self.list.current_page());
                }
            }
            Some((_, _, None)) => self.pinned = record.map(Box::new),
            None => {}
        }
    }

    /// The results after a read added eSIMs to the index: only those are judged, and put in
    /// their places among the results (a search of the whole index after every page would
    /// make reading it quadratic). An eSIM changed or replaced has the results made anew.
    pub(super) fn results_follow(&mut self, merged: &Merged, ix: &Index) -> bool {
        if !self.search_active() {
            return false;
        }
        if merged.refreshed > 0 || merged.gone > 0 {
            return self.refilter(ix);
        }
        let attention = self.attention.then(|| ix.attention_at());
        let inventory = ix.inventory();
        let selection = Selection::new(self.search.applied(), &self.status, attention);
        let mut new: Vec<u32> = merged
            .touched
            .iter()
            .copied()
            .filter(|&e| selection.takes(inventory, e))
            .collect();
        if new.is_empty() {
            return false;
        }
        let order = |e: &u32| selection.order(inventory, *e);
        new.sort_by_key(order);
        let selected = (self.fetched_only().is_none())
            .then(|| self.results.get(self.result_cursor).map(order))
            .flatten();
        let results = std::mem::take(&mut self.results);
        self.results = merge_sorted(results, new.iter().copied(), order);
        if let Some(at) = selected {
            // New results before the selected one move it down as many rows.
            self.result_cursor += new.iter().filter(|e| order(e) < at).count();
        }
        let whole = self.whole_iccid();
        let found = whole.and_then(|w| {
            new.iter()
                .find(|&&e| inventory.row(e as usize).is_some_and(|r| r.iccid == w.as_str()))
                .map(|&e| order(&e))
        });
        match found {
            Some(at) => {
                self.result_cursor = self.results.partition_point(|e| selection.order(inventory, *e) < at);
                true
            }
            None => false,
        }
    }

    /// Recomputes the results after the search, the filter or the loaded items changed; keeps
    /// the selected eSIM selected. A whole ICCID that is found is selected, and `true` returned.
    pub(super) fn refilter(&mut self, ix: &Index) -> bool {
        let keep = self.search_active().then(|| self.selected_iccid(ix)).flatten();
        let text = self.search.applied().to_string();
        let attention = self.attention.then(|| ix.attention_at());
        self.results = ix.inventory().select(&text, &self.status, attention);
        let whole = self.whole_iccid();
        let position = |iccid: &EsimIccid| self.result_rows(ix).position(|r| r.is(iccid));
        if let Some(at) = whole.map(EsimIccid::from).and_then(|w| position(&w)) {
            self.result_cursor = at;
            return true;
        }
        let asked = Some((text, self.status.clone(), self.attention));
        // The same results read anew: the cursor stays on its eSIM, or where it was when that
        // one left; new results start at the top.
        let fallback = if asked == self.results_of {
            self.result_cursor
        } else {
            0
        };
        self.result_cursor = keep
            .and_then(|k| position(&k))
            .unwrap_or(fallback)
            .min(self.result_count().saturating_sub(1));
        self.results_of = asked;
        false
    }
}

/// `results` and `new`, both in `order`, as one list in order: `new` appended where it all
/// comes after (a read from the top, in list order), else each put at its place, found by
/// halving, and the runs between copied whole (the attention filter's order is not the list's,
/// so a page's results land anywhere; the order of old results is never worked out again).
fn merge_sorted<K: Ord>(mut results: Vec<u32>, new: impl Iterator<Item = u32>, order: impl Fn(&u32) -> K) -> Vec<u32> {
    let new: Vec<u32> = new.collect();
    let appends = match (results.last(), new.first()) {
        (Some(last), Some(first)) => order(first) > order(last),
        _ => true,
    };
    if appends {
        results.extend(new);
        return results;
    }
    let mut merged = Vec::with_capacity(results.len() + new.len());
    let mut from = 0;
    for e in new {
        let key = order(&e);
        let at = from + results[from..].partition_point(|r| order(r) < key);
        merged.extend_from_slice(&results[from..at]);
        merged.push(e);
        from = at;
    }
    merged.extend_from_slice(&results[from..]);
    merged
}
