//! Where an order's eSIMs are, as far as the dashboard knows: one answer for the order's detail
//! and for `e` (go to its eSIM), so that neither says "looked for" while nothing looks.

use super::Index;
use esimdash_api::model::{Esim, Order};
use esimdash_domain::iccid::EsimIccid;
use esimdash_domain::order_no::OrderNo;
use esimdash_domain::status::Status;
use esimdash_domain::text::grouped;

/// An order's eSIMs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OrderEsims {
    /// Their ICCIDs.
    Found(Vec<EsimIccid>),
    /// The order is pending: the provider has not allocated its eSIM yet.
    NotAllocated,
    /// Being read: the index reads the list (from the top, or the pages it lacks).
    LookingFor { covered: u64, total: Option<u64> },
    /// Not in the part of the list read, and nothing reads further now (the read failed, was
    /// held back, or the session is offline): `r` reads again.
    NotRead { covered: u64, total: Option<u64> },
    /// The whole list was read, from the top after the order was seen, and has none.
    NotInList,
}

impl OrderEsims {
    /// In words, for the order's detail (`refresh_key`: the key that reads again).
    pub fn words(&self, refresh_key: &str) -> String {
        match self {
            OrderEsims::Found(found) => found.iter().map(EsimIccid::as_str).collect::<Vec<_>>().join(", "),
            OrderEsims::NotAllocated => "not allocated yet (order pending)".to_string(),
            OrderEsims::NotInList => "none in this account's eSIM list (read from the top just now)".to_string(),
            OrderEsims::LookingFor { covered, total } => format!(
                "looking for it… ({} of {} eSIMs in the index)",
                grouped(*covered),
                total.map_or("…".to_string(), grouped)
            ),
            OrderEsims::NotRead { covered, total } => format!(
                "not among the {} of {} eSIMs read; {refresh_key} reads again",
                grouped(*covered),
                total.map_or("…".to_string(), grouped),
            ),
        }
    }
}

impl Index {
    /// The ICCIDs of the eSIMs an order made, from the records at hand (a tab's pages, a
    /// lookup's record) and the index; and whether the index is whole (so that none found
    /// means none).
    pub fn iccids_of_order<'a>(
        &self,
        number: &OrderNo,
        at_hand: impl Iterator<Item = &'a Esim>,
    ) -> (Vec<EsimIccid>, bool) {
        let mut found: Vec<EsimIccid> = Vec::new();
        for e in at_hand.filter(|e| e.record.provider_order_no == *number) {
            if !found.contains(&e.raw_order_json.iccid) {
                found.push(e.raw_order_json.iccid.clone());
            }
        }
        for iccid in self.inventory().iccids_of_order(number.as_str()) {
            if !found.iter().any(|f| f == iccid) {
                found.push(EsimIccid::parse(iccid));
            }
        }
        (found, self.read.is_complete())
    }

    /// Where `order`'s eSIMs are. An order that is not pending and whose eSIM the index lacks
    /// though complete may be newer than the index's read (allocated since): `look_for_order`
    /// reads the list from the top once for it.
    pub fn order_esims<'a>(&self, order: &Order, at_hand: impl Iterator<Item = &'a Esim>) -> OrderEsims {
        let (found, whole) = self.iccids_of_order(&order.record.provider_order_no, at_hand);
        if !found.is_empty() {
            return OrderEsims::Found(found);
        }
        if order.record.status == Status::Pending {
            return OrderEsims::NotAllocated;
        }
        let read = &self.read;
        let read_for_it = self.sought_order.as_deref() == Some(order.record.provider_order_no.as_str());
        if whole && read_for_it && !read.reads_top() && !read.is_reading() {
            return OrderEsims::NotInList;
        }
        let (covered, total) = (read.covered(), read.total());
        // "Looking" only while a page is asked for or about to be.
        if read.is_reading() || read.wanted_page().is_some() {
            OrderEsims::LookingFor { covered, total }
        } else {
            OrderEsims::NotRead { covered, total }
        }
    }

    /// Reads what finding `order`'s eSIM needs: the pages the index lacks, or once, the list
    /// from the top (its eSIM may be newer than the index's read).
    pub fn look_for_order<'a>(&mut self, order: &Order, at_hand: impl Iterator<Item = &'a Esim>) {
        let number = order.record.provider_order_no.as_str();
        if !matches!(
            self.order_esims(order, at_hand),
            OrderEsims::LookingFor { .. } | OrderEsims::NotRead { .. }
        ) {
            return;
        }
        if self.sought_order.as_deref() != Some(number) {
            self.sought_order = Some(number.to_string());
            if self.read.is_complete() {
                self.read.from_the_top();
            }
        }
        self.read.want_whole();
    }
}
