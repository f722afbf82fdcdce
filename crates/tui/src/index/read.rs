//! The inventory index of a dashboard session and the reads that fill it. Every eSIM the
//! client reads comes in (`Msg::IndexSeen`, from the runtime's tap), whatever asked for it,
//! except the pages of the index's own two reads, which come once, as their answer, with their
//! place (`Payload::IndexPage`). Those reads go a page at a time, in the background (within a
//! share of the key's budget):
//!
//! - from the top, at start and on `r` (once the index is used): page 1, 2, … until a page
//!   holds eSIMs the index had (the list is newest first, so that is where new ones are);
//! - the whole list, once a search or the attention filter needs it: at the first place the
//!   index does not cover, until it covers every place. A page is asked for once a session.
//!
//! Every page read is also written to the account's saved index as it comes (the runtime's
//! tap, `inventory::kept::Writer`, the one save policy), so a session killed in the middle of
//! a read loses at most the page it was writing, and the next one resumes at the gap.

use crate::kit::remote::Remote;
use crate::msg::JobId;
use chrono::{DateTime, Utc};
use esimdash_api::ApiError;
use esimdash_inventory::store::SavedIndex;
use esimdash_inventory::{Inventory, Merged, Seen};
use std::collections::HashSet;
use std::time::{Duration, Instant};

pub use crate::msg::SCAN_PAGE_SIZE;

#[derive(Debug, Clone, Default)]
pub struct IndexRead {
    index: Inventory,
    /// When the saved index this session started from was saved.
    saved_at: Option<DateTime<Utc>>,
    /// The next page of the read from the top, while it goes on.
    top: Option<u64>,
    /// The page the read from the top awaits, and whether it held eSIMs the index had.
    top_met_known: Option<(u64, bool)>,
    /// The whole list is wanted (a search or the attention filter asked).
    whole: bool,
    /// The page asked for now (a failure stops both reads until `r`).
    next: Remote<()>,
    asked: Option<u64>,
    /// Pages asked for this session (at the totals of then): none is asked for twice.
    asked_before: HashSet<u64>,
    /// When the first and the latest page of this read came, and how many came: the pace the
    /// server and the network really keep, which the budget alone overstates.
    pace: Option<(Instant, Instant, u64)>,
}

impl IndexRead {
    pub fn inventory(&self) -> &Inventory {
        &self.index
    }

    pub fn saved_at(&self) -> Option<DateTime<Utc>> {
        self.saved_at
    }

    /// eSIMs the index has.
    pub fn covered(&self) -> u64 {
        self.index.len() as u64
    }

    pub fn total(&self) -> Option<u64> {
        self.index.total()
    }

    /// Every eSIM of the list is in the index.
    pub fn is_complete(&self) -> bool {
        self.index.is_complete()
    }

    /// Whether a page is being asked for now.
    pub fn is_reading(&self) -> bool {
        self.next.is_loading()
    }

    /// Why the reads stopped, if they did.
    pub fn error(&self) -> Option<&ApiError> {
        self.next.error()
    }

    /// The time the whole read still needs, while it goes on: at its share of the budget
    /// (`pages_per_minute`, 0: not known) or at the pace its pages have come, the slower.
    pub fn time_to_go(&self, pages_per_minute: u32) -> Option<Duration> {
        if !self.whole || self.is_complete() || self.error().is_some() {
            return None;
        }
        let pages = self.total()?.saturating_sub(self.covered()).div_ceil(SCAN_PAGE_SIZE);
        let budget = (pages_per_minute > 0).then(|| Duration::from_secs(pages * 60 / u64::from(pages_per_minute)));
        // Whichever is slower: the budget's share, or the pace the pages have come at so far
        // (a budget lifted or far above what the server answers says "0 s" for minutes).
        let kept = match self.pace {
            Some((first, latest, came)) if came >= 5 => {
                let each = latest.saturating_duration_since(first) / u32::try_from(came - 1).unwrap_or(u32::MAX);
                each.saturating_mul(u32::try_from(pages).unwrap_or(u32::MAX))
            }
            _ => return budget,
        };
        Some(budget.unwrap_or_default().max(kept))
    }

    /// The index an earlier session saved: what this session read since is kept over it.
    pub fn use_saved(&mut self, saved: SavedIndex) {
        let mut index = saved.inventory;
        index.absorb(&self.index);
        self.index = index;
        self.saved_at = Some(saved.saved_at);
        self.from_the_top();
    }

    /// Reads from the top again (at start with a saved index, on `r`, after money moved);
    /// a failed read is tried again.
    pub fn from_the_top(&mut self) {
        if !self.index.is_empty() {
            self.top = Some(1);
        }
        self.asked_before.clear();
        self.pace = None;
        if !self.next.is_loading() {
            self.next = Remote::default();
        }
    }

    /// Whether the read from the top is still to come.
    pub fn reads_top(&self) -> bool {
        self.top.is_some()
    }

    /// Reads the whole list (a search or the attention filter needs it).
    pub fn want_whole(&mut self) {
        self.whole = true;
    }

    /// eSIMs the client read: merged. What changed.
    pub fn seen(&mut self, seen: &Seen) -> Merged {
        let merged = self.index.merge(seen);
        if let (Some(place), Some(asked)) = (seen.place, self.asked)
            && place.page == asked
            && self.top == Some(asked)
        {
            self.top_met_known = Some((asked, merged.known > 0));
        }
        // Any read from the very top that meets a known eSIM (the list's first page, a lookup
        // the server ignored) does what the read from the top is for: new eSIMs are all above
        // the first known one.
        let own_in_flight = self.next.is_loading() && self.asked.is_some() && self.asked == self.top;
        if seen.place.is_some_and(|p| p.first_place() == 0) && merged.known > 0 && !own_in_flight {
            self.top = None;
        }
        merged
    }

    /// The page to ask for next, if one is wanted: nothing until the index is used (a search,
    /// the attention filter, an order's eSIMs), so that no budget goes on a read nobody needs
    /// (the list's own first page may meanwhile tell that nothing is new at the top); then the
    /// read from the top, then the first page of the whole list with a place the index lacks
    /// (never one asked before).
    pub fn wanted_page(&self) -> Option<u64> {
        if !self.next.wanted() || !self.whole {
            return None;
        }
        if let Some(page) = self.top {
            return Some(page);
        }
        if self.is_complete() {
            return None;
        }
        if self.index.total().is_none() {
            return (!self.asked_before.contains(&1)).then_some(1);
        }
        let mut from = 0;
        loop {
            let gap = self.index.first_gap_from(from)?;
            let page = gap / SCAN_PAGE_SIZE + 1;
            if !self.asked_before.contains(&page) {
                return Some(page);
            }
            from = page * SCAN_PAGE_SIZE;
        }
    }

    pub(super) fn asked(&mut self, page: u64, id: JobId) {
        self.next.start(id);
        self.asked = Some(page);
        self.asked_before.insert(page);
    }

    pub(super) fn slot(&mut self) -> &mut dyn crate::kit::remote::Slot {
        &mut self.next
    }

    /// The page asked for came, its eSIMs merged already (`seen`, from the same answer); `None`
    /// if it was not the one awaited. `true` when the index has just become complete.
    pub fn page_came(&mut self, id: JobId, items: usize, total: u64, now: Instant) -> Option<bool> {
        let was_complete = self.is_complete();
        if !self.next.resolve(id, (), now) {
            return None;
        }
        self.next.invalidate();
        let pace = self.pace.get_or_insert((now, now, 0));
        (pace.1, pace.2) = (now, pace.2 + 1);
        if let (Some(page), Some(asked)) = (self.top, self.asked.take()) {
            // Its eSIMs not seen (nothing told the index of them): the top is not read on blindly.
            let met_known = match self.top_met_known.take() {
                Some((p, known)) if p == asked => known,
                _ => true,
            };
            let at_end = (items as u64) < SCAN_PAGE_SIZE || page * SCAN_PAGE_SIZE >= total;
            self.top = (!met_known && !at_end).then_some(page + 1);
        }
        Some(!was_complete && self.is_complete())
    }
}
