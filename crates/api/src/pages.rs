//! A whole list read page after page, in order (paced by the client), with how far the read has
//! come. Used by the one-shot commands' `--all` and by the dashboard's exports.

use super::model::{Esim, EsimQuery, Order, OrderQuery};
use super::{ApiError, Client};
use std::collections::{HashSet, VecDeque};

/// How far a read of every page has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Progress {
    pub pages_read: u64,
    /// The number of pages, from the last answer's total.
    pub pages: u64,
    pub items: u64,
    pub total: u64,
}

impl Progress {
    /// "page 3 of 40 (300 of 3 960)".
    pub fn describe(&self) -> String {
        format!(
            "page {} of {} ({} of {})",
            self.pages_read, self.pages, self.items, self.total
        )
    }
}

/// A list that can be read page by page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Listing {
    Orders(OrderQuery),
    Esims(EsimQuery),
}

/// The API's largest page: the fewest requests for a whole list.
pub const PAGE_SIZE: u64 = 100;

/// One page of either list.
pub enum Page {
    Orders(Vec<Order>),
    Esims(Vec<Esim>),
}

impl Page {
    fn len(&self) -> usize {
        match self {
            Page::Orders(o) => o.len(),
            Page::Esims(e) => e.len(),
        }
    }

    /// Drops the items an earlier page had: a list that grows while it is read (newest first)
    /// pushes items onto the next page, where they would come twice.
    fn drop_seen(&mut self, seen: &mut Seen) {
        match self {
            // A top-up and its order share the number only with an ICCID apart.
            Page::Orders(o) => o.retain(|o| seen.first(format!("{}\n{}", o.record.provider_order_no, o.iccid))),
            // By profile: a reissued ICCID has an old and a current one, both kept.
            Page::Esims(e) => e.retain(|e| {
                let raw = &e.raw_order_json;
                seen.first(format!("{}\n{}", raw.iccid.as_str(), raw.esim_tran_no))
            }),
        }
        seen.page_done();
    }
}

/// The items of the last `SEEN_PAGES` pages read. An item is pushed as many places down as
/// items were added between two page reads, so only the recent pages can hold it again; the
/// keys of every page would grow with the list (some 100 bytes an item: 100 MB for a million,
/// held by a read that otherwise writes each page out and drops it).
#[derive(Default)]
struct Seen {
    keys: HashSet<String>,
    pages: VecDeque<Vec<String>>,
    this_page: Vec<String>,
}

/// 10 000 items at the largest page: more than are ever added between two page reads.
const SEEN_PAGES: usize = 100;

impl Seen {
    /// Whether `key` is new, noting it.
    fn first(&mut self, key: String) -> bool {
        let new = self.keys.insert(key.clone());
        if new {
            self.this_page.push(key);
        }
        new
    }

    fn page_done(&mut self) {
        self.pages.push_back(std::mem::take(&mut self.this_page));
        if self.pages.len() > SEEN_PAGES {
            for key in self.pages.pop_front().unwrap_or_default() {
                self.keys.remove(&key);
            }
        }
    }
}

impl Listing {
    /// The status this list is filtered by.
    pub fn status(&self) -> &esimdash_domain::status::StatusFilter {
        match self {
            Listing::Orders(q) => &q.status,
            Listing::Esims(q) => &q.status,
        }
    }

    /// This list's query for page `page`, of the largest size.
    fn at(&self, page: u64) -> Listing {
        let mut at = self.clone();
        let (number, size) = match &mut at {
            Listing::Orders(q) => (&mut q.page, &mut q.page_size),
            Listing::Esims(q) => (&mut q.page, &mut q.page_size),
        };
        (*number, *size) = (Some(page), Some(PAGE_SIZE));
        at
    }

    async fn page(&self, client: &Client, page: u64) -> Result<(Page, u64), ApiError> {
        match self.at(page) {
            Listing::Orders(q) => client.orders(&q).await.map(|a| (Page::Orders(a.orders), a.total)),
            Listing::Esims(q) => client.esims(&q).await.map(|a| (Page::Esims(a.esims), a.total)),
        }
    }

    /// Reads every page in order, handing each to `sink` with the progress so far. Stops at
    /// the first error (of the API, or the sink's), which it returns with the progress made.
    pub async fn read_all<E: From<ApiError>>(
        &self,
        client: &Client,
        mut sink: impl FnMut(Page, Progress) -> Result<(), E>,
    ) -> Result<Progress, E> {
        let mut progress = Progress::default();
        let mut seen = Seen::default();
        loop {
            let (mut page, total) = self.page(client, progress.pages_read + 1).await?;
            let full = page.len() as u64 >= PAGE_SIZE;
            page.drop_seen(&mut seen);
            progress.pages_read += 1;
            progress.total = total;
            progress.pages = total.div_ceil(PAGE_SIZE).max(progress.pages_read);
            progress.items += page.len() as u64;
            sink(page, progress)?;
            if !full || progress.pages_read >= progress.pages {
                return Ok(progress);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_is_known_for_the_last_pages_only() {
        let mut seen = Seen::default();
        assert!(seen.first("a".into()));
        assert!(!seen.first("a".into()), "twice on a page");
        seen.page_done();
        for page in 1..SEEN_PAGES {
            assert!(seen.first(format!("p{page}")));
            seen.page_done();
        }
        assert!(!seen.first("a".into()), "pushed {SEEN_PAGES} pages down, still known");
        seen.page_done();
        assert!(seen.first("a".into()), "older pages are forgotten");
        assert_eq!(seen.keys.len(), SEEN_PAGES);
    }
}
