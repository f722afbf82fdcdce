//! The records My eSIMs fetches fresh for what is selected: the lookup's record of a whole
//! ICCID or of the selected search result (with the earlier profiles of a reissued ICCID),
//! activation codes per profile, and the eSIM last topped up here, watched until its record
//! shows the top-up.

use super::{Esims, ResultRow};
use crate::index::Index;
use crate::kit::jobs::Outbox;
use crate::kit::remote::{Loaded, Remote};
use crate::msg::Request;
use esimdash_api::Found;
use esimdash_api::model::Esim;
use esimdash_domain::iccid::Iccid;
use esimdash_inventory::Whereabouts;
use std::time::Instant;

/// An eSIM's activation code once fetched: the code, or why there is none, in a sentence.
pub type Code = Remote<Result<String, String>>;

/// Which profile a code belongs to: the ICCID and the provider's `esimTranNo`.
pub fn profile_key(esim: &Esim) -> String {
    let raw = &esim.raw_order_json;
    format!("{}#{}", raw.iccid.as_str(), raw.esim_tran_no)
}

/// The eSIM last topped up here, with its data and expiry as they were: a newer record that
/// shows more tells that the top-up arrived.
#[derive(Debug, Clone)]
pub(super) struct TopUpWatch {
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

impl Esims {
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
    pub(super) fn note_top_up(&mut self, iccid: &Iccid, ix: &Index) {
        self.to_refresh.push(iccid.clone());
        let before = self
            .selected(ix)
            .into_iter()
            .chain(self.list.loaded())
            .find(|e| e.raw_order_json.iccid.as_str() == iccid.as_str())
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
        if esim.raw_order_json.iccid.as_str() != iccid.as_str() {
            return None;
        }
        let raw = &esim.raw_order_json;
        let changed = raw.total_volume != *volume || raw.expired_time.text() != expires;
        let reading = self.list.is_loading() || self.fresh.as_ref().is_some_and(|f| f.record.is_loading());
        (changed || !reading).then_some(changed)
    }

    /// The selected eSIM's activation code, once asked for.
    pub fn selected_code(&self, ix: &Index) -> Option<&Code> {
        self.selected(ix).and_then(|e| self.code(e))
    }

    /// The activation code of this eSIM's profile, once asked for.
    pub fn code(&self, esim: &Esim) -> Option<&Code> {
        self.codes.get(&profile_key(esim))
    }

    /// The selected eSIM's activation code: from `ac` at once, else its QR image is fetched.
    pub(super) fn fetch_code(&mut self, out: &mut Outbox<'_>, now: Instant, ix: &Index) {
        let Some(esim) = self.selected(ix) else { return };
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

    /// Which record the search needs fetched now: the whole ICCID searched for (at once), or
    /// the selected result's with its place, for a server without the lookup (once typing
    /// stops: a record per letter typed would spend the budget on answers nobody reads).
    pub fn wanted_fresh(&self, typing: bool, ix: &Index) -> Option<(Iccid, Option<Whereabouts>)> {
        if !self.search_active() {
            return None;
        }
        let iccid = match (self.whole_iccid(), self.selected_result(ix)) {
            (Some(whole), _) => whole,
            (None, Some(ResultRow::Indexed(row))) if !typing => Iccid::parse(row.iccid).ok()?,
            (None, _) => return None,
        };
        let seen = ix.inventory().whereabouts(iccid.as_str());
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

    pub(super) fn fresh_slot(&mut self, iccid: &Iccid) -> Option<&mut dyn crate::kit::remote::Slot> {
        self.fresh
            .as_mut()
            .filter(|f| f.iccid == *iccid)
            .map(|f| &mut f.record as &mut dyn crate::kit::remote::Slot)
    }

    /// Whether the fresh record for `iccid` is still of use: the whole ICCID searched for, or
    /// the selected result.
    pub fn wants_fresh(&self, iccid: &Iccid, ix: &Index) -> bool {
        if !self.search_active() {
            return false;
        }
        match self.whole_iccid() {
            Some(whole) => whole == *iccid,
            None => self.selected_iccid(ix).is_some_and(|s| s.as_str() == iccid.as_str()),
        }
    }

    /// The lookup answered; `true` when it found the whole ICCID searched for (now selected).
    pub(super) fn accept_fresh(
        &mut self,
        id: crate::msg::JobId,
        found: Found,
        earlier: Vec<Esim>,
        now: Instant,
        ix: &Index,
    ) -> bool {
        let whole = self.whole_iccid();
        let Some(fresh) = self.fresh.as_mut() else { return false };
        if !fresh.record.resolve(id, found, now) {
            return false;
        }
        fresh.earlier = earlier;
        let found_whole = whole.is_some_and(
            |w| matches!(fresh.record.value(), Some(Found::Esim(e)) if e.raw_order_json.iccid.as_str() == w.as_str()),
        );
        if found_whole {
            self.refilter(ix);
        }
        found_whole
    }
}
