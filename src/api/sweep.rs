//! Finding one eSIM by ICCID in the list of a server without the lookup, and what a miss may
//! say. A page that lacks the ICCID proves nothing of the others: places shift when old
//! records are purged or new eSIMs arrive, and a saved index can be a place off. So the search
//! reads near the place first, then (where the caller allows) the rest of the list while the
//! rate budget has room, and a miss says "not in this account" only once every page of one
//! unchanged list was read (`Searched::proves_absence`). Every page read goes into the index on
//! the way (the client's tap), so that the next look-up finds the eSIM at its place.

use super::ApiError;
use super::client::Client;
use super::model::{Esim, EsimPage, Whereabouts};
use crate::text::grouped;
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
    Whole { later: Vec<u64> },
}

/// Why a search ended before it could prove a miss.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// Only the pages near its place were to be read (`Reach::Near`).
    Near,
    /// The key's rate budget had no room left: `limit` requests a `window`.
    Budget { limit: u64, window: Duration },
    /// The server answered 429 for longer than the client waits.
    RateLimited { retry_after: Duration },
    /// The list's total changed while it was read: the pages read are of two lists, and an
    /// eSIM may have moved from a page not read yet onto one read already.
    Changed { from: u64, to: u64 },
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
    pub fn describe(&self, iccid: &str) -> String {
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
    /// lookup sent), read before anything else. At most one request per page of the list.
    pub async fn sweep(
        &self,
        iccid: &str,
        seen: Option<Whereabouts>,
        first: &mut Option<EsimPage>,
        reach: &Reach,
    ) -> Result<Sweep, ApiError> {
        let mut walk = Walk::new(seen, reach);
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
            // rest is read only with the budget's room, so a search never waits a window out.
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
    /// The list's total in the first answer, and in the latest.
    first_total: Option<u64>,
    total: Option<u64>,
    read: BTreeSet<u64>,
    esims_seen: u64,
    /// The pages `Reach::Whole` reads last.
    later: BTreeSet<u64>,
}

impl Walk {
    fn new(seen: Option<Whereabouts>, reach: &Reach) -> Self {
        let later = match reach {
            Reach::Whole { later } => later.iter().copied().collect(),
            Reach::Near => BTreeSet::new(),
        };
        Self {
            seen,
            first_total: None,
            total: None,
            read: BTreeSet::new(),
            esims_seen: 0,
            later,
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
    /// other.
    fn next(&self, reach: &Reach) -> Option<(u64, bool)> {
        let unread = |p: &u64| self.pages().is_none_or(|n| *p <= n) && !self.read.contains(p);
        if let Some(page) = self.near().into_iter().find(unread) {
            return Some((page, true));
        }
        let Reach::Whole { later } = reach else {
            return None;
        };
        // With no answer yet, page 1 tells the total.
        let pages = self.pages().unwrap_or(1);
        let sooner = (1..=pages).filter(|p| !self.later.contains(p));
        sooner
            .chain(later.iter().copied())
            .find(unread)
            .map(|page| (page, false))
    }

    /// Takes in the answer for `page`; the eSIM, if it is on it.
    fn take(&mut self, page: u64, answer: EsimPage, iccid: &str) -> Option<Box<Esim>> {
        self.first_total.get_or_insert(answer.total);
        self.total = Some(answer.total);
        if self.read.insert(page) {
            self.esims_seen += answer.esims.len() as u64;
        }
        answer
            .esims
            .into_iter()
            .find(|e| e.raw_order_json.iccid == iccid)
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

    /// What was read once no page was left to read: every page (unless the list changed
    /// meanwhile), or only those near the place.
    fn ended(&self) -> Searched {
        let pages = self.pages().unwrap_or(0);
        let every = pages > 0 && (1..=pages).all(|p| self.read.contains(&p));
        let stop = match (self.first_total, self.total) {
            _ if !every => Some(Stop::Near),
            (Some(from), Some(to)) if from != to => Some(Stop::Changed { from, to }),
            _ => None,
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
        walk_to(from_end, seen_total, total_now, &Reach::Near)
    }

    fn walk_to(from_end: u64, seen_total: u64, total_now: Option<u64>, reach: &Reach) -> Walk {
        let seen = Whereabouts {
            from_end,
            total: seen_total,
        };
        let mut walk = Walk::new(Some(seen), reach);
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
        assert!(searched.describe("89").contains("not found in 3 of 10 pages read"));
    }

    #[test]
    fn whole_reads_every_page_once_those_held_whole_last_and_then_proves_a_miss() {
        let reach = Reach::Whole { later: vec![9, 3, 7] };
        let mut walk = walk_to(749, 1_000, Some(1_000), &reach);
        let mut read = Vec::new();
        while let Some((page, _)) = walk.next(&reach) {
            read.push(page);
            walk.read.insert(page);
            walk.first_total.get_or_insert(1_000);
        }
        assert_eq!(read, vec![3, 4, 2, 1, 5, 6, 8, 10, 9, 7]);
        let searched = walk.ended();
        assert!(searched.proves_absence());
        assert!(
            searched
                .describe("89")
                .starts_with("no eSIM with ICCID 89 in this account")
        );
    }

    #[test]
    fn a_list_that_changed_while_read_proves_nothing() {
        let mut walk = Walk::new(None, &Reach::Near);
        walk.first_total = Some(150);
        walk.total = Some(151);
        walk.read.extend([1, 2]);
        let searched = walk.ended();
        assert_eq!(searched.stop, Some(Stop::Changed { from: 150, to: 151 }));
        assert!(!searched.proves_absence());
        assert!(
            searched
                .describe("89")
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
        let said = searched.describe("8944");
        assert!(
            said.starts_with("ICCID 8944 not found in 119 of 1 001 pages read (11 900 eSIMs seen); the key's rate budget (120 requests a minute) is spent"),
            "{said}"
        );
    }
}
