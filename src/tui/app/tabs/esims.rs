//! The My eSIMs tab: server pages with a status filter, and a search by ICCID or package.
//! A whole ICCID is asked of the server (docs/api-contract.md's lookup, one request). Anything else is
//! searched in the inventory index: the saved one of an earlier session at once, and the whole
//! inventory read in the background, a page at a time (paced by the client within the key's
//! limit). The selected result's full record is always fetched fresh: by the lookup, or from
//! the page at its place in the list. Activation codes are kept per eSIM once known.

use super::orders::PAGE_SIZE;
use super::{Motion, SCREEN_PAGE, TabState, TopUpOf, whole_iccid};
use crate::api::Found;
use crate::api::model::{Esim, EsimQuery};
use crate::domain::attention::AttentionRule;
use crate::domain::iccid::{EsimIccid, Iccid};
use crate::domain::status::StatusFilter;
use crate::inventory::store::Loaded;
use crate::inventory::{AttentionAt, Inventory, Row};
use crate::tui::app::jobs::Outbox;
use crate::tui::app::mode::Mode;
use crate::tui::app::paged::Paged;
use crate::tui::app::remote::Loaded as Fetched;
use crate::tui::app::remote::Remote;
use crate::tui::app::search::SearchBox;
use crate::tui::keymap::Context;
use crate::tui::msg::{ExportJob, Request};
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Page size of the background read (the API's maximum).
pub const SCAN_PAGE_SIZE: u64 = 100;

/// An eSIM's activation code once fetched: the code, or why there is none, in a sentence.
pub type Code = Remote<Result<String, String>>;

/// Which profile a code belongs to: the ICCID and the provider's `esimTranNo`.
pub fn profile_key(esim: &Esim) -> String {
    let raw = &esim.raw_order_json;
    format!("{}#{}", raw.iccid.as_str(), raw.esim_tran_no)
}

/// The background read of the whole inventory, kept compact.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    /// Shared with the saving of the index (which would otherwise copy 100 000 entries); a
    /// page that comes while a save still reads it changes a copy.
    inventory: Arc<Inventory>,
    total: Option<u64>,
    reading: Reading,
}

/// Where the background read is.
#[derive(Debug, Clone)]
enum Reading {
    /// Not started: the first search (or the attention filter) starts it. `again`: `r` asked for it while a saved index
    /// serves the search (else the saved index is enough).
    Idle { again: bool },
    /// Page after page: `next` is the next page's request (a failure stops the read until `r`).
    Pages { next: Remote<()>, again: bool },
    /// Every page is in.
    Complete,
}

impl Default for Reading {
    fn default() -> Self {
        Reading::Idle { again: false }
    }
}

impl Scan {
    pub fn inventory(&self) -> &Inventory {
        &self.inventory
    }

    /// The index read, to be saved.
    pub fn shared_inventory(&self) -> Arc<Inventory> {
        Arc::clone(&self.inventory)
    }

    pub fn loaded(&self) -> u64 {
        self.inventory.len() as u64
    }

    pub fn total(&self) -> Option<u64> {
        self.total
    }

    pub fn is_complete(&self) -> bool {
        matches!(self.reading, Reading::Complete)
    }

    /// Whether a page of the read is being asked for now (only then does the title say so).
    pub fn is_reading(&self) -> bool {
        matches!(&self.reading, Reading::Pages { next, .. } if next.is_loading())
    }

    /// Why the read stopped, if it did.
    pub fn error(&self) -> Option<&crate::api::ApiError> {
        match &self.reading {
            Reading::Pages { next, .. } => next.error(),
            _ => None,
        }
    }

    pub fn next_page(&self) -> u64 {
        self.inventory.len() as u64 / SCAN_PAGE_SIZE + 1
    }
}

/// What a page of the background read brought.
#[derive(Debug, Clone, Copy)]
pub struct ScanStep {
    /// The read is complete: the index is worth saving.
    pub complete: bool,
    /// The whole ICCID searched for is now among the results (selected).
    pub found_whole: bool,
}

/// The full record of one eSIM, fetched fresh for the search.
#[derive(Debug, Clone)]
pub struct Fresh {
    pub iccid: Iccid,
    /// Where the index placed it when asked (a server without the lookup is read there).
    pub place: Option<u64>,
    pub record: Remote<Found>,
}

/// A row of the search results: from the index, or the record the lookup brought.
#[derive(Debug, Clone, Copy)]
pub enum ResultRow<'a> {
    Indexed(Row<'a>),
    Fetched(&'a Esim),
}

impl ResultRow<'_> {
    pub fn iccid(&self) -> &str {
        match self {
            ResultRow::Indexed(r) => r.iccid,
            ResultRow::Fetched(e) => e.raw_order_json.iccid.as_str(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Esims {
    pub(in crate::tui::app) list: Paged<Esim>,
    status: StatusFilter,
    pub(in crate::tui::app) search: SearchBox,
    pub(in crate::tui::app) scan: Scan,
    /// The index an earlier session saved.
    saved: Option<Loaded>,
    /// Entries of the searched index that match the search and the status filter.
    results: Vec<u32>,
    result_cursor: usize,
    /// The selected result's record, or the whole ICCID's lookup.
    pub(in crate::tui::app) fresh: Option<Fresh>,
    /// After the search closed on an eSIM whose row in the list is not known: still selected.
    pinned: Option<Box<Esim>>,
    /// The eSIM last topped up here and its volume and expiry before: whether the provider's
    /// record shows the top-up yet.
    topped_up: Option<(String, Option<u64>, String)>,
    /// The ICCID the list's cursor was sent to, checked when its page comes.
    expect: Option<EsimIccid>,
    /// Activation codes by profile (`profile_key`): an ICCID a provider reissued has a code per
    /// profile, and one must never be shown for the other.
    pub(in crate::tui::app) codes: HashMap<String, Code>,
    /// The "needs attention" filter over the index is on.
    attention: bool,
    /// How many eSIMs of the searched index need attention (by the configured rule), once the
    /// whole inventory is known.
    attention_count: Option<usize>,
    rule: AttentionRule,
    /// "Now" for the attention rule and the index's age; pinned by tests, whose sandbox is seeded
    /// at a fixed time.
    clock: Option<DateTime<Utc>>,
}

impl Default for Esims {
    fn default() -> Self {
        Self {
            list: Paged::new(PAGE_SIZE),
            status: StatusFilter::All,
            search: SearchBox::new(Duration::ZERO),
            scan: Scan::default(),
            saved: None,
            results: Vec::new(),
            result_cursor: 0,
            fresh: None,
            pinned: None,
            topped_up: None,
            expect: None,
            codes: HashMap::new(),
            attention: false,
            attention_count: None,
            rule: AttentionRule::default(),
            clock: None,
        }
    }
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

    pub fn saved(&self) -> Option<&Loaded> {
        self.saved.as_ref()
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

    /// Every profile of this eSIM's ICCID the dashboard has at hand (pages, the lookup's
    /// record), newest `esimTranNo` first: more than one where a provider reissued the ICCID.
    pub fn profiles_of<'a>(&'a self, esim: &'a Esim) -> Vec<&'a Esim> {
        let iccid = &esim.raw_order_json.iccid;
        let fresh = self.fresh.as_ref().and_then(|f| match f.record.value()? {
            Found::Esim(e) => Some(&**e),
            _ => None,
        });
        let mut found: Vec<&Esim> = Vec::new();
        for e in self.list.loaded().chain(fresh).chain(self.pinned()).chain(Some(esim)) {
            let same = |f: &&Esim| f.raw_order_json.esim_tran_no == e.raw_order_json.esim_tran_no;
            if e.raw_order_json.iccid == *iccid && !found.iter().any(same) {
                found.push(e);
            }
        }
        found.sort_by_key(|e| std::cmp::Reverse(crate::api::tran_no_order(&e.raw_order_json.esim_tran_no)));
        found
    }

    /// A top-up of this eSIM was placed: its record as it was, to tell when the new one shows it.
    pub fn note_top_up(&mut self, iccid: &str) {
        let before = self
            .selected()
            .into_iter()
            .chain(self.list.loaded())
            .find(|e| e.raw_order_json.iccid == iccid)
            .map(|e| {
                (
                    e.raw_order_json.total_volume,
                    e.raw_order_json.expired_time.text().to_string(),
                )
            });
        self.topped_up = before.map(|(volume, expires)| (iccid.to_string(), volume, expires));
    }

    /// For the eSIM last topped up here: `Some(true)` once its record shows more data or days,
    /// `Some(false)` while the record read after the top-up does not yet (nothing is being read).
    pub fn top_up_shown(&self, esim: &Esim) -> Option<bool> {
        let (iccid, volume, expires) = self.topped_up.as_ref()?;
        if esim.raw_order_json.iccid != iccid.as_str() {
            return None;
        }
        let raw = &esim.raw_order_json;
        let changed = raw.total_volume != *volume || raw.expired_time.text() != expires;
        let reading = self.list.is_loading() || self.fresh.as_ref().is_some_and(|f| f.record.is_loading());
        (changed || !reading).then_some(changed)
    }

    /// The selected eSIM's activation code, once asked for.
    pub fn selected_code(&self) -> Option<&Code> {
        self.selected().and_then(|e| self.code(e))
    }

    /// The activation code of this eSIM's profile, once asked for.
    pub fn code(&self, esim: &Esim) -> Option<&Code> {
        self.codes.get(&profile_key(esim))
    }

    /// The index the search reads: the full read once complete, else the saved one if any,
    /// else what the read has so far; with the saved index's time when it is that one.
    pub fn searched(&self) -> (&Inventory, Option<DateTime<Utc>>) {
        match &self.saved {
            Some(saved) if !self.scan.is_complete() => (&saved.inventory, Some(saved.saved_at)),
            _ => (&self.scan.inventory, None),
        }
    }

    /// The whole ICCID searched for, if the search is one.
    pub fn whole_iccid(&self) -> Option<Iccid> {
        whole_iccid(self.search.applied())
    }

    /// The lookup's record when it is the whole ICCID searched for and the index lacks it.
    fn fetched_only(&self) -> Option<&Esim> {
        let whole = self.whole_iccid()?;
        if !self.results.is_empty() {
            return None;
        }
        match self.fresh.as_ref()?.record.value()? {
            Found::Esim(e) if e.raw_order_json.iccid == whole.as_str() => Some(e),
            _ => None,
        }
    }

    pub fn result_count(&self) -> usize {
        if self.fetched_only().is_some() {
            1
        } else {
            self.results.len()
        }
    }

    /// The result rows from `start`, in order.
    pub fn result_rows(&self) -> impl Iterator<Item = ResultRow<'_>> {
        let (inventory, _) = self.searched();
        let fetched = self.fetched_only().map(ResultRow::Fetched);
        fetched.into_iter().chain(
            self.results
                .iter()
                .filter_map(move |&i| inventory.row(i as usize).map(ResultRow::Indexed)),
        )
    }

    fn selected_result(&self) -> Option<ResultRow<'_>> {
        self.result_rows().nth(self.result_cursor)
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

    pub fn set_status(&mut self, status: StatusFilter) {
        if status != self.status {
            self.status = status;
            self.list.reset();
            self.pinned = None;
            self.refilter();
        }
    }

    /// Whether the table shows search results (or the attention filter's) rather than server
    /// pages.
    pub fn search_active(&self) -> bool {
        !self.search.applied().is_empty() || self.attention
    }

    /// The thresholds of "needs attention" (from the config file).
    pub fn set_attention_rule(&mut self, rule: AttentionRule) {
        self.rule = rule;
        self.recount_attention();
    }

    /// The attention filter's rule, when it is on.
    pub fn attention(&self) -> Option<AttentionRule> {
        self.attention.then_some(self.rule)
    }

    /// How many eSIMs need attention, when the whole inventory is known (read or saved).
    pub fn attention_count(&self) -> Option<usize> {
        self.attention_count
    }

    /// Turns the attention filter on (reading the inventory if it is not known) or off.
    pub fn toggle_attention(&mut self) {
        self.attention = !self.attention;
        if self.attention {
            self.start_scan();
        }
        self.pinned = None;
        self.refilter();
    }

    /// A new account's inventory: empty, with this one's rule and clock (the user's).
    pub fn emptied(&self) -> Esims {
        Esims {
            rule: self.rule,
            clock: self.clock,
            ..Esims::default()
        }
    }

    /// Why the search is not a valid ICCID although it has the length of one (19 or 20 digits):
    /// a digit mistyped, as the Luhn check tells.
    pub fn mistyped_iccid(&self) -> Option<crate::domain::iccid::IccidError> {
        let digits: String = self
            .search
            .applied()
            .chars()
            .filter(|c| !matches!(c, ' ' | '-'))
            .collect();
        let looks_whole = (19..=20).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit());
        looks_whole.then(|| Iccid::parse(&digits).err()).flatten()
    }

    /// `r`, or after money moved: the list and the background read start over.
    pub fn reload(&mut self) {
        self.list.reload();
        self.restart_scan();
    }

    /// The selected eSIM's activation code: from `ac` at once, else its QR image is fetched.
    fn fetch_code(&mut self, out: &mut Outbox<'_>, now: Instant) {
        let Some(esim) = self.selected() else { return };
        let key = profile_key(esim);
        if esim.raw_order_json.iccid.is_empty() || self.codes.get(&key).is_some_and(|c| !c.wanted()) {
            return;
        }
        let ac = esim
            .raw_order_json
            .ac
            .as_deref()
            .map(str::trim)
            .filter(|ac| !ac.is_empty());
        if let Some(ac) = ac {
            let code = Remote::Loaded(Fetched {
                value: crate::domain::lpa::checked_code(ac),
                at: now,
            });
            self.codes.insert(key, code);
            return;
        }
        let request = Request::ActivationCode {
            esim: Box::new(esim.clone()),
        };
        let id = out.send(request);
        self.codes.entry(key).or_default().start(id);
    }

    /// Pins "now" (tests read a sandbox seeded at a fixed time).
    pub fn pin_clock(&mut self, at: DateTime<Utc>) {
        self.clock = Some(at);
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.clock.unwrap_or_else(Utc::now)
    }

    fn attention_at(&self, rule: AttentionRule) -> AttentionAt {
        AttentionAt { rule, now: self.now() }
    }

    /// Counts again after the index changed; unknown until the whole inventory is.
    fn recount_attention(&mut self) {
        let whole = self.scan.is_complete() || self.saved.is_some();
        let (inventory, _) = self.searched();
        self.attention_count = whole.then(|| {
            inventory
                .select("", &StatusFilter::All, Some(self.attention_at(self.rule)))
                .len()
        });
    }

    /// The selected eSIM's ICCID: known from the index even before its record is fetched.
    pub fn selected_iccid(&self) -> Option<EsimIccid> {
        if self.search_active() {
            return self.selected_result().map(|r| EsimIccid::parse(r.iccid()));
        }
        self.selected().map(|e| e.raw_order_json.iccid.clone())
    }

    /// The selected eSIM's full record, when the dashboard has it.
    pub fn selected(&self) -> Option<&Esim> {
        if self.search_active() {
            let iccid = self.selected_result()?.iccid().to_string();
            return match self.fresh.as_ref()?.record.value()? {
                Found::Esim(e) if e.raw_order_json.iccid == iccid => Some(e),
                _ => None,
            };
        }
        match &self.pinned {
            Some(e) => Some(e),
            None => self.list.selected(),
        }
    }

    /// Whether the background read should ask for its next page now. Not for a whole ICCID
    /// the lookup answered (nor while it is asked); with a saved index, only after `r`: at the
    /// API's 120 a minute, reading 100 000 eSIMs again would take the key's budget for minutes.
    pub fn needs_scan(&self) -> bool {
        let Reading::Pages { next, again } = &self.scan.reading else {
            return false;
        };
        if !next.wanted() {
            return false;
        }
        if let Some(whole) = self.whole_iccid() {
            let lookup = self.fresh.as_ref().filter(|f| f.iccid == whole);
            return matches!(lookup.and_then(|f| f.record.value()), Some(Found::Unknown));
        }
        self.saved.is_none() || *again
    }

    /// Which record the search needs fetched now: the whole ICCID searched for (at once), or
    /// the selected result's with its place, for a server without the lookup (once typing
    /// stops: a record per letter typed would spend the budget on answers nobody reads).
    pub fn wanted_fresh(&self, typing: bool) -> Option<(Iccid, Option<u64>)> {
        if !self.search_active() {
            return None;
        }
        let (iccid, place) = match (self.whole_iccid(), self.selected_result()) {
            (Some(whole), Some(ResultRow::Indexed(row))) if row.iccid == whole.as_str() => (whole, Some(row.place)),
            (Some(whole), _) => (whole, None),
            (None, Some(ResultRow::Indexed(row))) if !typing => (Iccid::parse(row.iccid).ok()?, Some(row.place)),
            (None, _) => return None,
        };
        match &self.fresh {
            // Asked already; again only if it could not be told and a place is now known.
            Some(f) if f.iccid == iccid && !f.record.wanted() => {
                let unknown = matches!(f.record.value(), Some(Found::Unknown));
                (unknown && place.is_some() && f.place != place).then_some((iccid, place))
            }
            _ => Some((iccid, place)),
        }
    }

    pub(in crate::tui::app) fn fresh_started(&mut self, iccid: Iccid, place: Option<u64>, id: crate::tui::msg::JobId) {
        let mut record = Remote::default();
        record.start(id);
        self.fresh = Some(Fresh { iccid, place, record });
    }

    pub(in crate::tui::app) fn fresh_slot(&mut self, iccid: &str) -> Option<&mut dyn crate::tui::app::remote::Slot> {
        self.fresh
            .as_mut()
            .filter(|f| f.iccid.as_str() == iccid)
            .map(|f| &mut f.record as &mut dyn crate::tui::app::remote::Slot)
    }

    /// Whether the fresh record for `iccid` is still of use: the whole ICCID searched for, or
    /// the selected result.
    pub fn wants_fresh(&self, iccid: &str) -> bool {
        if !self.search_active() {
            return false;
        }
        match self.whole_iccid() {
            Some(whole) => whole.as_str() == iccid,
            None => self.selected_iccid().is_some_and(|s| s == iccid),
        }
    }

    /// The lookup answered; `true` when it found the whole ICCID searched for (now selected).
    pub(in crate::tui::app) fn accept_fresh(&mut self, id: crate::tui::msg::JobId, found: Found, now: Instant) -> bool {
        if let Found::Esim(e) = &found {
            let iccid = &e.raw_order_json.iccid;
            let status = &e.record.status;
            let mut changed = self.scan.inventory.status_differs(iccid, status)
                && Arc::make_mut(&mut self.scan.inventory).update_status(iccid, status);
            if let Some(saved) = &mut self.saved {
                changed |= saved.inventory.update_status(iccid.as_str(), &e.record.status);
            }
            // A count over 100 000 entries only when a status really moved.
            if changed {
                self.recount_attention();
            }
        }
        let whole = self.whole_iccid();
        let Some(fresh) = self.fresh.as_mut() else { return false };
        if !fresh.record.resolve(id, found, now) {
            return false;
        }
        let found_whole = whole.is_some_and(
            |w| matches!(fresh.record.value(), Some(Found::Esim(e)) if e.raw_order_json.iccid == w.as_str()),
        );
        if found_whole {
            self.refilter();
        }
        found_whole
    }

    /// Moves whichever list is shown: the search results or the server pages.
    pub fn move_by(&mut self, delta: i64, now: Instant) {
        self.pinned = None;
        if self.search_active() {
            let last = self.result_count().saturating_sub(1) as i64;
            self.result_cursor = (self.result_cursor as i64).saturating_add(delta).clamp(0, last) as usize;
        } else {
            self.list.move_by(delta, now);
        }
    }

    pub fn go_to_start(&mut self, now: Instant) {
        self.pinned = None;
        if self.search_active() {
            self.result_cursor = 0;
        } else {
            self.list.go_to_start(now);
        }
    }

    pub fn go_to_end(&mut self, now: Instant) {
        self.pinned = None;
        if self.search_active() {
            self.result_cursor = self.result_count().saturating_sub(1);
        } else {
            self.list.go_to_end(now);
        }
    }

    /// Searches for `iccid` as if typed and entered (an order's `e`): the lookup and the read
    /// start as they would.
    pub fn find(&mut self, iccid: &str, now: Instant) {
        self.search.clear();
        self.search.paste(iccid, now);
        self.search.apply();
        self.start_scan();
        self.search_changed();
    }

    /// The background read's next page, if it is wanted (also while another tab waits on it:
    /// an order's detail finding its eSIMs).
    pub fn fetch_scan(&mut self, out: &mut Outbox<'_>) {
        if self.needs_scan() {
            let page = self.scan.next_page();
            let id = out.send(Request::EsimScan { page });
            if let Reading::Pages { next, .. } = &mut self.scan.reading {
                next.start(id);
            }
        }
    }

    /// The ICCIDs of the eSIMs an order made, from the pages and record at hand and the index;
    /// and whether the index is whole (so that none found means none).
    pub fn iccids_of_order(&self, number: &str) -> (Vec<String>, bool) {
        let mut found: Vec<String> = self
            .list
            .loaded()
            .chain(self.selected())
            .filter(|e| e.record.provider_order_no == number)
            .map(|e| e.raw_order_json.iccid.to_string())
            .collect();
        let (inventory, saved_at) = self.searched();
        for iccid in inventory.iccids_of_order(number) {
            if !found.iter().any(|f| f == iccid) {
                found.push(iccid.to_string());
            }
        }
        (found, saved_at.is_some() || self.scan.is_complete())
    }

    /// Starts the background read (on the first `/`).
    pub fn start_scan(&mut self) {
        if let Reading::Idle { again } = self.scan.reading {
            self.scan.reading = Reading::Pages {
                next: Remote::default(),
                again,
            };
        }
    }

    /// The index an earlier session saved, searched until the read is complete.
    pub fn use_saved(&mut self, saved: Loaded) {
        self.saved = Some(saved);
        self.recount_attention();
        self.refilter();
    }

    /// Forgets the background read (after `r`, or after money moved): it starts over if a
    /// search needs it.
    ///
    /// A read that was complete serves the search, its attention count and the places of its
    /// eSIMs until the new one is (as a saved index would): after a top-up or `r`, nothing found
    /// is lost and nothing waits on pages that a whole ICCID's lookup does not need.
    pub fn restart_scan(&mut self) {
        if self.scan.is_complete() {
            let read = std::mem::take(&mut self.scan.inventory);
            self.saved = Some(Loaded {
                inventory: Arc::try_unwrap(read).unwrap_or_else(|shared| (*shared).clone()),
                saved_at: self.now(),
                account: self.saved.take().map(|s| s.account).unwrap_or_default(),
            });
        }
        let again = self.saved.is_some();
        let reading = match self.scan.reading {
            Reading::Idle { .. } => Reading::Idle { again },
            _ => Reading::Pages {
                next: Remote::default(),
                again,
            },
        };
        self.scan = Scan {
            reading,
            ..Scan::default()
        };
        self.codes.clear();
        if let Some(f) = &mut self.fresh {
            f.record.invalidate();
        }
        self.recount_attention();
        self.refilter();
    }

    /// Stores a page of the background read if it is the one awaited (`None`: stale, dropped).
    pub fn accept_scan(
        &mut self,
        id: crate::tui::msg::JobId,
        esims: Vec<Esim>,
        total: u64,
        now: Instant,
    ) -> Option<ScanStep> {
        let Reading::Pages { next, .. } = &mut self.scan.reading else {
            return None;
        };
        if !next.resolve(id, (), now) {
            return None;
        }
        next.invalidate();
        let short = (esims.len() as u64) < SCAN_PAGE_SIZE;
        Arc::make_mut(&mut self.scan.inventory).extend(&esims, total);
        if let Some(saved) = &mut self.saved {
            saved.inventory.saw_total(total);
        }
        self.scan.total = Some(total);
        let complete = short || self.scan.inventory.len() as u64 >= total;
        if complete {
            self.scan.reading = Reading::Complete;
            self.recount_attention();
        }
        let found_whole = self.refilter();
        Some(ScanStep { complete, found_whole })
    }

    /// A page of the list came: its total moves the indexes' places; and if the cursor was
    /// sent to an eSIM found by the search, it lands on that eSIM's row.
    pub(in crate::tui::app) fn list_page_arrived(&mut self, page: u64, total: u64) {
        if self.status == StatusFilter::All {
            if self.scan.inventory.total_moves(total) {
                Arc::make_mut(&mut self.scan.inventory).saw_total(total);
            }
            if let Some(saved) = &mut self.saved {
                saved.inventory.saw_total(total);
            }
        }
        let Some(expect) = self.expect.clone() else { return };
        if page != self.list.current_page() {
            return;
        }
        self.expect = None;
        let items = self.list.page_items().unwrap_or_default();
        if let Some(row) = items.iter().position(|e| e.raw_order_json.iccid == expect) {
            self.list.select_row(row);
        } else if let Some(Found::Esim(e)) = self.fresh.as_ref().and_then(|f| f.record.value()) {
            // Not where the index said (the list changed): it stays selected, pinned.
            if e.raw_order_json.iccid == expect {
                self.pinned = Some(e.clone());
            }
        }
    }

    pub(in crate::tui::app) fn scan_slot(&mut self) -> Option<&mut dyn crate::tui::app::remote::Slot> {
        match &mut self.scan.reading {
            Reading::Pages { next, .. } => Some(next),
            _ => None,
        }
    }

    /// The search in effect changed: recomputes the results; `true` when it is a whole ICCID
    /// that the index has (now selected).
    pub fn search_changed(&mut self) -> bool {
        self.pinned = None;
        self.refilter()
    }

    /// The search closes (Esc): the eSIM selected in the results stays selected, the list
    /// going to its page and row, or pinned when its row is not known.
    pub fn close_search(&mut self, now: Instant) {
        let selected = self.selected_result().map(|r| match r {
            ResultRow::Indexed(row) => (EsimIccid::parse(row.iccid), Some(row)),
            ResultRow::Fetched(e) => (e.raw_order_json.iccid.clone(), None),
        });
        let target = selected.map(|(iccid, row)| {
            let (inventory, _) = self.searched();
            let place = row
                .and_then(|_| inventory.find(iccid.as_str()))
                .map(|i| inventory.place_among(i, &self.status))
                // Not in the index (a lookup found it): its row on a page at hand.
                .or_else(|| self.list.index_of(|e| e.raw_order_json.iccid == iccid.as_str()));
            (iccid, place)
        });
        let record = self.selected().cloned();
        self.search.clear();
        self.attention = false;
        self.results.clear();
        self.result_cursor = 0;
        match target {
            Some((iccid, Some(place))) => {
                self.list.go_to_index(place, now);
                self.expect = Some(iccid);
                if self.list.page_items().is_some() {
                    self.list_page_arrived(self.list.current_page(), self.list.total().unwrap_or(0));
                }
            }
            Some((_, None)) => self.pinned = record.map(Box::new),
            None => {}
        }
    }

    /// Recomputes the results after the search, the filter or the loaded items changed; keeps
    /// the selected eSIM selected. A whole ICCID that is found is selected, and `true` returned.
    fn refilter(&mut self) -> bool {
        let keep = self.search_active().then(|| self.selected_iccid()).flatten();
        let text = self.search.applied().to_string();
        let (inventory, _) = self.searched();
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
        self.result_cursor = keep
            .and_then(|k| position(k.as_str()))
            .unwrap_or(0)
            .min(self.result_count().saturating_sub(1));
        false
    }
}

impl TabState for Esims {
    fn context(&self) -> Context {
        Context::Esims
    }

    /// The list's pages (unless a search shows results instead), the record a search needs,
    /// the background read's next page, and the selected eSIM's activation code.
    fn fetch(&mut self, out: &mut Outbox<'_>, now: Instant, typing: bool) {
        if !self.search_active() {
            for page in self.list.wanted(now) {
                let id = out.send(Request::Esims(self.query(page)));
                self.list.start(page, id);
            }
        }
        if let Some((iccid, place)) = self.wanted_fresh(typing) {
            let id = out.send(Request::FindEsim {
                iccid: iccid.clone(),
                place,
            });
            self.fresh_started(iccid, place, id);
        }
        self.fetch_scan(out);
        self.fetch_code(out, now);
    }

    fn views(&self) -> Vec<Context> {
        vec![Context::EsimDetail, Context::Zoom]
    }

    fn still_wants(&self, request: &Request) -> bool {
        match request {
            Request::Esims(q) => !self.search_active() && self.is_current(q) && self.list.is_near(q.page.unwrap_or(1)),
            Request::FindEsim { iccid, .. } => self.wants_fresh(iccid.as_str()),
            Request::ActivationCode { esim } => self
                .selected()
                .is_some_and(|e| e.raw_order_json.iccid == esim.raw_order_json.iccid),
            _ => true,
        }
    }

    fn deadlines(&self) -> Vec<Instant> {
        self.list.hold_until().into_iter().collect()
    }

    fn refresh(&mut self) {
        self.reload();
    }

    fn move_cursor(&mut self, motion: Motion, now: Instant) {
        let page = if self.search_active() {
            SCREEN_PAGE
        } else {
            self.list.page_size() as i64
        };
        match motion.rows(page) {
            Some(d) => self.move_by(d, now),
            None if motion == Motion::End => self.go_to_end(now),
            None => self.go_to_start(now),
        }
    }

    /// The eSIM pane, or back to the table (on a narrow terminal the pane replaces it).
    fn open(&self, mode: &Mode) -> Option<Mode> {
        Some(match mode {
            Mode::Detail => Mode::Browse,
            _ => Mode::Detail,
        })
    }

    fn search_box(&mut self) -> Option<&mut SearchBox> {
        Some(&mut self.search)
    }

    fn search_changed(&mut self) -> bool {
        Esims::search_changed(self)
    }

    fn start_search(&mut self) {
        self.start_scan();
    }

    fn clear_search(&mut self, now: Instant) {
        self.close_search(now);
    }

    fn typing_hint(&self) -> &'static str {
        "type an ICCID or package  "
    }

    fn status(&self) -> Option<&StatusFilter> {
        Some(&self.status)
    }

    fn set_status(&mut self, status: StatusFilter) {
        Esims::set_status(self, status);
    }

    /// The list of the status filter; or, for a search, the eSIMs it found (once the whole
    /// inventory is known, so that none is missing).
    fn export(&self) -> Option<Result<ExportJob, &'static str>> {
        if !self.search_active() {
            return Some(Ok(ExportJob::Esims {
                query: self.query(1),
                only: None,
            }));
        }
        if !(self.scan.is_complete() || self.saved.is_some()) {
            return Some(Err(
                "The search is still reading the inventory; export when it is complete",
            ));
        }
        let only = self.result_rows().map(|r| r.iccid().to_string()).collect();
        Some(Ok(ExportJob::Esims {
            query: self.query(1),
            only: Some(only),
        }))
    }

    fn badge(&self) -> Option<String> {
        self.attention_count.map(|n| format!("(! {n})"))
    }

    fn top_up(&self) -> TopUpOf {
        match self.selected_iccid() {
            Some(iccid) => TopUpOf::Esim {
                iccid,
                hint: self
                    .selected()
                    .and_then(|e| crate::purchase::not_topupable_reason(&e.record.status)),
            },
            None => TopUpOf::Ask,
        }
    }
}
