//! Marks on My eSIMs: eSIMs picked one by one (`space`) or every result of a search at once,
//! for what is done to many at a time (their QR codes written into one folder). A mark keeps
//! what finding the eSIM again needs: its record when the dashboard had it, else where the
//! index saw it.

use super::ResultRow;
use crate::index::Index;
use esimdash_api::model::Esim;
use esimdash_domain::iccid::EsimIccid;
use esimdash_front::export::qr_folder::Wanted;
use std::collections::HashSet;

#[derive(Debug, Clone, Default)]
pub struct Marks {
    /// In the order they were marked.
    marked: Vec<Wanted>,
    iccids: HashSet<EsimIccid>,
    /// The plan and quantity of the last top-up of these marks that stopped with some still
    /// marked: `t` again offers the same.
    last_choice: Option<(String, u32)>,
}

impl Marks {
    pub fn len(&self) -> usize {
        self.marked.len()
    }

    pub fn is_empty(&self) -> bool {
        self.marked.is_empty()
    }

    pub fn contains(&self, iccid: &EsimIccid) -> bool {
        self.iccids.contains(iccid)
    }

    /// Whether a search result's eSIM is marked (asked of every row drawn: nothing is made).
    pub fn contains_row(&self, row: &ResultRow<'_>) -> bool {
        self.iccids.contains(row.text())
    }

    /// Marks it, or unmarks it if it was: whether it is marked now.
    pub fn toggle(&mut self, wanted: Wanted) -> bool {
        if self.iccids.remove(&wanted.iccid) {
            self.marked.retain(|m| m.iccid != wanted.iccid);
            return false;
        }
        self.add(wanted);
        true
    }

    /// Marks every one of `all`; if each was marked already, unmarks them instead (the same
    /// key twice undoes it). How many of them are marked now.
    pub fn toggle_all(&mut self, all: Vec<Wanted>) -> usize {
        if !all.is_empty() && all.iter().all(|w| self.contains(&w.iccid)) {
            self.unmark(all.iter().map(|w| &w.iccid));
            return 0;
        }
        let n = all.len();
        for wanted in all {
            if !self.contains(&wanted.iccid) {
                self.add(wanted);
            }
        }
        n
    }

    /// Unmarks these (those a bulk top-up placed, say).
    pub fn unmark<'a>(&mut self, iccids: impl IntoIterator<Item = &'a EsimIccid>) {
        let gone: HashSet<&EsimIccid> = iccids.into_iter().collect();
        self.marked.retain(|m| !gone.contains(&m.iccid));
        self.iccids.retain(|i| !gone.contains(i));
    }

    fn add(&mut self, wanted: Wanted) {
        self.iccids.insert(wanted.iccid.clone());
        self.marked.push(wanted);
    }

    pub fn clear(&mut self) {
        self.marked.clear();
        self.iccids.clear();
        self.last_choice = None;
    }

    /// A top-up of the marks stopped with these still marked: `t` again offers `slug` × `qty`.
    pub fn remember_choice(&mut self, slug: String, qty: u32) {
        self.last_choice = (!self.is_empty()).then_some((slug, qty));
    }

    pub fn last_choice(&self) -> Option<&(String, u32)> {
        self.last_choice.as_ref()
    }

    /// The marked eSIMs, in the order they were marked.
    pub fn wanted(&self) -> Vec<Wanted> {
        self.marked.clone()
    }
}

impl super::Esims {
    /// What finding a row's eSIM again needs: its record when here, where the index saw it.
    pub(super) fn wanted(iccid: EsimIccid, esim: Option<&Esim>, ix: &Index) -> Wanted {
        Wanted {
            seen: ix.inventory().whereabouts(&iccid),
            iccid,
            esim: esim.cloned().map(Box::new),
        }
    }

    /// Marks the selected eSIM, or unmarks it: whether it is marked now (`None`: none selected).
    pub(super) fn toggle_mark(&mut self, ix: &Index) -> Option<bool> {
        let iccid = self.selected_iccid(ix)?;
        let wanted = Self::wanted(iccid, self.selected(ix), ix);
        Some(self.marks.toggle(wanted))
    }

    /// Marks every result of the search (without one, every row of the page shown); all of
    /// them marked already, unmarks them. How many are marked of them now.
    pub(super) fn toggle_mark_all(&mut self, ix: &Index) -> usize {
        let all: Vec<_> = if self.search_active() {
            self.result_rows(ix)
                .map(|row| match row {
                    ResultRow::Fetched(e) => Self::wanted(row.iccid(), Some(e), ix),
                    ResultRow::Indexed(_) => Self::wanted(row.iccid(), None, ix),
                })
                .collect()
        } else {
            self.list
                .page_items()
                .unwrap_or_default()
                .iter()
                .map(|e| Self::wanted(e.raw_order_json.iccid.clone(), Some(e), ix))
                .collect()
        };
        self.marks.toggle_all(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(iccid: &str) -> Wanted {
        Wanted {
            iccid: EsimIccid::parse(iccid),
            esim: None,
            seen: None,
        }
    }

    #[test]
    fn a_mark_toggles_and_marking_all_twice_undoes_it() {
        let mut marks = Marks::default();
        assert!(marks.toggle(w("a")));
        assert!(!marks.toggle(w("a")));
        assert!(marks.is_empty());
        marks.toggle(w("b"));
        assert_eq!(marks.toggle_all(vec![w("a"), w("b"), w("c")]), 3);
        assert_eq!(
            marks.wanted().iter().map(|m| m.iccid.as_str()).collect::<Vec<_>>(),
            ["b", "a", "c"]
        );
        assert_eq!(marks.toggle_all(vec![w("a"), w("c")]), 0, "all marked: unmarked");
        assert_eq!(marks.len(), 1);
        assert!(marks.contains(&EsimIccid::parse("b")));
    }
}
