//! The My eSIMs tab: server pages with a status filter, and a search by ICCID or package. The API
//! cannot search eSIMs, so the search reads the whole inventory in the background, a page at a
//! time (paced by the client within the key's limit), and searches what it has so far.
//! Activation codes are kept per eSIM once known.

use super::input::TextInput;
use super::lists::PAGE_SIZE;
use super::paged::Paged;
use crate::api::model::{Esim, EsimQuery};
use crate::esim::iccid::Iccid;
use crate::tui::msg::RequestId;
use std::collections::HashMap;

/// Page size of the background read (the API's maximum).
pub const SCAN_PAGE_SIZE: u64 = 100;

/// What is known of an eSIM's activation code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Code {
    Loading(RequestId),
    Ready(String),
    /// Why there is none, in a sentence.
    Failed(String),
}

/// The background read of the whole inventory.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    pub items: Vec<Esim>,
    pub total: Option<u64>,
    pub request: Option<RequestId>,
    pub started: bool,
    /// Every page is in.
    pub complete: bool,
    /// A page failed with an error that retrying would not fix; `r` starts again.
    pub failed: bool,
}

impl Scan {
    pub fn next_page(&self) -> u64 {
        self.items.len() as u64 / SCAN_PAGE_SIZE + 1
    }

    /// Whether another page should be asked for now.
    pub fn wants_page(&self) -> bool {
        self.started && !self.complete && !self.failed && self.request.is_none()
    }
}

#[derive(Debug, Clone)]
pub struct Esims {
    pub list: Paged<Esim>,
    pub status: Option<String>,
    /// The detail pane replaces the table (narrow terminals; wide ones always show it).
    pub detail: bool,
    /// The QR code alone, full screen.
    pub zoom: bool,
    pub search: TextInput,
    pub searching: bool,
    pub scan: Scan,
    /// Indexes into `scan.items` that match the search and the status filter.
    pub results: Vec<usize>,
    pub result_cursor: usize,
    /// Activation codes by ICCID.
    pub codes: HashMap<String, Code>,
}

impl Default for Esims {
    fn default() -> Self {
        Self {
            list: Paged::new(PAGE_SIZE),
            status: None,
            detail: false,
            zoom: false,
            search: TextInput::default(),
            searching: false,
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
    pub fn query(&self, page: u64) -> EsimQuery {
        EsimQuery {
            page: Some(page),
            page_size: Some(self.list.page_size),
            status: self.status.clone(),
        }
    }

    pub fn set_status(&mut self, status: Option<String>) {
        if status != self.status {
            self.status = status;
            self.list.reset();
            self.refilter();
        }
    }

    /// Whether the table shows search results rather than server pages.
    pub fn search_active(&self) -> bool {
        !self.search.value.trim().is_empty()
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

    pub fn move_results(&mut self, delta: i64) {
        let last = self.results.len().saturating_sub(1) as i64;
        self.result_cursor = (self.result_cursor as i64 + delta).clamp(0, last) as usize;
    }

    pub fn go_to_result(&mut self, end: bool) {
        self.result_cursor = if end { self.results.len().saturating_sub(1) } else { 0 };
    }

    /// Starts the background read (on the first `/`).
    pub fn start_scan(&mut self) {
        self.scan.started = true;
    }

    /// Forgets the background read (after `r`): it starts over if a search needs it.
    pub fn restart_scan(&mut self) {
        let started = self.scan.started;
        self.scan = Scan {
            started,
            ..Scan::default()
        };
        self.codes.clear();
        self.refilter();
    }

    /// Stores a page of the background read if it is the one awaited (`None`: stale, dropped);
    /// `Some(true)` when it brought the ICCID being typed and the search jumped to it.
    pub fn accept_scan(&mut self, id: RequestId, esims: Vec<Esim>, total: u64) -> Option<bool> {
        if self.scan.request != Some(id) {
            return None;
        }
        self.scan.request = None;
        let short = (esims.len() as u64) < SCAN_PAGE_SIZE;
        self.scan.items.extend(esims);
        self.scan.total = Some(total);
        self.scan.complete = short || self.scan.items.len() as u64 >= total;
        Some(self.refilter())
    }

    /// Recomputes the results after the search, the filter or the loaded items changed; keeps
    /// the selected eSIM selected. A whole, valid ICCID that is found is jumped to: selected,
    /// typing ends and its detail opens. Returns `true` on such a jump.
    pub fn refilter(&mut self) -> bool {
        let keep = self.selected().map(|e| e.raw_order_json.iccid.clone());
        let needle = self.search.value.trim().to_lowercase();
        let digits = as_digits(&needle);
        self.results = if needle.is_empty() {
            Vec::new()
        } else {
            let status = self.status.as_deref();
            self.scan
                .items
                .iter()
                .enumerate()
                .filter(|(_, e)| status.is_none_or(|s| e.record.status.matches_filter(s)))
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
            let jumped = self.searching;
            self.result_cursor = at;
            self.searching = false;
            self.detail = true;
            return jumped;
        }
        self.result_cursor = keep
            .and_then(|k| position(&k))
            .unwrap_or(0)
            .min(self.results.len().saturating_sub(1));
        false
    }
}
