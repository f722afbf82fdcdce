//! What a read of the eSIM list brought, as the index keeps it: the compact entries, and for a
//! page of the whole list (no filter) where on the list they sit. Made from every answer the
//! client reads (`esimdash_api::Client::on_esims_read`), whatever asked for it.

use super::Package;
use esimdash_domain::attention::{Judged, Limits};
use esimdash_domain::esim_state::Class;
use esimdash_domain::model::Esim;
pub use esimdash_domain::model::PagePlace;
use esimdash_domain::status::Status;

/// One eSIM as the index keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub iccid: String,
    pub status: Status,
    /// Its state, read from its whole record as every view reads it (`domain::esim_state`).
    pub class: Class,
    pub package: Package,
    pub limits: Limits,
    /// The number of the order that made it.
    pub order: String,
}

impl Entry {
    pub fn of(e: &Esim) -> Self {
        Self {
            iccid: e.raw_order_json.iccid.to_string(),
            status: e.record.status.clone(),
            class: e.class(),
            package: Package::of(e),
            limits: e.limits(),
            order: e.record.provider_order_no.to_string(),
        }
    }
}

/// eSIMs read together, and when.
#[derive(Debug, Clone, PartialEq)]
pub struct Seen {
    /// Set for a page of the whole list, newest first; `None` for records read otherwise (a
    /// filtered page, a lookup), which refresh what the index has but have no place.
    pub place: Option<PagePlace>,
    pub entries: Vec<Entry>,
    /// Unix seconds.
    pub read_at: i64,
}

impl Seen {
    /// A page of the whole list. Its place is kept only where it can be trusted: a page
    /// holding more items than its size (a server that ignored the size) has none.
    pub fn page(esims: &[Esim], place: PagePlace, read_at: i64) -> Self {
        let fits = place.size > 0 && place.page > 0 && esims.len() as u64 <= place.size;
        Self {
            place: fits.then_some(place),
            entries: esims.iter().map(Entry::of).collect(),
            read_at,
        }
    }

    /// What the client read: a page of the whole list at its place, or records without one.
    pub fn read(esims: &[Esim], place: Option<PagePlace>) -> Self {
        let now = chrono::Utc::now().timestamp();
        match place {
            Some(place) => Self::page(esims, place, now),
            None => Self::records(esims, now),
        }
    }

    /// Records read without a place.
    pub fn records(esims: &[Esim], read_at: i64) -> Self {
        Self {
            place: None,
            entries: esims.iter().map(Entry::of).collect(),
            read_at,
        }
    }
}
