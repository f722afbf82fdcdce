//! Finding one eSIM by ICCID in the list of a server without the lookup, and what a miss may
//! say. A page that lacks the ICCID proves nothing of the others: places shift when old
//! records are purged or new eSIMs arrive, and a saved index can be a place off. So the search
//! reads near the place first, then (where the caller allows) the rest of the list while the
//! rate budget has room, and a miss says "not in this account" only once every page of one
//! unchanged list was read (`Searched::proves_absence`): every answer's total the same, and the
//! first page read read again at the end, unchanged (`Walk::recheck`). Every page read goes
//! into the index on the way (the client's tap), so that the next look-up finds the eSIM at
//! its place.

use super::ApiError;
use super::client::Client;
use super::model::{Esim, EsimPage, Whereabouts};
use esimdash_domain::iccid::{EsimIccid, Iccid};
use esimdash_domain::text::grouped;
use std::collections::BTreeSet;
use std::time::Duration;

/// The list's page size for a search: the API's largest, the fewest requests.
const PAGE: u64 = super::pages::PAGE_SIZE;

/// How far a search may go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// The page at the eSIM's place and the pages either side: a look nobody waits long for
    /// (the dashboard's record of a result, whose background read covers the rest).
    Near,
    /// Then every other page from the top, those in `later` last and in their order (the
    /// pages an index holds whole, the one read longest ago first), each only while the rate
    /// budget has room: a search stopped by the budget and run again reads first what the
    /// last one did not.
    Whole { later: Later },
}

/// The pages a search of the whole list reads last: asked of the index only once the pages
/// near the eSIM's place are read without finding it (a find that ends there never pays for
/// the question).
#[derive(Clone)]
pub struct Later(std::sync::Arc<dyn Fn() -> Vec<u64> + Send + Sync>);

impl Later {
    /// These pages, known already.
    pub fn pages(pages: Vec<u64>) -> Self {
        Self(std::sync::Arc::new(move || pages.clone()))
    }

    /// The pages `ask` answers, when first needed.
    pub fn asked(ask: impl Fn() -> Vec<u64> + Send + Sync + 'static) -> Self {
        Self(std::sync::Arc::new(ask))
    }
}

impl std::fmt::Debug for Later {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Later(..)")
    }
}

impl PartialEq for Later {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for Later {}

/// Why a search ended before it could prove a miss.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// Only the pages near its place were to be read (`Reach::Near`).
    Near,
    /// The key's rate budget had no room left: `limit` requests a `window`.
    Budget { limit: u64, window: Duration },
    /// The server answered 429 for longer than the client waits.
    RateLimited { retry_after: Duration },
    /// The list's total changed while it was read (`from`, the first answer's; `to`, the
    /// first that differed): the pages read are of two lists, and an eSIM may have moved from
    /// a page not read yet onto one read already.
    Changed { from: u64, to: u64 },
    /// The total stayed, but `page`, the first page read, read again at the end was not the
    /// same (as when the oldest eSIM is purged and a new one ordered): every place moved.
    Moved { page: u64 },
}

/// How much a search read, and what stopped it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Searched {
    /// Distinct pages read.
    pub pages_read: u64,
    /// The list's pages by its latest total (0: no page was read, so not known).
    pub pages: u64,
    pub esims_seen: u64,
    /// `None`: every page was read and nothing stopped the search.
    pub stop: Option<Stop>,
}

impl Searched {
    /// The rule: a miss proves the account has no such eSIM only when every page of one
    /// unchanged list was read. Anything less is "not known".
    pub fn proves_absence(&self) -> bool {
        self.stop.is_none() && self.pages > 0 && self.pages_read >= self.pages
    }

    /// The miss in words, for a command's message and the dashboard alike: "no eSIM … in this
    /// account" with how much was read, or "not found in N of M pages read; …" and why.
    pub fn describe(&self, iccid: &Iccid) -> String {
        if self.proves_absence() {
            return format!(
                "no eSIM with ICCID {iccid} in this account: every page of the list read ({}, {} eSIMs)",
                counted(self.pages, "page"),
                grouped(self.esims_seen)
            );
        }
        let why = match &self.stop {
            Some(Stop::Near) if self.pages_read == 0 => "the index has no place for it".to_string(),
            Some(Stop::Near) | None => "only its place in the list and the pages either side were read".to_string(),
            Some(Stop::Budget { limit, window }) => format!(
                "the key's rate budget ({} requests {}) is spent; run it again once it has room (the pages read now are read last)",
                grouped(*limit),
                per(*window)
            ),
            Some(Stop::RateLimited { retry_after }) => {
                format!(
                    "the API refused more requests for now (retry in {} s)",
                    retry_after.as_secs().max(1)
                )
            }
            Some(Stop::Changed { from, to }) => format!(
                "the list changed while it was read ({} → {} eSIMs)",
                grouped(*from),
                grouped(*to)
            ),
            Some(Stop::Moved { page }) => format!(
                "the list changed while it was read (page {}, read first and again last, differed)",
                grouped(*page)
            ),
        };
        let pages = if self.pages == 0 {
            "?".to_string()
        } else {
            grouped(self.pages)
        };
        format!(
            "ICCID {iccid} not found in {} of {pages} pages read ({} eSIMs seen); {why}: whether this account has it is not known",
            grouped(self.pages_read),
            grouped(self.esims_seen)
        )
    }

    /// How long to wait before asking again, where the server said.
    pub fn retry_after(&self) -> Option<Duration> {
        match self.stop {
            Some(Stop::RateLimited { retry_after }) => Some(retry_after),
            _ => None,
        }
    }
}

/// "1 page", "31 pages".
fn counted(n: u64, what: &str) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("{} {what}{s}", grouped(n))
}

/// "a minute", "every 10 s".
fn per(window: Duration) -> String {
    match window.as_secs() {
        60 => "a minute".to_string(),
        s => format!("every {s} s"),
    }
}

/// What a search came to.
#[derive(Debug)]
pub enum Sweep {
    Found(Box<Esim>),
    Missed(Searched),
}

impl Client {
    /// Searches the eSIM list of a server without the lookup for `iccid`: where an index saw
    /// it (`seen`), the page at its place, then the page after and the page before, then as
    /// far as `reach` allows. `first` is page 1 when at hand (what a server that ignored the
    /// lookup sent), read before anything else. At most one request per page of the list, and
    /// for a miss over more than one page, one more: the first page read, read again with the
    /// budget's room (`Walk::recheck`).
    pub async fn sweep(
        &self,
        iccid: &Iccid,
        seen: Option<Whereabouts>,
        first: &mut Option<EsimPage>,
        reach: &Reach,
    ) -> Result<Sweep, ApiError> {
        let mut walk = Walk::new(seen);
        if let Some(page) = first.take()
            && let Some(esim) = walk.take(1, page, iccid)
        {
            return Ok(Sweep::Found(esim));
        }
        loop {
            let Some((page, near)) = walk.next(reach) else {
                return Ok(Sweep::Missed(walk.ended()));
            };
            // The pages near its place are what the user asked for and wait their turn; the
            // rest (and the re-read that proves a miss) is read only with the budget's room, so
            // a search never waits a window out: without it, the miss is "not known".
            if !near && !self.pacer().has_room(tokio::time::Instant::now()) {
                let stop = Stop::Budget {
                    limit: self.pacer().limit() as u64,
                    window: self.pacer().window(),
                };
                return Ok(Sweep::Missed(walk.stopped(stop)));
            }
            let answer = match self.inventory_page(page, &mut None).await {
                Ok(answer) => answer,
                Err(ApiError::RateLimited { retry_after, .. }) => {
                    return Ok(Sweep::Missed(walk.stopped(Stop::RateLimited { retry_after })));
                }
                Err(e) => return Err(e),
            };
            if let Some(esim) = walk.take(page, answer, iccid) {
                return Ok(Sweep::Found(esim));
            }
        }
    }
}

/// A search's progress through the list, apart from the requests (so that its order is
/// tested alone).
#[derive(Debug)]
struct Walk {
    seen: Option<Whereabouts>,
    /// Every answer's total, in the order they came (the re-read's too).
    totals: Vec<u64>,
    /// The list's total in the latest answer.
    total: Option<u64>,
    /// The first page read and its ICCIDs in order; whether it was the same when read again.
    first_read: Option<(u64, Vec<EsimIccid>)>,
    same_again: Option<bool>,
    read: BTreeSet<u64>,
    esims_seen: u64,
    /// The pages `Reach::Whole` reads last, in their order and as a set; asked when first
    /// needed.
    later: std::cell::OnceCell<(Vec<u64>, BTreeSet<u64>)>,
    /// Every page before this one is read or left for later: the next page of a whole search
    /// is looked for from here (a search of 10 000 pages stays linear).
    sooner_from: std::cell::Cell<u64>,
}

impl Walk {
    fn new(seen: Option<Whereabouts>) -> Self {
        Self {
            seen,
            totals: Vec::new(),
            total: None,
            first_read: None,
            same_again: None,
            read: BTreeSet::new(),
            esims_seen: 0,
            later: std::cell::OnceCell::new(),
            sooner_from: std::cell::Cell::new(1),
        }
    }

    /// The list's pages by its latest total (at least one: an empty list has an empty page).
    fn pages(&self) -> Option<u64> {
        self.total.map(|t| t.div_ceil(PAGE).max(1))
    }

    /// The pages near the eSIM's place, in the order they are read: its page by the list's
    /// total now and by the total it was seen with (the first is right when new eSIMs came,
    /// the second when old ones were purged), then the page after and the page before each.
    /// After first: a purge of old eSIMs leaves an eSIM one place further down than its
    /// place counted from the oldest says.
    fn near(&self) -> Vec<u64> {
        let Some(seen) = self.seen else {
            return Vec::new();
        };
        let mut pages = Vec::new();
        for total in [self.total, Some(seen.total)].into_iter().flatten() {
            if let Some(place) = seen.place_in(total) {
                add_new(&mut pages, place / PAGE + 1);
            }
        }
        for anchor in pages.clone() {
            add_new(&mut pages, anchor + 1);
            if anchor > 1 {
                add_new(&mut pages, anchor - 1);
            }
        }
        pages
    }

    /// The next page to read and whether it is near the place; `None` when `reach` allows no
    /// other. Once every page is read, the re-read that proves a miss (`recheck`).
    fn next(&self, reach: &Reach) -> Option<(u64, bool)> {
        let unread = |p: &u64| self.pages().is_none_or(|n| *p <= n) && !self.read.contains(p);
        if let Some(page) = self.near().into_iter().find(unread) {
            return Some((page, true));
        }
        if let Some(page) = self.recheck() {
            return Some((page, false));
        }
        let Reach::Whole { later } = reach else {
            return None;
        };
        let (later, held) = self.later.get_or_init(|| {
            let pages = (later.0)();
            let set = pages.iter().copied().collect();
            (pages, set)
        });
        // With no answer yet, page 1 tells the total.
        let pages = self.pages().unwrap_or(1);
        let mut from = self.sooner_from.get();
        while from <= pages && (held.contains(&from) || self.read.contains(&from)) {
            from += 1;
        }
        self.sooner_from.set(from);
        (from..=pages)
            .filter(|p| !held.contains(p))
            .chain(later.iter().copied())
            .find(unread)
            .map(|page| (page, false))
    }

    /// Whether every page is read: of the latest total, at least one.
    fn every_page_read(&self) -> bool {
        self.pages()
            .is_some_and(|pages| (1..=pages).all(|p| self.read.contains(&p)))
    }

    /// The total of the first answer and the first that differed from it, if one did.
    fn changed(&self) -> Option<(u64, u64)> {
        let from = *self.totals.first()?;
        self.totals.iter().find(|&&t| t != from).map(|&to| (from, to))
    }

    /// The page to read again before a miss is proven: the first page read, once every page is
    /// read with the same total, if more than one answer came and it was not read again yet.
    ///
    /// Equal totals alone prove nothing: one eSIM purged and one ordered between two answers
    /// keep the total and move every place down one, and as the pages are not read in order
    /// (the place first), an eSIM can move from a page not read yet onto one read already.
    /// The list is newest first, new eSIMs come at the top and old ones are purged from the
    /// bottom, so any eSIM ordered after the first answer pushes every eSIM below it down:
    /// the first page read, read again with the same ICCIDs in the same order, shows that none
    /// came (one still in the list would have pushed them); with none come, a purge lowers
    /// the total, which every answer had the same. So the list was the same at every answer.
    /// (Where the first page read is page 1, the lookup's answer, as for a command, an eSIM
    /// removed from anywhere is caught too: a new one to make up for it shows on page 1.)
    /// One request, the cheapest check that is sound: comparing the ICCIDs either side of
    /// adjacent pages costs none, but pages do not overlap, so a move down between reading page
    /// k + 1 and then page k skips the eSIM last on page k and leaves no trace.
    /// One answer is one list at one moment: nothing to read again.
    fn recheck(&self) -> Option<u64> {
        let (page, _) = self.first_read.as_ref()?;
        let due =
            self.same_again.is_none() && self.totals.len() > 1 && self.changed().is_none() && self.every_page_read();
        due.then_some(*page)
    }

    /// Takes in the answer for `page`; the eSIM, if it is on it.
    fn take(&mut self, page: u64, answer: EsimPage, iccid: &Iccid) -> Option<Box<Esim>> {
        let iccids = || -> Vec<EsimIccid> { answer.esims.iter().map(|e| e.raw_order_json.iccid.clone()).collect() };
        if self.first_read.is_none() {
            self.first_read = Some((page, iccids()));
        } else if self.recheck() == Some(page) {
            self.same_again = self.first_read.as_ref().map(|(_, before)| *before == iccids());
        }
        self.totals.push(answer.total);
        self.total = Some(answer.total);
        if self.read.insert(page) {
            self.esims_seen += answer.esims.len() as u64;
        }
        answer
            .esims
            .into_iter()
            .find(|e| e.raw_order_json.iccid.as_str() == iccid.as_str())
            .map(Box::new)
    }

    /// What was read, stopped by `stop`.
    fn stopped(&self, stop: Stop) -> Searched {
        Searched {
            pages_read: self.read.len() as u64,
            pages: self.pages().unwrap_or(0),
            esims_seen: self.esims_seen,
            stop: Some(stop),
        }
    }

    /// What was read once no page was left to read: every page of one unchanged list (every
    /// total the same, the first page read the same when read again), or only those near the
    /// place, or pages of a list that changed.
    fn ended(&self) -> Searched {
        let pages = self.pages().unwrap_or(0);
        let stop = if !self.every_page_read() {
            Some(Stop::Near)
        } else if let Some((from, to)) = self.changed() {
            Some(Stop::Changed { from, to })
        } else if self.totals.len() > 1 && self.same_again != Some(true) {
            // Not read again (`next` asks for it, so only when it differed) proves nothing.
            let page = self.first_read.as_ref().map_or(1, |(page, _)| *page);
            Some(Stop::Moved { page })
        } else {
            None
        };
        Searched {
            pages_read: self.read.len() as u64,
            pages,
            esims_seen: self.esims_seen,
            stop,
        }
    }
}

fn add_new(pages: &mut Vec<u64>, page: u64) {
    if !pages.contains(&page) {
        pages.push(page);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn walk(from_end: u64, seen_total: u64, total_now: Option<u64>) -> Walk {
        walk_to(from_end, seen_total, total_now)
    }

    fn walk_to(from_end: u64, seen_total: u64, total_now: Option<u64>) -> Walk {
        let seen = Whereabouts {
            from_end,
            total: seen_total,
        };
        let mut walk = Walk::new(Some(seen));
        walk.total = total_now;
        walk
    }

    #[test]
    fn near_its_place_first_then_the_page_after_then_before() {
        // Seen at place 250 of 1 000 (page 3), the list unchanged.
        assert_eq!(walk(749, 1_000, Some(1_000)).near(), vec![3, 4, 2]);
        // Seen first on page 4 (place 300); the oldest eSIM purged since. Counted from the
        // oldest it seems at place 299 (page 3); the total it was seen with names its page.
        assert_eq!(walk(699, 1_000, Some(999)).near(), vec![3, 4, 2, 5]);
        // Once the index counts from the new total, the page after is read second.
        assert_eq!(walk(699, 999, Some(999)).near(), vec![3, 4, 2]);
        // 50 new eSIMs pushed it to place 300 (page 4); the page it was seen on comes next.
        assert_eq!(walk(749, 1_000, Some(1_050)).near(), vec![4, 3, 5, 2]);
        assert_eq!(walk(0, 1, None).near(), vec![1, 2]);
    }

    #[test]
    fn near_reads_at_most_the_three_pages_around_the_place_and_proves_nothing() {
        let mut walk = walk(749, 1_000, Some(1_000));
        let mut read = Vec::new();
        while let Some((page, near)) = walk.next(&Reach::Near) {
            assert!(near);
            read.push(page);
            walk.read.insert(page);
        }
        assert_eq!(read, vec![3, 4, 2]);
        let searched = walk.ended();
        assert!(!searched.proves_absence());
        assert_eq!(searched.stop, Some(Stop::Near));
        assert!(searched.describe(&absent()).contains("not found in 3 of 10 pages read"));
    }

    /// A server's eSIM list, newest first, 100 a page.
    struct List(Vec<String>);

    impl List {
        fn of(n: u64) -> Self {
            List((0..n).rev().map(|i| with_check(&format!("8944{i:014}"))).collect())
        }

        fn page(&self, page: u64) -> EsimPage {
            let esims = self
                .0
                .iter()
                .skip(((page - 1) * PAGE) as usize)
                .take(PAGE as usize)
                .map(|iccid| serde_json::from_value(serde_json::json!({ "rawOrderJson": { "iccid": iccid } })).unwrap())
                .collect();
            EsimPage {
                total: self.0.len() as u64,
                page,
                page_size: PAGE,
                esims,
            }
        }

        /// A new order's eSIM, at the top; the oldest purged, from the bottom.
        fn order(&mut self, iccid: &str) {
            self.0.insert(0, iccid.to_string());
        }

        fn purge_oldest(&mut self) {
            self.0.pop();
        }
    }

    /// Searches `list` for `iccid` as `Client::sweep` does (with room in the budget), the list
    /// changed by `change` with the number of answers so far before each answer: the pages read
    /// in order and whether it was found.
    fn search(
        walk: &mut Walk,
        reach: &Reach,
        list: &mut List,
        iccid: &Iccid,
        mut change: impl FnMut(usize, &mut List),
    ) -> (Vec<u64>, bool) {
        let mut read = Vec::new();
        while let Some((page, _)) = walk.next(reach) {
            change(read.len(), list);
            read.push(page);
            if walk.take(page, list.page(page), iccid).is_some() {
                return (read, true);
            }
        }
        (read, false)
    }

    /// An ICCID no list of the tests holds.
    fn absent() -> Iccid {
        Iccid::parse(&with_check("894499999999999999")).unwrap()
    }

    /// A valid ICCID of these digits and its check digit.
    fn with_check(payload: &str) -> String {
        format!("{payload}{}", esimdash_domain::iccid::luhn_check_digit(payload))
    }

    #[test]
    fn whole_reads_every_page_once_those_held_whole_last_then_the_first_again_and_proves_a_miss() {
        let reach = Reach::Whole {
            later: Later::pages(vec![9, 3, 7]),
        };
        let mut walk = walk_to(749, 1_000, None);
        let mut list = List::of(1_000);
        let (read, found) = search(&mut walk, &reach, &mut list, &absent(), |_, _| {});
        assert!(!found);
        // The first page read is read again last, with the budget's room (not near).
        assert_eq!(read, vec![3, 4, 2, 1, 5, 6, 8, 10, 9, 7, 3]);
        assert_eq!(walk.next(&reach), None);
        let searched = walk.ended();
        assert!(searched.proves_absence(), "{searched:?}");
        assert_eq!((searched.pages_read, searched.esims_seen), (10, 1_000));
        assert!(
            searched
                .describe(&absent())
                .starts_with(&format!("no eSIM with ICCID {} in this account", absent()))
        );
    }

    #[test]
    fn the_re_read_is_not_near_so_it_waits_for_the_budget_and_one_answer_needs_none() {
        let reach = Reach::Whole {
            later: Later::pages(vec![]),
        };
        let mut walk = Walk::new(None);
        let list = List::of(250);
        for page in 1..=3 {
            assert_eq!(walk.next(&reach), Some((page, false)));
            assert!(walk.take(page, list.page(page), &absent()).is_none());
        }
        assert_eq!(walk.next(&reach), Some((1, false)));
        // Stopped there (the budget spent), the miss is not known.
        assert!(!walk.ended().proves_absence());

        // A list of one page, one answer: one list at one moment.
        let mut walk = Walk::new(None);
        let (read, _) = search(&mut walk, &reach, &mut List::of(40), &absent(), |_, _| {});
        assert_eq!(read, vec![1]);
        assert!(walk.ended().proves_absence());
    }

    /// The reviewer's (a): a total that goes 1 000 → 1 001 → 1 000 during the search, which
    /// the first and the last answer alone would pass.
    #[test]
    fn a_total_that_changed_and_changed_back_proves_nothing() {
        let reach = Reach::Whole {
            later: Later::pages(vec![]),
        };
        let mut walk = Walk::new(None);
        let mut list = List::of(1_000);
        let (read, found) = search(&mut walk, &reach, &mut list, &absent(), |answers, list| match answers {
            2 => list.order(&with_check("894488888888888888")),
            6 => list.purge_oldest(),
            _ => {}
        });
        assert!(!found);
        assert_eq!(
            read,
            (1..=10).collect::<Vec<u64>>(),
            "no re-read for a list known changed"
        );
        assert_eq!((walk.totals[0], walk.totals[9]), (1_000, 1_000));
        let searched = walk.ended();
        assert_eq!(searched.stop, Some(Stop::Changed { from: 1_000, to: 1_001 }));
        assert!(!searched.proves_absence());
        let said = searched.describe(&absent());
        assert!(
            said.contains(
                "the list changed while it was read (1 000 → 1 001 eSIMs): whether this account has it is not known"
            ),
            "{said}"
        );
    }

    /// The reviewer's (b): the oldest eSIM purged and one ordered after page 3 is read keep the
    /// total, and move the eSIM last on page 2 (read last: the index holds it whole) onto page
    /// 3, read already. Every page read, every total 1 000, the eSIM never seen: page 1, the
    /// lookup's answer, read again shows the new eSIM, and the miss is not known.
    #[test]
    fn a_purge_and_a_new_order_that_keep_the_total_but_move_the_esim_prove_nothing() {
        let reach = Reach::Whole {
            later: Later::pages(vec![2]),
        };
        let mut list = List::of(1_000);
        let there = Iccid::parse(&list.0[199]).unwrap();
        let mut walk = Walk::new(None);
        let (read, found) = search(&mut walk, &reach, &mut list, &there, |answers, list| {
            if answers == 2 {
                list.purge_oldest();
                list.order(&with_check("894488888888888888"));
            }
        });
        assert!(!found, "{read:?}");
        assert_eq!(read, vec![1, 3, 4, 5, 6, 7, 8, 9, 10, 2, 1]);
        assert!(walk.totals.iter().all(|&t| t == 1_000));
        assert_eq!(list.0[200], there.as_str(), "the server has it, on page 3");
        let searched = walk.ended();
        assert_eq!(searched.stop, Some(Stop::Moved { page: 1 }));
        assert!(!searched.proves_absence());
        let said = searched.describe(&there);
        assert!(
            said.contains("not found in 10 of 10 pages read (1 000 eSIMs seen); the list changed while it was read"),
            "{said}"
        );
        assert!(said.ends_with("whether this account has it is not known"), "{said}");

        // Unchanged, the same search finds it where it is.
        let mut walk = Walk::new(None);
        let (read, found) = search(&mut walk, &reach, &mut List::of(1_000), &there, |_, _| {});
        assert!(found);
        assert_eq!(read, vec![1, 3, 4, 5, 6, 7, 8, 9, 10, 2]);
    }

    #[test]
    fn a_list_that_changed_while_read_proves_nothing() {
        let mut walk = Walk::new(None);
        walk.totals = vec![150, 151];
        walk.total = Some(151);
        walk.read.extend([1, 2]);
        let searched = walk.ended();
        assert_eq!(searched.stop, Some(Stop::Changed { from: 150, to: 151 }));
        assert!(!searched.proves_absence());
        assert!(
            searched
                .describe(&absent())
                .contains("the list changed while it was read (150 → 151 eSIMs)")
        );
    }

    #[test]
    fn a_stop_for_the_budget_says_how_far_it_came() {
        let searched = Searched {
            pages_read: 119,
            pages: 1_001,
            esims_seen: 11_900,
            stop: Some(Stop::Budget {
                limit: 120,
                window: Duration::from_secs(60),
            }),
        };
        assert!(!searched.proves_absence());
        let said = searched.describe(&absent());
        assert!(
            said.starts_with(&format!("ICCID {} not found", absent()))
                && said.contains(" not found in 119 of 1 001 pages read (11 900 eSIMs seen); the key's rate budget (120 requests a minute) is spent"),
            "{said}"
        );
    }
}
