//! The My eSIMs tab: server pages with a status filter, and a search by ICCID or package. The API
//! cannot search eSIMs, so the search reads the whole inventory in the background, a page at a
//! time (paced by the client within the key's limit), and searches what it has so far.
//! Activation codes are kept per eSIM once known.

use super::lists::PAGE_SIZE;
use super::paged::Paged;
use super::remote::Remote;
use super::search::SearchBox;
use crate::api::model::{Esim, EsimQuery};
use crate::esim::iccid::Iccid;
use crate::esim::status::StatusFilter;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Page size of the background read (the API's maximum).
pub const SCAN_PAGE_SIZE: u64 = 100;

/// An eSIM's activation code once fetched: the code, or why there is none, in a sentence.
pub type Code = Remote<Result<String, String>>;

/// The background read of the whole inventory.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    items: Vec<Esim>,
    total: Option<u64>,
    /// The next page's request; a failure stops the read until `r`.
    next: Remote<()>,
    started: bool,
    /// Every page is in.
    complete: bool,
}

impl Scan {
    pub fn items(&self) -> &[Esim] {
        &self.items
    }

    pub fn total(&self) -> Option<u64> {
        self.total
    }

    pub fn is_complete(&self) -> bool {
        self.complete
    }

    /// Why the read stopped, if it did.
    pub fn error(&self) -> Option<&crate::api::ApiError> {
        self.next.error()
    }

    pub fn next_page(&self) -> u64 {
        self.items.len() as u64 / SCAN_PAGE_SIZE + 1
    }

    /// Whether another page should be asked for now.
    pub fn wants_page(&self) -> bool {
        self.started && !self.complete && self.next.wanted()
    }
}

#[derive(Debug, Clone)]
pub struct Esims {
    pub(super) list: Paged<Esim>,
    status: StatusFilter,
    pub(super) search: SearchBox,
    pub(super) scan: Scan,
    /// Indexes into `scan.items` that match the search and the status filter.
    results: Vec<usize>,
    result_cursor: usize,
    /// Activation codes by ICCID.
    pub(super) codes: HashMap<String, Code>,
}

impl Default for Esims {
    fn default() -> Self {
        Self {
            list: Paged::new(PAGE_SIZE),
            status: StatusFilter::All,
            search: SearchBox::new(Duration::ZERO),
            scan: Scan::default(),
            results: Vec::new(),
            result_cursor: 0,
            codes: HashMap::new(),
        }
    }
}

/// The search text as digits, when it could be (part of) an ICCID: spaces and dashes dropped.
fn as_digits(text: &str) -> Option<String> {
    let digits: String = text.chars().filter(|c| !matches!(c, ' ' | '-')).collect();
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(digits)
}

impl Esims {
    pub fn list(&self) -> &Paged<Esim> {
        &self.list
    }

    pub fn status(&self) -> &StatusFilter {
        &self.status
    }

    pub fn search(&self) -> &SearchBox {
        &self.search
    }

    pub fn scan(&self) -> &Scan {
        &self.scan
    }

    pub fn results(&self) -> &[usize] {
        &self.results
    }

    pub fn result_cursor(&self) -> usize {
        self.result_cursor
    }

    pub fn code(&self, iccid: &str) -> Option<&Code> {
        self.codes.get(iccid)
    }

    pub fn query(&self, page: u64) -> EsimQuery {
        EsimQuery {
            page: Some(page),
            page_size: Some(self.list.page_size()),
            status: self.status.query(),
            iccid: None,
        }
    }

    pub fn is_current(&self, query: &EsimQuery) -> bool {
        *query == self.query(query.page.unwrap_or(1))
    }

    pub fn set_status(&mut self, status: StatusFilter) {
        if status != self.status {
            self.status = status;
            self.list.reset();
            self.refilter();
        }
    }

    /// Whether the table shows search results rather than server pages.
    pub fn search_active(&self) -> bool {
        !self.search.applied().is_empty()
    }

    pub fn selected(&self) -> Option<&Esim> {
        if self.search_active() {
            self.results
                .get(self.result_cursor)
                .and_then(|&i| self.scan.items.get(i))
        } else {
            self.list.selected()
        }
    }

    /// Moves whichever list is shown: the search results or the server pages.
    pub fn move_by(&mut self, delta: i64, now: Instant) {
        if self.search_active() {
            let last = self.results.len().saturating_sub(1) as i64;
            self.result_cursor = (self.result_cursor as i64).saturating_add(delta).clamp(0, last) as usize;
        } else {
            self.list.move_by(delta, now);
        }
    }

    pub fn go_to_start(&mut self, now: Instant) {
        if self.search_active() {
            self.result_cursor = 0;
        } else {
            self.list.go_to_start(now);
        }
    }

    pub fn go_to_end(&mut self, now: Instant) {
        if self.search_active() {
            self.result_cursor = self.results.len().saturating_sub(1);
        } else {
            self.list.go_to_end(now);
        }
    }

    /// Starts the background read (on the first `/`).
    pub fn start_scan(&mut self) {
        self.scan.started = true;
    }

    /// Forgets the background read (after `r`, or after money moved): it starts over if a
    /// search needs it.
    pub fn restart_scan(&mut self) {
        let started = self.scan.started;
        self.scan = Scan {
            started,
            ..Scan::default()
        };
        self.codes.clear();
        self.refilter();
    }

    pub(super) fn scan_started(&mut self, id: crate::tui::msg::RequestId) {
        self.scan.next.start(id);
    }

    /// Stores a page of the background read if it is the one awaited (`None`: stale, dropped);
    /// `Some(true)` when it brought the whole ICCID being searched for, now selected.
    pub fn accept_scan(
        &mut self,
        id: crate::tui::msg::RequestId,
        esims: Vec<Esim>,
        total: u64,
        now: Instant,
    ) -> Option<bool> {
        if !self.scan.next.resolve(id, (), now) {
            return None;
        }
        let short = (esims.len() as u64) < SCAN_PAGE_SIZE;
        self.scan.items.extend(esims);
        self.scan.total = Some(total);
        self.scan.complete = short || self.scan.items.len() as u64 >= total;
        if !self.scan.complete {
            self.scan.next.invalidate();
        }
        Some(self.refilter())
    }

    pub(super) fn scan_slot(&mut self) -> &mut dyn super::remote::Slot {
        &mut self.scan.next
    }

    /// The search in effect changed: recomputes the results; `true` when it is a whole ICCID
    /// that was found (now selected).
    pub fn search_changed(&mut self) -> bool {
        self.refilter()
    }

    /// Recomputes the results after the search, the filter or the loaded items changed; keeps
    /// the selected eSIM selected. A whole, valid ICCID that is found is selected, and `true`
    /// returned.
    fn refilter(&mut self) -> bool {
        let keep = self.selected().map(|e| e.raw_order_json.iccid.clone());
        let needle = self.search.applied().to_lowercase();
        let digits = as_digits(&needle);
        self.results = if needle.is_empty() {
            Vec::new()
        } else {
            let status = &self.status;
            self.scan
                .items
                .iter()
                .enumerate()
                .filter(|(_, e)| status.matches(&e.record.status))
                .filter(|(_, e)| match &digits {
                    Some(d) => e.raw_order_json.iccid.contains(d.as_str()),
                    None => {
                        e.record.package_name.to_lowercase().contains(&needle)
                            || e.record.slug.to_lowercase().contains(&needle)
                            || e.record.package_code.to_lowercase().contains(&needle)
                    }
                })
                .map(|(i, _)| i)
                .collect()
        };
        let position = |iccid: &str| {
            self.results
                .iter()
                .position(|&i| self.scan.items[i].raw_order_json.iccid == iccid)
        };
        let whole = digits.as_deref().and_then(|d| Iccid::parse(d).ok());
        if let Some(at) = whole.as_ref().and_then(|iccid| position(iccid.as_str())) {
            self.result_cursor = at;
            return true;
        }
        self.result_cursor = keep
            .and_then(|k| position(&k))
            .unwrap_or(0)
            .min(self.results.len().saturating_sub(1));
        false
    }
}
