//! The My eSIMs tab: server pages with a status filter, and a search by ICCID or package.
//! A whole ICCID is asked of the server (docs/api-contract.md's lookup, one request). Anything else is
//! searched in the account's inventory index (`crate::index`: the saved one of an earlier
//! session at once, and the whole inventory read in the background, a page at a time). The selected result's full record is always fetched fresh: by the lookup, or from
//! the page at its place in the list. Activation codes are kept per eSIM once known.

use super::fresh::TopUpWatch;
use super::{Code, Fresh, ResultRow};
use crate::index::Index;
use crate::kit::paged::Paged;
use crate::kit::remote::Remote;
use crate::kit::search::SearchBox;
use crate::tabs::orders::PAGE_SIZE;
use esimdash_api::Found;
use esimdash_api::model::{Esim, EsimQuery};
use esimdash_domain::iccid::{EsimIccid, Iccid};
use esimdash_domain::status::StatusFilter;
use std::collections::HashMap;
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct Esims {
    pub(super) list: Paged<Esim>,
    pub(super) status: StatusFilter,
    pub(super) search: SearchBox,
    /// Entries of the searched index that match the search and the status filter.
    pub(super) results: Vec<u32>,
    pub(super) result_cursor: usize,
    /// The selected result's record, or the whole ICCID's lookup.
    pub(super) fresh: Option<Fresh>,
    /// After the search closed on an eSIM whose row in the list is not known: still selected.
    pub(super) pinned: Option<Box<Esim>>,
    /// The eSIM last topped up here and its volume and expiry before: whether the provider's
    /// record shows the top-up yet.
    pub(super) topped_up: Option<TopUpWatch>,
    /// The ICCID the list's cursor was sent to, checked when its page comes.
    pub(super) expect: Option<(EsimIccid, String)>,
    /// Activation codes by profile (`profile_key`): an ICCID a provider reissued has a code per
    /// profile, and one must never be shown for the other.
    pub(super) codes: HashMap<String, Code>,
    /// The "needs attention" filter over the index is on.
    pub(super) attention: bool,
    /// The eSIMs marked for what is done to many at once.
    pub(super) marks: super::marks::Marks,
    /// `e` on an order whose eSIM was still looked for: goes there once it is found, while that
    /// order's detail stays open.
    pub(super) go_to_order: Option<esimdash_domain::order_no::OrderNo>,
    /// eSIMs this session changed (topped up), whose records are read again (`RefreshEsims`).
    pub(super) to_refresh: Vec<Iccid>,
    pub(super) refreshing: Remote<()>,
    /// What the results were last selected by (search, status, attention): while it stays,
    /// a row that leaves (its newer record no longer matches) leaves the cursor where it was.
    pub(super) results_of: Option<(String, StatusFilter, bool)>,
    /// The detail pane's screenful (J, K) and the eSIM it was scrolled on: any other selection,
    /// however it came, opens at the top.
    pub(super) pane_scroll: Option<(EsimIccid, u16)>,
}

impl Default for Esims {
    fn default() -> Self {
        Self {
            list: Paged::new(PAGE_SIZE),
            status: StatusFilter::All,
            search: SearchBox::new(Duration::ZERO),
            results: Vec::new(),
            result_cursor: 0,
            fresh: None,
            pinned: None,
            topped_up: None,
            expect: None,
            codes: HashMap::new(),
            attention: false,
            marks: super::marks::Marks::default(),
            go_to_order: None,
            to_refresh: Vec::new(),
            refreshing: Remote::default(),
            results_of: None,
            pane_scroll: None,
        }
    }
}

/// Screenfuls the pane may be asked to go down; the view stops at its last line.
const PANE_SCREENS: u16 = 32;

impl Esims {
    /// Which screenful of the detail pane is shown (0: its top).
    pub fn pane_scroll(&self, ix: &Index) -> u16 {
        match (&self.pane_scroll, self.selected_iccid(ix)) {
            (Some((scrolled, screens)), Some(selected)) if *scrolled == selected => *screens,
            _ => 0,
        }
    }

    /// J or K: the pane's next or previous screenful (`by`: +1 or -1).
    pub(super) fn scroll_pane(&mut self, by: i16, ix: &Index) {
        if let Some(selected) = self.selected_iccid(ix) {
            let screens = self.pane_scroll(ix).saturating_add_signed(by).min(PANE_SCREENS);
            self.pane_scroll = Some((selected, screens));
        }
    }

    pub fn list(&self) -> &Paged<Esim> {
        &self.list
    }

    pub fn status(&self) -> &StatusFilter {
        &self.status
    }

    pub fn search(&self) -> &SearchBox {
        &self.search
    }

    pub fn fresh(&self) -> Option<&Fresh> {
        self.fresh.as_ref()
    }

    pub fn pinned(&self) -> Option<&Esim> {
        self.pinned.as_deref()
    }

    pub fn result_cursor(&self) -> usize {
        self.result_cursor
    }

    pub fn marks(&self) -> &super::marks::Marks {
        &self.marks
    }

    pub(super) fn marks_mut(&mut self) -> &mut super::marks::Marks {
        &mut self.marks
    }

    pub fn query(&self, page: u64) -> EsimQuery {
        EsimQuery {
            page: Some(page),
            page_size: Some(self.list.page_size()),
            status: self.status.clone(),
            iccid: None,
        }
    }

    pub fn is_current(&self, query: &EsimQuery) -> bool {
        *query == self.query(query.page.unwrap_or(1))
    }

    pub(super) fn set_status(&mut self, status: StatusFilter, ix: &Index) {
        if status != self.status {
            self.status = status;
            self.list.reset();
            self.pinned = None;
            self.refilter(ix);
        }
    }

    /// Whether the table shows search results (or the attention filter's) rather than server
    /// pages.
    pub fn search_active(&self) -> bool {
        !self.search.applied().is_empty() || self.attention
    }

    /// Whether the attention filter is on (it reads by the index's rule).
    pub fn attention(&self) -> bool {
        self.attention
    }

    /// Turns the attention filter on (reading the inventory if it is not known) or off.
    pub(super) fn toggle_attention(&mut self, ix: &mut Index) {
        self.attention = !self.attention;
        if self.attention {
            ix.want_whole();
        }
        self.pinned = None;
        self.refilter(ix);
    }

    /// Why the search is not a valid ICCID although it has the length of one (19 or 20 digits):
    /// a digit mistyped, as the Luhn check tells.
    pub fn mistyped_iccid(&self) -> Option<esimdash_domain::iccid::IccidError> {
        let digits: String = self
            .search
            .applied()
            .chars()
            .filter(|c| !matches!(c, ' ' | '-'))
            .collect();
        let looks_whole = (19..=20).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit());
        looks_whole.then(|| Iccid::parse(&digits).err()).flatten()
    }

    /// `r`, or after money moved: the list starts over, and what is selected is fetched fresh
    /// (the index reads from the top: the account's, told by the app).
    pub(super) fn reload(&mut self) {
        self.list.reload();
        self.codes.clear();
        if let Some(f) = &mut self.fresh {
            f.record.invalidate();
        }
    }

    /// The selected eSIM's ICCID: known from the index even before its record is fetched.
    pub fn selected_iccid(&self, ix: &Index) -> Option<EsimIccid> {
        if self.search_active() {
            return self.selected_result(ix).map(|r| r.iccid());
        }
        self.selected(ix).map(|e| e.raw_order_json.iccid.clone())
    }

    /// The selected eSIM's full record, when the dashboard has it.
    pub fn selected(&self, ix: &Index) -> Option<&Esim> {
        if self.search_active() {
            // The row's own profile: a reissued ICCID has a row per profile (ICCID and order),
            // and the old one's row never shows the current profile's state or code.
            let row = self.selected_result(ix)?;
            let fresh = self.fresh.as_ref()?;
            let current = match fresh.record.value()? {
                Found::Esim(e) => Some(&**e),
                _ => None,
            };
            return current.into_iter().chain(&fresh.earlier).find(|e| {
                row.is(&e.raw_order_json.iccid)
                    && (row.order().is_empty() || e.record.provider_order_no.as_str() == row.order())
            });
        }
        match &self.pinned {
            Some(e) => Some(e),
            None => self.list.selected(),
        }
    }

    /// The selected eSIM's state: its record's, else its search row's as the index read it.
    pub fn selected_class(&self, ix: &Index) -> Option<esimdash_domain::esim_state::Class> {
        self.selected(ix)
            .map(|e| e.facts().classify())
            .or_else(|| match self.selected_result(ix)? {
                ResultRow::Indexed(r) if self.search_active() => Some(r.class),
                _ => None,
            })
    }

    /// Moves whichever list is shown: the search results or the server pages.
    pub(super) fn move_by(&mut self, delta: i64, now: Instant) {
        self.pinned = None;
        if self.search_active() {
            let last = self.result_count().saturating_sub(1) as i64;
            self.result_cursor = (self.result_cursor as i64).saturating_add(delta).clamp(0, last) as usize;
        } else {
            self.list.move_by(delta, now);
        }
    }

    pub(super) fn go_to_start(&mut self, now: Instant) {
        self.pinned = None;
        if self.search_active() {
            self.result_cursor = 0;
        } else {
            self.list.go_to_start(now);
        }
    }

    pub(super) fn go_to_end(&mut self, now: Instant) {
        self.pinned = None;
        if self.search_active() {
            self.result_cursor = self.result_count().saturating_sub(1);
        } else {
            self.list.go_to_end(now);
        }
    }

    /// Searches for `iccid` as if typed and entered (an order's `e`): the lookup and the read
    /// start as they would.
    pub(super) fn find(&mut self, iccid: &EsimIccid, now: Instant, ix: &mut Index) {
        // One eSIM asked for by name is shown whatever it needs: never under "needs attention".
        self.attention = false;
        self.search.clear();
        self.search.paste(iccid.as_str(), now);
        self.search.apply();
        ix.want_whole();
        self.search_changed(ix);
    }
}
