//! A server-side paged list as the dashboard keeps it: each page as a `Remote`, the total, and a
//! cursor over all items. Paging quickly asks only for the page the user stops on: moving to
//! another page while a page is still loading holds requests until the keys pause for
//! `PAGE_PAUSE` (and the request no longer wanted is cancelled meanwhile).

use super::remote::{Remote, Slot};
use crate::msg::JobId;
use esimdash_api::ApiError;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// How many rows may be left below the cursor on its page before the next page is fetched.
const PREFETCH_DISTANCE: u64 = 10;
/// How long paging must pause before a held page is asked for.
pub const PAGE_PAUSE: Duration = Duration::from_millis(150);

#[derive(Debug, Clone)]
pub struct Paged<T> {
    page_size: u64,
    pages: BTreeMap<u64, Remote<Vec<T>>>,
    /// Unknown until the first page arrives.
    total: Option<u64>,
    /// Index of the selected item among all `total`.
    cursor: u64,
    hold_until: Option<Instant>,
}

impl<T> Paged<T> {
    pub fn new(page_size: u64) -> Self {
        Self {
            page_size: page_size.max(1),
            pages: BTreeMap::new(),
            total: None,
            cursor: 0,
            hold_until: None,
        }
    }

    pub fn page_size(&self) -> u64 {
        self.page_size
    }

    pub fn total(&self) -> Option<u64> {
        self.total
    }

    pub fn cursor(&self) -> u64 {
        self.cursor
    }

    /// Forgets everything: the query changed. Requests in flight are no longer awaited.
    pub fn reset(&mut self) {
        self.pages.clear();
        self.total = None;
        self.cursor = 0;
        self.hold_until = None;
    }

    /// Fetches every page again, keeping what is shown (as stale) until the answers come: `r`.
    pub fn reload(&mut self) {
        self.pages.values_mut().for_each(Remote::invalidate);
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

    /// The state of the cursor's page (`None`: never asked).
    pub fn current(&self) -> Option<&Remote<Vec<T>>> {
        self.pages.get(&self.current_page())
    }

    /// The items of the cursor's page, when loaded (or loaded before a reload).
    pub fn page_items(&self) -> Option<&[T]> {
        self.current()?.value().map(Vec::as_slice)
    }

    /// The cursor's position within its page.
    pub fn row_in_page(&self) -> usize {
        (self.cursor % self.page_size) as usize
    }

    /// Every item loaded so far, page after page.
    pub fn loaded(&self) -> impl Iterator<Item = &T> {
        self.pages.values().filter_map(Remote::value).flatten()
    }

    /// The index among all `total` of the first loaded item that `is` picks.
    pub fn index_of(&self, is: impl Fn(&T) -> bool) -> Option<u64> {
        self.pages.iter().find_map(|(page, remote)| {
            let row = remote.value()?.iter().position(&is)?;
            Some((page - 1) * self.page_size + row as u64)
        })
    }

    pub fn selected(&self) -> Option<&T> {
        self.page_items()?.get(self.row_in_page())
    }

    pub fn is_loading(&self) -> bool {
        self.pages.values().any(Remote::is_loading)
    }

    /// Whether page `page` is being asked for now.
    pub fn is_loading_page(&self, page: u64) -> bool {
        self.pages.get(&page).is_some_and(Remote::is_loading)
    }

    /// Why the cursor's page failed, if it did (for the title).
    pub fn error(&self) -> Option<&ApiError> {
        self.current().and_then(Remote::error)
    }

    /// When held page requests may go.
    pub fn hold_until(&self) -> Option<Instant> {
        self.hold_until
    }

    /// Moves the cursor by `delta` items, staying within the list.
    pub fn move_by(&mut self, delta: i64, now: Instant) {
        let last = self.total.unwrap_or(0).saturating_sub(1);
        let target = if delta < 0 {
            self.cursor.saturating_sub(delta.unsigned_abs())
        } else {
            self.cursor.saturating_add(delta as u64)
        };
        self.go_to(target.min(last), now);
    }

    pub fn go_to_start(&mut self, now: Instant) {
        self.go_to(0, now);
    }

    pub fn go_to_end(&mut self, now: Instant) {
        self.go_to(self.total.unwrap_or(0).saturating_sub(1), now);
    }

    /// Sends the cursor to an item by its place in the whole list (a found eSIM's row).
    pub fn go_to_index(&mut self, index: u64, now: Instant) {
        let last = self.total.map_or(index, |t| t.saturating_sub(1));
        self.go_to(index.min(last), now);
    }

    /// Puts the cursor on a row of its current page.
    pub fn select_row(&mut self, row: usize) {
        let start = (self.current_page() - 1) * self.page_size;
        self.cursor = start + row as u64;
    }

    fn go_to(&mut self, index: u64, now: Instant) {
        let page = self.page_of(index);
        let held = self.hold_until.is_some_and(|until| now < until);
        if page != self.current_page() && (self.is_loading() || held) {
            self.hold_until = Some(now + PAGE_PAUSE);
        }
        self.cursor = index;
    }

    /// Pages to fetch now: the cursor's page if missing, and the next one when the cursor is
    /// near the end of what is loaded, so that scrolling on never waits. None while held.
    pub fn wanted(&mut self, now: Instant) -> Vec<u64> {
        if let Some(until) = self.hold_until {
            if now < until {
                return Vec::new();
            }
            self.hold_until = None;
        }
        let mut wanted = Vec::new();
        let current = self.current_page();
        let missing = |p: u64| self.pages.get(&p).is_none_or(Remote::wanted);
        if missing(current) {
            wanted.push(current);
        }
        let next = current + 1;
        let end_of_page = current * self.page_size;
        let exists = self.total.is_some_and(|t| end_of_page < t);
        if exists && end_of_page - self.cursor - 1 <= PREFETCH_DISTANCE && missing(next) {
            wanted.push(next);
        }
        let short = self
            .page_items()
            .is_some_and(|items| (items.len() as u64) < self.page_size);
        if let Some(before) = self.before_last().filter(|_| short)
            && missing(before)
        {
            wanted.push(before);
        }
        wanted
    }

    /// The page before the cursor's when the cursor's is the last: its rows fill the view above
    /// a last page too short to fill it (`G` ends on a full view).
    fn before_last(&self) -> Option<u64> {
        let current = self.current_page();
        (current > 1 && current == self.page_count()).then(|| current - 1)
    }

    /// The items of the page before the cursor's, when the cursor's is the last page and that
    /// one is loaded.
    pub fn page_before_last(&self) -> Option<&[T]> {
        let page = self.pages.get(&self.before_last()?)?;
        page.value().map(Vec::as_slice)
    }

    /// Whether a page's answer is still of use: the cursor's page, the one after it, or the one
    /// before the last page (a page the cursor has moved away from is cancelled if it is still
    /// loading).
    pub fn is_near(&self, page: u64) -> bool {
        let current = self.current_page();
        page == current || page == current + 1 || Some(page) == self.before_last()
    }

    pub fn start(&mut self, page: u64, id: JobId) {
        self.pages.entry(page).or_default().start(id);
    }

    /// Where the answer for `page` goes.
    pub fn slot(&mut self, page: u64) -> Option<&mut dyn Slot> {
        self.pages.get_mut(&page).map(|r| r as &mut dyn Slot)
    }

    /// Stores an answer if it is the one awaited for that page; `false` means stale, dropped.
    pub fn accept(&mut self, page: u64, id: JobId, items: Vec<T>, total: u64, now: Instant) -> bool {
        let Some(slot) = self.pages.get_mut(&page) else {
            return false;
        };
        if !slot.resolve(id, items, now) {
            return false;
        }
        if self.total != Some(total) {
            // The list changed size on the server: other pages may have shifted.
            self.pages.retain(|p, _| *p == page);
            self.total = Some(total);
        }
        self.cursor = self.cursor.min(total.saturating_sub(1));
        true
    }

    /// The request for that page failed: the page shows why, and is not asked again until `r`.
    pub fn fail(&mut self, page: u64, id: JobId, error: ApiError, now: Instant) -> bool {
        self.pages.get_mut(&page).is_some_and(|slot| slot.fail(id, error, now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pages of 50, the first read, of a list of `total`.
    fn first_page_of(total: u64, t: Instant) -> Paged<u32> {
        let mut p = Paged::new(50);
        p.start(1, 1);
        p.accept(1, 1, (0..50).collect(), total, t);
        p
    }

    #[test]
    fn fetches_the_current_page_then_prefetches_the_next_near_its_end() {
        let t = Instant::now();
        let mut p: Paged<u32> = Paged::new(50);
        assert_eq!(p.wanted(t), vec![1]);
        p.start(1, 7);
        assert_eq!(p.wanted(t), Vec::<u64>::new(), "in flight: not asked twice");
        assert!(!p.accept(1, 6, vec![], 120, t), "a stale answer is dropped");
        assert!(p.accept(1, 7, (0..50).collect(), 120, t));
        assert_eq!(p.wanted(t), Vec::<u64>::new());
        let later = t + PAGE_PAUSE;
        p.move_by(38, later);
        assert_eq!(p.wanted(later), Vec::<u64>::new(), "eleven rows left below: not yet");
        p.move_by(1, later);
        assert_eq!(p.wanted(later), vec![2], "ten rows left below the cursor on page 1");
        p.go_to_end(later);
        assert_eq!((p.cursor, p.current_page()), (119, 3));
        assert_eq!(p.wanted(later), vec![3]);
        p.move_by(-1000, later);
        assert_eq!(p.cursor, 0);
    }

    #[test]
    fn quick_paging_waits_for_the_pause_and_asks_for_the_last_page_only() {
        let t = Instant::now();
        let mut p = first_page_of(5000, t);
        for i in 0..10 {
            let at = t + Duration::from_millis(i);
            p.move_by(50, at);
            for page in p.wanted(at) {
                p.start(page, 100 + i);
            }
        }
        let asked: Vec<u64> = p
            .pages
            .iter()
            .filter(|(_, r)| r.is_loading())
            .map(|(n, _)| *n)
            .collect();
        assert_eq!(
            asked,
            vec![2],
            "only the first page moved to went before the keys came quickly"
        );
        let after = p.hold_until().unwrap();
        assert_eq!(p.wanted(after - Duration::from_millis(1)), Vec::<u64>::new());
        assert_eq!(p.wanted(after), vec![11]);
    }

    #[test]
    fn a_short_last_page_asks_for_the_page_before_it() {
        let t = Instant::now();
        let mut p = first_page_of(204, t);
        p.go_to_end(t + PAGE_PAUSE);
        assert_eq!(p.wanted(t + PAGE_PAUSE), vec![5]);
        p.start(5, 2);
        assert!(p.is_near(4), "the page before the last is of use there");
        p.accept(5, 2, (200..204).collect(), 204, t);
        assert_eq!(p.wanted(t + PAGE_PAUSE), vec![4], "four rows cannot fill a view");
        assert!(p.page_before_last().is_none());
        p.start(4, 3);
        p.accept(4, 3, (150..200).collect(), 204, t);
        assert_eq!(p.page_before_last().map(<[u32]>::len), Some(50));
        p.go_to_start(t + PAGE_PAUSE);
        assert!(!p.is_near(4) && p.page_before_last().is_none());
    }

    #[test]
    fn a_changed_total_drops_other_pages() {
        let t = Instant::now();
        let mut p: Paged<u32> = Paged::new(2);
        p.start(1, 1);
        p.accept(1, 1, vec![1, 2], 4, t);
        p.start(2, 2);
        p.accept(2, 2, vec![3, 4], 5, t);
        p.go_to_start(t);
        assert!(p.page_items().is_none(), "page 1 may have shifted");
    }
}
