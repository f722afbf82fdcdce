//! A server-side paged list as the dashboard keeps it: the pages it has, the total, a cursor over
//! all items, and the pages in flight. Answers for pages no longer wanted are dropped.

use crate::tui::msg::RequestId;
use std::collections::{BTreeMap, BTreeSet};

/// How many rows may be left below the cursor on its page before the next page is fetched.
const PREFETCH_DISTANCE: u64 = 10;

#[derive(Debug, Clone)]
pub struct Paged<T> {
    pub page_size: u64,
    pages: BTreeMap<u64, Vec<T>>,
    /// Unknown until the first page arrives.
    pub total: Option<u64>,
    /// Index of the selected item among all `total`.
    pub cursor: u64,
    inflight: BTreeMap<u64, RequestId>,
    /// Pages that failed: not asked again until a reset or reload.
    given_up: BTreeSet<u64>,
}

impl<T> Paged<T> {
    pub fn new(page_size: u64) -> Self {
        Self {
            page_size: page_size.max(1),
            pages: BTreeMap::new(),
            total: None,
            cursor: 0,
            inflight: BTreeMap::new(),
            given_up: BTreeSet::new(),
        }
    }

    /// Forgets everything: the query changed, or a refresh was asked for.
    pub fn reset(&mut self) {
        self.pages.clear();
        self.inflight.clear();
        self.given_up.clear();
        self.total = None;
        self.cursor = 0;
    }

    /// Keeps the cursor and total but refetches: what `r` does.
    pub fn reload(&mut self) {
        self.pages.clear();
        self.inflight.clear();
        self.given_up.clear();
    }

    pub fn page_of(&self, index: u64) -> u64 {
        index / self.page_size + 1
    }

    pub fn current_page(&self) -> u64 {
        self.page_of(self.cursor)
    }

    pub fn page_count(&self) -> u64 {
        self.total.map_or(0, |t| t.div_ceil(self.page_size))
    }

    /// The items of the cursor's page, when loaded.
    pub fn page_items(&self) -> Option<&[T]> {
        self.pages.get(&self.current_page()).map(Vec::as_slice)
    }

    /// The cursor's position within its page.
    pub fn row_in_page(&self) -> usize {
        (self.cursor % self.page_size) as usize
    }

    /// Every item loaded so far, page after page.
    pub fn loaded(&self) -> impl Iterator<Item = &T> {
        self.pages.values().flatten()
    }

    pub fn selected(&self) -> Option<&T> {
        self.page_items()?.get(self.row_in_page())
    }

    pub fn is_loading(&self) -> bool {
        !self.inflight.is_empty()
    }

    pub fn is_inflight(&self, page: u64, id: RequestId) -> bool {
        self.inflight.get(&page) == Some(&id)
    }

    /// Moves the cursor by `delta` items, staying within the list.
    pub fn move_by(&mut self, delta: i64) {
        let last = self.total.unwrap_or(0).saturating_sub(1);
        let target = if delta < 0 {
            self.cursor.saturating_sub(delta.unsigned_abs())
        } else {
            self.cursor + delta as u64
        };
        self.cursor = target.min(last);
    }

    pub fn go_to_start(&mut self) {
        self.cursor = 0;
    }

    pub fn go_to_end(&mut self) {
        self.cursor = self.total.unwrap_or(0).saturating_sub(1);
    }

    /// Pages to fetch now: the cursor's page if missing, and the next one when the cursor is
    /// near the end of what is loaded, so that scrolling on never waits.
    pub fn wanted(&self) -> Vec<u64> {
        let mut wanted = Vec::new();
        let current = self.current_page();
        let missing =
            |p: u64| !self.pages.contains_key(&p) && !self.inflight.contains_key(&p) && !self.given_up.contains(&p);
        if missing(current) {
            wanted.push(current);
        }
        let next = current + 1;
        let end_of_page = current * self.page_size;
        let exists = self.total.is_some_and(|t| end_of_page < t);
        if exists && end_of_page - self.cursor - 1 <= PREFETCH_DISTANCE && missing(next) {
            wanted.push(next);
        }
        wanted
    }

    pub fn started(&mut self, page: u64, id: RequestId) {
        self.inflight.insert(page, id);
    }

    /// Stores an answer if it is the one awaited for that page; `false` means stale, dropped.
    pub fn accept(&mut self, page: u64, id: RequestId, items: Vec<T>, total: u64) -> bool {
        if !self.is_inflight(page, id) {
            return false;
        }
        self.inflight.remove(&page);
        if self.total != Some(total) {
            // The list changed size on the server: other pages may have shifted.
            self.pages.retain(|p, _| *p == page);
            self.total = Some(total);
        }
        self.pages.insert(page, items);
        self.cursor = self.cursor.min(total.saturating_sub(1));
        true
    }

    /// Stops asking for a page that failed, until the next reset or reload.
    pub fn give_up(&mut self, page: u64) {
        self.given_up.insert(page);
    }

    /// The request for that page failed; `false` if it was not awaited anyway.
    pub fn failed(&mut self, page: u64, id: RequestId) -> bool {
        if self.is_inflight(page, id) {
            self.inflight.remove(&page);
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fetches_the_current_page_then_prefetches_the_next_near_its_end() {
        let mut p: Paged<u32> = Paged::new(50);
        assert_eq!(p.wanted(), vec![1]);
        p.started(1, 7);
        assert_eq!(p.wanted(), Vec::<u64>::new(), "in flight: not asked twice");
        assert!(!p.accept(1, 6, vec![], 120), "a stale answer is dropped");
        assert!(p.accept(1, 7, (0..50).collect(), 120));
        assert_eq!(p.wanted(), Vec::<u64>::new());
        p.move_by(38);
        assert_eq!(p.wanted(), Vec::<u64>::new(), "eleven rows left below: not yet");
        p.move_by(1);
        assert_eq!(p.wanted(), vec![2], "ten rows left below the cursor on page 1");
        p.go_to_end();
        assert_eq!((p.cursor, p.current_page()), (119, 3));
        assert_eq!(p.wanted(), vec![3]);
        p.move_by(-1000);
        assert_eq!(p.cursor, 0);
    }

    #[test]
    fn a_changed_total_drops_other_pages() {
        let mut p: Paged<u32> = Paged::new(2);
        p.started(1, 1);
        p.accept(1, 1, vec![1, 2], 4);
        p.started(2, 2);
        p.accept(2, 2, vec![3, 4], 5);
        p.go_to_start();
        assert!(p.page_items().is_none(), "page 1 may have shifted");
    }
}
