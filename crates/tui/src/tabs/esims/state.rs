//! The My eSIMs tab: server pages with a status filter, and a search by ICCID or package.
//! A whole ICCID is asked of the server (docs/api-contract.md's lookup, one request). Anything else is
//! searched in the inventory index: the saved one of an earlier session at once, and the whole
//! inventory read in the background, a page at a time (paced by the client within the key's
//! limit). The selected result's full record is always fetched fresh: by the lookup, or from
//! the page at its place in the list. Activation codes are kept per eSIM once known.

use super::index_read::IndexRead;
use crate::app::jobs::Outbox;
use crate::app::paged::Paged;
use crate::app::remote::Loaded;
use crate::app::remote::Remote;
use crate::app::search::SearchBox;
use crate::msg::Request;
use crate::tabs::orders::PAGE_SIZE;
use crate::tabs::whole_iccid;
use chrono::{DateTime, Utc};
use esimdash_api::Found;
use esimdash_api::model::{Esim, EsimQuery};
use esimdash_domain::attention::AttentionRule;
use esimdash_domain::iccid::{EsimIccid, Iccid};
use esimdash_domain::status::StatusFilter;
use esimdash_inventory::{AttentionAt, Inventory, Row, Whereabouts};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// An eSIM's activation code once fetched: the code, or why there is none, in a sentence.
pub type Code = Remote<Result<String, String>>;

/// Which profile a code belongs to: the ICCID and the provider's `esimTranNo`.
pub fn profile_key(esim: &Esim) -> String {
    let raw = &esim.raw_order_json;
    format!("{}#{}", raw.iccid.as_str(), raw.esim_tran_no)
}

/// What eSIMs the client read brought to the search.
#[derive(Debug, Clone)]
pub struct SeenStep {
    /// The whole ICCID searched for is now among the results (selected).
    pub found_whole: bool,
}

/// The eSIM last topped up here, with its data and expiry as they were: a newer record that
/// shows more tells that the top-up arrived.
#[derive(Debug, Clone)]
struct TopUpWatch {
    iccid: Iccid,
    volume: Option<u64>,
    expires: String,
}

/// The full record of one eSIM, fetched fresh for the search.
#[derive(Debug, Clone)]
pub struct Fresh {
    pub iccid: Iccid,
    /// Where the index saw it when asked (a server without the lookup is read there).
    pub seen: Option<Whereabouts>,
    pub record: Remote<Found>,
    /// The lookup's earlier profiles of a reissued ICCID (newest first).
    pub earlier: Vec<Esim>,
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

    /// The order that made the row's profile (empty where the index kept none).
    pub fn order(&self) -> &str {
        match self {
            ResultRow::Indexed(r) => r.order,
            ResultRow::Fetched(e) => e.record.provider_order_no.as_str(),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Esims {
    pub(super) list: Paged<Esim>,
    pub(super) status: StatusFilter,
    pub(super) search: SearchBox,
    pub(super) index: IndexRead,
    /// A result whose status was read longer ago shows its age.
    pub(super) stale_after: chrono::Duration,
    /// Entries of the searched index that match the search and the status filter.
    pub(super) results: Vec<u32>,
    pub(super) result_cursor: usize,
    /// The selected result's record, or the whole ICCID's lookup.
    pub(super) fresh: Option<Fresh>,
    /// After the search closed on an eSIM whose row in the list is not known: still selected.
    pub(super) pinned: Option<Box<Esim>>,
    /// The eSIM last topped up here and its volume and expiry before: whether the provider's
    /// record shows the top-up yet.
    topped_up: Option<TopUpWatch>,
    /// The ICCID the list's cursor was sent to, checked when its page comes.
    pub(super) expect: Option<(EsimIccid, String)>,
    /// Activation codes by profile (`profile_key`): an ICCID a provider reissued has a code per
    /// profile, and one must never be shown for the other.
    pub(super) codes: HashMap<String, Code>,
    /// The "needs attention" filter over the index is on.
    pub(super) attention: bool,
    /// How many eSIMs of the searched index need attention (by the configured rule), once the
    /// whole inventory is known.
    pub(super) attention_count: Option<usize>,
    pub(super) rule: AttentionRule,
    /// "Now" for the attention rule and the index's age; pinned by tests, whose sandbox is seeded
    /// at a fixed time.
    pub(super) clock: Option<DateTime<Utc>>,
    /// The eSIMs marked for what is done to many at once.
    pub(super) marks: super::marks::Marks,
    /// The order whose eSIM the list was last read from the top for (`order_esims`).
    pub(super) sought_order: Option<String>,
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
            index: IndexRead::default(),
            stale_after: chrono::Duration::hours(24),
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
            marks: super::marks::Marks::default(),
            sought_order: None,
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
    pub fn pane_scroll(&self) -> u16 {
        match (&self.pane_scroll, self.selected_iccid()) {
            (Some((scrolled, screens)), Some(selected)) if *scrolled == selected => *screens,
            _ => 0,
        }
    }

    /// J or K: the pane's next or previous screenful (`by`: +1 or -1).
    pub(super) fn scroll_pane(&mut self, by: i16) {
        if let Some(selected) = self.selected_iccid() {
            let screens = self.pane_scroll().saturating_add_signed(by).min(PANE_SCREENS);
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

    /// The inventory index and its reads.
    pub fn index(&self) -> &IndexRead {
        &self.index
    }

    /// How old a result's status is, when it was read longer ago than the configured age.
    pub fn stale_age(&self, row: &Row<'_>) -> Option<chrono::Duration> {
        let read = DateTime::from_timestamp(row.read_at, 0)?;
        let age = self.now() - read;
        (age > self.stale_after).then_some(age)
    }

    /// After how long a status read shows its age (config `status_stale_hours`).
    pub fn set_stale_after(&mut self, after: chrono::Duration) {
        self.stale_after = after;
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
        let earlier = self.fresh.iter().flat_map(|f| f.earlier.iter());
        let mut found: Vec<&Esim> = Vec::new();
        for e in self
            .list
            .loaded()
            .chain(fresh)
            .chain(earlier)
            .chain(self.pinned())
            .chain(Some(esim))
        {
            let same = |f: &&Esim| f.raw_order_json.esim_tran_no == e.raw_order_json.esim_tran_no;
            if e.raw_order_json.iccid == *iccid && !found.iter().any(same) {
                found.push(e);
            }
        }
        found.sort_by_key(|e| std::cmp::Reverse(esimdash_api::tran_no_order(&e.raw_order_json.esim_tran_no)));
        found
    }

    /// Top-ups of these eSIMs were placed (a bulk run): their records are read again, so that
    /// the attention rows and every count follow at once.
    pub(super) fn note_top_ups<'a>(&mut self, iccids: impl IntoIterator<Item = &'a Iccid>) {
        self.to_refresh.extend(iccids.into_iter().cloned());
    }

    /// A top-up of this eSIM was placed: its record as it was, to tell when the new one shows it.
    pub(super) fn note_top_up(&mut self, iccid: &Iccid) {
        self.to_refresh.push(iccid.clone());
        let before = self
            .selected()
            .into_iter()
            .chain(self.list.loaded())
            .find(|e| e.raw_order_json.iccid == iccid.as_str())
            .map(|e| {
                (
                    e.raw_order_json.total_volume,
                    e.raw_order_json.expired_time.text().to_string(),
                )
            });
        self.topped_up = before.map(|(volume, expires)| TopUpWatch {
            iccid: iccid.clone(),
            volume,
            expires,
        });
    }

    /// For the eSIM last topped up here: `Some(true)` once its record shows more data or days,
    /// `Some(false)` while the record read after the top-up does not yet (nothing is being read).
    pub fn top_up_shown(&self, esim: &Esim) -> Option<bool> {
        let TopUpWatch { iccid, volume, expires } = self.topped_up.as_ref()?;
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

    /// The index the search reads.
    pub fn searched(&self) -> &Inventory {
        self.index.inventory()
    }

    /// The whole ICCID searched for, if the search is one.
    pub fn whole_iccid(&self) -> Option<Iccid> {
        whole_iccid(self.search.applied())
    }

    /// The lookup's record when it is the whole ICCID searched for and the index lacks it.
    pub(super) fn fetched_only(&self) -> Option<&Esim> {
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

    /// The result rows, in order.
    pub fn result_rows(&self) -> impl Iterator<Item = ResultRow<'_>> {
        self.result_rows_from(0)
    }

    /// The result rows from the `start`th, in order: the rows before are never looked at (a
    /// cursor deep in a million results is drawn in the time of a screenful).
    pub fn result_rows_from(&self, start: usize) -> impl Iterator<Item = ResultRow<'_>> {
        let inventory = self.searched();
        let fetched = self.fetched_only().map(ResultRow::Fetched);
        let skip = start.saturating_sub(usize::from(fetched.is_some()));
        let fetched = fetched.filter(|_| start == 0);
        fetched.into_iter().chain(
            self.results
                .get(skip..)
                .unwrap_or_default()
                .iter()
                .filter_map(move |&i| inventory.row(i as usize).map(ResultRow::Indexed)),
        )
    }

    pub fn marks(&self) -> &super::marks::Marks {
        &self.marks
    }

    pub(super) fn marks_mut(&mut self) -> &mut super::marks::Marks {
        &mut self.marks
    }

    /// What finding a row's eSIM again needs: its record when here, where the index saw it.
    pub(super) fn wanted(&self, iccid: &str, esim: Option<&Esim>) -> esimdash_front::export::qr_folder::Wanted {
        esimdash_front::export::qr_folder::Wanted {
            iccid: iccid.to_string(),
            esim: esim.cloned().map(Box::new),
            seen: self.searched().whereabouts(iccid),
        }
    }

    /// Marks the selected eSIM, or unmarks it: whether it is marked now (`None`: none selected).
    pub(super) fn toggle_mark(&mut self) -> Option<bool> {
        let iccid = self.selected_iccid()?;
        let wanted = self.wanted(iccid.as_str(), self.selected());
        Some(self.marks.toggle(wanted))
    }

    /// Marks every result of the search (without one, every row of the page shown); all of
    /// them marked already, unmarks them. How many are marked of them now.
    pub(super) fn toggle_mark_all(&mut self) -> usize {
        let all: Vec<_> = if self.search_active() {
            self.result_rows()
                .map(|row| match row {
                    ResultRow::Fetched(e) => self.wanted(row.iccid(), Some(e)),
                    ResultRow::Indexed(_) => self.wanted(row.iccid(), None),
                })
                .collect()
        } else {
            self.list
                .page_items()
                .unwrap_or_default()
                .iter()
                .map(|e| self.wanted(e.raw_order_json.iccid.as_str(), Some(e)))
                .collect()
        };
        self.marks.toggle_all(all)
    }

    pub(super) fn selected_result(&self) -> Option<ResultRow<'_>> {
        if let Some(e) = self.fetched_only() {
            return (self.result_cursor == 0).then_some(ResultRow::Fetched(e));
        }
        let e = *self.results.get(self.result_cursor)?;
        self.searched().row(e as usize).map(ResultRow::Indexed)
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

    pub(super) fn set_status(&mut self, status: StatusFilter) {
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
    pub(super) fn toggle_attention(&mut self) {
        self.attention = !self.attention;
        if self.attention {
            self.index.want_whole();
        }
        self.pinned = None;
        self.refilter();
    }

    /// A new account's inventory: empty, with this one's rule and clock (the user's).
    pub fn emptied(&self) -> Esims {
        Esims {
            rule: self.rule,
            clock: self.clock,
            stale_after: self.stale_after,
            ..Esims::default()
        }
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

    /// `r`, or after money moved: the list and the background read start over.
    pub(super) fn reload(&mut self) {
        self.list.reload();
        self.restart_scan();
    }

    /// The selected eSIM's activation code: from `ac` at once, else its QR image is fetched.
    pub(super) fn fetch_code(&mut self, out: &mut Outbox<'_>, now: Instant) {
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
            let code = Remote::Loaded(Loaded {
                value: esimdash_domain::lpa::checked_code(ac),
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

    pub(super) fn attention_at(&self, rule: AttentionRule) -> AttentionAt {
        AttentionAt { rule, now: self.now() }
    }

    /// Counts again after the index changed; unknown until the whole inventory is.
    pub(super) fn recount_attention(&mut self) {
        let whole = self.index.is_complete();
        let inventory = self.searched();
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
            // The row's own profile: a reissued ICCID has a row per profile (ICCID and order),
            // and the old one's row never shows the current profile's state or code.
            let row = self.selected_result()?;
            let fresh = self.fresh.as_ref()?;
            let current = match fresh.record.value()? {
                Found::Esim(e) => Some(&**e),
                _ => None,
            };
            return current.into_iter().chain(&fresh.earlier).find(|e| {
                e.raw_order_json.iccid == row.iccid()
                    && (row.order().is_empty() || e.record.provider_order_no.as_str() == row.order())
            });
        }
        match &self.pinned {
            Some(e) => Some(e),
            None => self.list.selected(),
        }
    }

    /// The selected eSIM's state: its record's, else its search row's as the index read it.
    pub fn selected_class(&self) -> Option<esimdash_domain::esim_state::Class> {
        self.selected()
            .map(|e| e.facts().classify())
            .or_else(|| match self.selected_result()? {
                ResultRow::Indexed(r) if self.search_active() => Some(r.class),
                _ => None,
            })
    }

    /// Which record the search needs fetched now: the whole ICCID searched for (at once), or
    /// the selected result's with its place, for a server without the lookup (once typing
    /// stops: a record per letter typed would spend the budget on answers nobody reads).
    pub fn wanted_fresh(&self, typing: bool) -> Option<(Iccid, Option<Whereabouts>)> {
        if !self.search_active() {
            return None;
        }
        let iccid = match (self.whole_iccid(), self.selected_result()) {
            (Some(whole), _) => whole,
            (None, Some(ResultRow::Indexed(row))) if !typing => Iccid::parse(row.iccid).ok()?,
            (None, _) => return None,
        };
        let seen = self.searched().whereabouts(iccid.as_str());
        match &self.fresh {
            // Asked already; again only if it could not be told and a place is now known.
            Some(f) if f.iccid == iccid && !f.record.wanted() => {
                let unknown = matches!(f.record.value(), Some(Found::Unknown(_)));
                (unknown && seen.is_some() && f.seen != seen).then_some((iccid, seen))
            }
            _ => Some((iccid, seen)),
        }
    }

    pub(super) fn fresh_started(&mut self, iccid: Iccid, seen: Option<Whereabouts>, id: crate::msg::JobId) {
        let mut record = Remote::default();
        record.start(id);
        self.fresh = Some(Fresh {
            iccid,
            seen,
            record,
            earlier: Vec::new(),
        });
    }

    pub(super) fn fresh_slot(&mut self, iccid: &Iccid) -> Option<&mut dyn crate::app::remote::Slot> {
        self.fresh
            .as_mut()
            .filter(|f| f.iccid == *iccid)
            .map(|f| &mut f.record as &mut dyn crate::app::remote::Slot)
    }

    /// Whether the fresh record for `iccid` is still of use: the whole ICCID searched for, or
    /// the selected result.
    pub fn wants_fresh(&self, iccid: &Iccid) -> bool {
        if !self.search_active() {
            return false;
        }
        match self.whole_iccid() {
            Some(whole) => whole == *iccid,
            None => self.selected_iccid().is_some_and(|s| s.as_str() == iccid.as_str()),
        }
    }

    /// The lookup answered; `true` when it found the whole ICCID searched for (now selected).
    pub(super) fn accept_fresh(
        &mut self,
        id: crate::msg::JobId,
        found: Found,
        earlier: Vec<Esim>,
        now: Instant,
    ) -> bool {
        let whole = self.whole_iccid();
        let Some(fresh) = self.fresh.as_mut() else { return false };
        if !fresh.record.resolve(id, found, now) {
            return false;
        }
        fresh.earlier = earlier;
        let found_whole = whole.is_some_and(
            |w| matches!(fresh.record.value(), Some(Found::Esim(e)) if e.raw_order_json.iccid == w.as_str()),
        );
        if found_whole {
            self.refilter();
        }
        found_whole
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
    pub(super) fn find(&mut self, iccid: &str, now: Instant) {
        // One eSIM asked for by name is shown whatever it needs: never under "needs attention".
        self.attention = false;
        self.search.clear();
        self.search.paste(iccid, now);
        self.search.apply();
        self.index.want_whole();
        self.search_changed();
    }
}
