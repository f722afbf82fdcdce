//! My eSIMs' search over the account's inventory index: the index's pages asked for and taken
//! in, an order's eSIMs found in it, and the results that follow the search, the status filter
//! and the attention filter as pages come.

use super::*;
use crate::app::jobs::Outbox;
use crate::msg::Request;
use esimdash_api::Found;
use esimdash_domain::iccid::EsimIccid;
use esimdash_domain::order_no::OrderNo;
use esimdash_domain::status::StatusFilter;
use esimdash_inventory::store::SavedIndex;
use esimdash_inventory::{Merged, Selection};
use std::time::Instant;

impl Esims {
    /// The page the index's reads ask for now, if any. For a whole ICCID, not before its
    /// lookup answered: the answer may be all the search needs.
    pub fn scan_page(&self) -> Option<u64> {
        if let Some(whole) = self.whole_iccid() {
            let lookup = self.fresh.as_ref().filter(|f| f.iccid == whole);
            if lookup.is_none_or(|f| f.record.value().is_none()) {
                return None;
            }
        }
        // The list's first page, on its way, may tell that nothing is new at the top.
        if self.index.reads_top() && self.status == StatusFilter::All && self.list.is_loading_page(1) {
            return None;
        }
        self.index.wanted_page()
    }

    /// The background read's next page, if it is wanted (also while another tab waits on it:
    /// an order's detail finding its eSIMs).
    pub(super) fn fetch_scan(&mut self, out: &mut Outbox<'_>) {
        if let Some(page) = self.scan_page() {
            let id = out.send(Request::EsimScan { page });
            self.index.asked(page, id);
        }
    }

    /// The ICCIDs of the eSIMs an order made, from the pages and record at hand and the index;
    /// and whether the index is whole (so that none found means none).
    pub fn iccids_of_order(&self, number: &OrderNo) -> (Vec<String>, bool) {
        let mut found: Vec<String> = Vec::new();
        // The selected eSIM is often also on a loaded page: each ICCID once.
        let loaded = self.list.loaded().chain(self.selected());
        for e in loaded.filter(|e| e.record.provider_order_no == *number) {
            if !found.iter().any(|f| *f == e.raw_order_json.iccid.as_str()) {
                found.push(e.raw_order_json.iccid.to_string());
            }
        }
        let inventory = self.searched();
        for iccid in inventory.iccids_of_order(number.as_str()) {
            if !found.iter().any(|f| f == iccid) {
                found.push(iccid.to_string());
            }
        }
        (found, self.index.is_complete())
    }

    /// The whole inventory is wanted (the first `/`, an order's eSIMs looked for).
    pub(super) fn start_scan(&mut self) {
        self.index.want_whole();
    }

    /// The index an earlier session saved.
    pub fn use_saved(&mut self, saved: SavedIndex) {
        self.index.use_saved(saved);
        self.recount_attention();
        self.refilter();
    }

    /// After `r`, or after money moved: the index is read again from the top (where new eSIMs
    /// are), and what is selected is fetched fresh.
    pub(super) fn restart_scan(&mut self) {
        self.index.from_the_top();
        self.codes.clear();
        if let Some(f) = &mut self.fresh {
            f.record.invalidate();
        }
    }

    /// eSIMs the client read: into the index, and the results follow.
    pub fn index_seen(&mut self, seen: &esimdash_inventory::Seen) -> SeenStep {
        let merged = self.index.seen(seen);
        let mut found_whole = false;
        if merged.changed() || merged.gone > 0 {
            // A count over 100 000 entries only when something really moved.
            self.recount_attention();
            found_whole = self.results_follow(&merged);
        }
        SeenStep { found_whole }
    }

    /// A page the index asked for came, merged already (`index_seen`); `Some(true)` when the
    /// index just became complete.
    pub(super) fn accept_scan(
        &mut self,
        id: crate::msg::JobId,
        items: usize,
        total: u64,
        now: Instant,
    ) -> Option<bool> {
        let complete = self.index.page_came(id, items, total, now)?;
        if complete {
            self.recount_attention();
        }
        Some(complete)
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

    pub(super) fn scan_slot(&mut self) -> Option<&mut dyn crate::app::remote::Slot> {
        Some(self.index.slot())
    }

    /// The search in effect changed: recomputes the results; `true` when it is a whole ICCID
    /// that the index has (now selected).
    pub(super) fn search_changed(&mut self) -> bool {
        self.pinned = None;
        self.refilter()
    }

    /// The search closes (Esc): the eSIM selected in the results stays selected, the list
    /// going to its page and row, or pinned when its row is not known.
    pub(super) fn close_search(&mut self, now: Instant) {
        let selected = self.selected_result().map(|r| {
            let indexed = matches!(r, ResultRow::Indexed(_));
            let iccid = match &r {
                ResultRow::Indexed(row) => EsimIccid::parse(row.iccid),
                ResultRow::Fetched(e) => e.raw_order_json.iccid.clone(),
            };
            (iccid, r.order().to_string(), indexed)
        });
        let target = selected.map(|(iccid, order, indexed)| {
            let inventory = self.searched();
            let place = indexed
                .then(|| inventory.find_profile(iccid.as_str(), &order))
                .flatten()
                .map(|i| inventory.place_among(i, &self.status))
                // Not in the index (a lookup found it): its row on a page at hand.
                .or_else(|| {
                    self.list.index_of(|e| {
                        e.raw_order_json.iccid == iccid.as_str() && e.record.provider_order_no.as_str() == order
                    })
                });
            (iccid, order, place)
        });
        let record = self.selected().cloned();
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
    pub(super) fn results_follow(&mut self, merged: &Merged) -> bool {
        if !self.search_active() {
            return false;
        }
        if merged.refreshed > 0 || merged.gone > 0 {
            return self.refilter();
        }
        let attention = self.attention().map(|rule| self.attention_at(rule));
        let inventory = self.index.inventory();
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
            let inventory = self.index.inventory();
            new.iter()
                .find(|&&e| inventory.row(e as usize).is_some_and(|r| r.iccid == w.as_str()))
                .map(|&e| order(&e))
        });
        match found {
            Some(at) => {
                let inventory = self.index.inventory();
                self.result_cursor = self.results.partition_point(|e| selection.order(inventory, *e) < at);
                true
            }
            None => false,
        }
    }

    /// Recomputes the results after the search, the filter or the loaded items changed; keeps
    /// the selected eSIM selected. A whole ICCID that is found is selected, and `true` returned.
    pub(super) fn refilter(&mut self) -> bool {
        let keep = self.search_active().then(|| self.selected_iccid()).flatten();
        let text = self.search.applied().to_string();
        let inventory = self.searched();
        self.results = inventory.select(
            &text,
            &self.status,
            self.attention().map(|rule| self.attention_at(rule)),
        );
        let whole = self.whole_iccid();
        let position = |iccid: &str| self.result_rows().position(|r| r.iccid() == iccid);
        if let Some(at) = whole.as_ref().and_then(|w| position(w.as_str())) {
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
            .and_then(|k| position(k.as_str()))
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
