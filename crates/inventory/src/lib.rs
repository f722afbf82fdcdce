#![warn(clippy::too_many_lines)]

//! The eSIM inventory as finding needs it: per eSIM its ICCID, status, package and place in the
//! list, and nothing else (never the activation code). Kept compact so that 100 000 eSIMs take
//! a few MB, searched in one pass (`search`), and saved between sessions in a database
//! (`store`) that commands ask without loading it.
//!
//! The index is filled from every page of the list that is read, in any order: a find's page
//! at its place, the background read, an export. It knows which places it covers, so that a
//! read resumes at its first gap and a find of an eSIM seen before costs one page.
//!
//! Places: the list is newest first, so a new eSIM pushes every older one down by one. An entry
//! is therefore kept by its place counted from the oldest eSIM (`from_end`), which new eSIMs do
//! not move; its place in the list now is `total - 1 - from_end`, with the latest total seen.

pub mod keeping;
pub mod kept;
mod legacy;
pub mod picture;
pub mod saved_file;
mod search;
pub mod seen;
pub mod store;

pub use esimdash_domain::model::Whereabouts;
pub use search::{AttentionAt, Selection};
pub use seen::{Entry, PagePlace, Seen};

use esimdash_domain::attention::Limits;
use esimdash_domain::esim_state::Class;
use esimdash_domain::model::Esim;
use esimdash_domain::status::Status;
use std::collections::HashMap;

/// A package as the inventory's rows show it, stored once however many eSIMs carry it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Package {
    pub name: String,
    pub slug: String,
    pub code: String,
    pub location: String,
}

impl Package {
    fn of(e: &Esim) -> Self {
        Self {
            name: e.record.package_name.clone(),
            slug: e.record.slug.clone(),
            code: e.record.package_code.clone(),
            location: e.record.location_code.clone(),
        }
    }
}

/// One eSIM as a row of the search results shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row<'a> {
    pub iccid: &'a str,
    /// The order that made it: with the ICCID, which profile of a reissued ICCID the row is.
    pub order: &'a str,
    pub status: &'a Status,
    /// Its state as its record read when indexed: the words and colour every view shows.
    pub class: Class,
    pub package: &'a Package,
    /// Its place in the list now (0: the newest).
    pub place: u64,
    pub limits: Limits,
    /// When its status was read (Unix seconds).
    pub read_at: i64,
}

/// A class as the index keeps it: its place in `Class::ALL`.
fn class_id(class: Class) -> u8 {
    Class::ALL
        .iter()
        .position(|c| *c == class)
        .unwrap_or(Class::ALL.len() - 1) as u8
}

/// An entry that a later read replaced (another eSIM was read at its place).
const GONE: u32 = u32::MAX;
/// The end of a chain of entries with one ICCID hash.
const NONE: u32 = u32::MAX;

/// What entries are found by: a hash of the ICCID (equal hashes are told apart by the ICCID).
fn iccid_hash(iccid: &str) -> u32 {
    use std::hash::BuildHasher;
    static KEYS: std::sync::OnceLock<std::collections::hash_map::RandomState> = std::sync::OnceLock::new();
    KEYS.get_or_init(Default::default).hash_one(iccid) as u32
}

/// What merging a read changed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Merged {
    /// Entries the index had already, at the same place (a read from the top stops at these).
    pub known: usize,
    /// Entries new to the index, or read at a place where it had another eSIM.
    pub added: usize,
    /// Entries whose status or limits changed.
    pub refreshed: usize,
    /// The in-memory index's entries added or changed (what a search looks at again).
    pub touched: Vec<u32>,
    /// Entries replaced by another eSIM read at their place, or past the list's new end.
    pub gone: usize,
}

impl Merged {
    /// Whether what the search or the attention count sees changed.
    pub fn changed(&self) -> bool {
        self.added > 0 || self.refreshed > 0
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inventory {
    /// Every ICCID, each followed by a newline: one text to search in one pass. Entries are
    /// in the order they were first read; `order` gives the list's.
    iccids: String,
    /// Where each entry's ICCID starts in `iccids`.
    starts: Vec<u32>,
    status: Vec<u16>,
    /// Per entry, its class's place in `Class::ALL`.
    class: Vec<u8>,
    package: Vec<u32>,
    /// Per entry, what the attention rule reads (`u8::MAX`, `i64::MIN`: not given).
    used_pct: Vec<u8>,
    expires: Vec<i64>,
    /// Every entry's order number (the order that made it: an order's detail names its
    /// eSIMs), one after another; `order_starts` gives where each begins.
    orders: String,
    order_starts: Vec<u32>,
    /// Entries by their ICCID's hash (the newest entry of it), and per entry the next older one
    /// with the same hash: a record finds its entry without a scan of the index.
    by_iccid: HashMap<u32, u32>,
    same_hash: Vec<u32>,
    /// Per entry, its place counted from the oldest eSIM (`GONE`: replaced).
    from_end: Vec<u32>,
    /// Per entry, when its status was read (Unix seconds).
    read_at: Vec<i64>,
    /// The entries in list order (newest first): `from_end` falling.
    order: Vec<u32>,
    statuses: Vec<Status>,
    packages: Vec<Package>,
    status_ids: HashMap<Status, u16>,
    package_ids: HashMap<Package, u32>,
    /// The list's total as last seen (0: never).
    total: u64,
}

/// The id of `key` (its place in `list`), added at the end of `list` if new. Looked up before
/// any copy is made: all but a few entries name a status or package seen before.
fn intern<K: std::hash::Hash + Eq + Clone, I: Copy>(
    list: &mut Vec<K>,
    ids: &mut HashMap<K, I>,
    key: &K,
    id: fn(usize) -> I,
) -> I {
    if let Some(&known) = ids.get(key) {
        return known;
    }
    let next = id(list.len());
    list.push(key.clone());
    ids.insert(key.clone(), next);
    next
}

impl Inventory {
    /// How many eSIMs the index has.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// When the usable eSIM read longest ago was read (Unix seconds): the age of what the
    /// attention count rests on (`picture::Picture`'s, for the index in memory).
    pub fn oldest_usable_read(&self) -> Option<i64> {
        self.order
            .iter()
            .filter_map(|&e| self.row(e as usize))
            .filter(|row| row.class.is_usable())
            .map(|row| row.read_at)
            .min()
    }

    /// The list's total as last seen.
    pub fn total(&self) -> Option<u64> {
        (self.total > 0 || !self.is_empty()).then_some(self.total)
    }

    /// Every eSIM of the list is in the index.
    pub fn is_complete(&self) -> bool {
        self.total().is_some() && self.len() as u64 >= self.total
    }

    /// An answer showed the list's total: places are counted from it from now on. A list that
    /// shrank (an eSIM removed) drops the entries past its end; the pages read later put
    /// the others right.
    pub fn saw_total(&mut self, total: u64) -> usize {
        if total == self.total {
            return 0;
        }
        self.total = total;
        let beyond = self
            .order
            .partition_point(|&e| u64::from(self.from_end[e as usize]) >= total);
        for e in self.order.drain(..beyond) {
            self.from_end[e as usize] = GONE;
        }
        beyond
    }

    /// Merges what a read brought: a page of the whole list at its place, or records that
    /// refresh the statuses of eSIMs the index has.
    pub fn merge(&mut self, seen: &Seen) -> Merged {
        let Some(place) = seen.place else {
            return self.refresh(seen);
        };
        let mut merged = Merged {
            gone: self.saw_total(place.total),
            ..Merged::default()
        };
        for (k, entry) in seen.entries.iter().enumerate() {
            let at = place.first_place() + k as u64;
            // `GONE` is no place: a list past 2³² − 1 eSIMs keeps those beyond it out, as the
            // saved index does.
            let Some(from_end) = place
                .total
                .checked_sub(at + 1)
                .and_then(|f| u32::try_from(f).ok())
                .filter(|&f| f != GONE)
            else {
                break;
            };
            match self.slot(from_end) {
                Ok(pos) => {
                    let e = self.order[pos] as usize;
                    if self.iccid(e) == entry.iccid {
                        merged.known += 1;
                        if self.update(e, entry, seen.read_at) {
                            merged.refreshed += 1;
                            merged.touched.push(e as u32);
                        }
                    } else {
                        self.from_end[e] = GONE;
                        merged.gone += 1;
                        self.order[pos] = self.push(entry, from_end, seen.read_at);
                        merged.added += 1;
                        merged.touched.push(self.order[pos]);
                    }
                }
                Err(pos) => {
                    let e = self.push(entry, from_end, seen.read_at);
                    self.order.insert(pos, e);
                    merged.added += 1;
                    merged.touched.push(e);
                }
            }
        }
        merged
    }

    /// Records without a place: each refreshes the entry of the same ICCID and order.
    fn refresh(&mut self, seen: &Seen) -> Merged {
        let mut merged = Merged::default();
        for entry in &seen.entries {
            let found = self
                .entries_of(&entry.iccid)
                .into_iter()
                .find(|&e| self.order_of(e) == entry.order);
            if let Some(e) = found {
                merged.known += 1;
                if self.update(e, entry, seen.read_at) {
                    merged.refreshed += 1;
                    merged.touched.push(e as u32);
                }
            }
        }
        merged
    }

    /// Takes in what another index (a file saved by another session) has and this one lacks
    /// or read earlier: places are comparable, both being counted from the oldest eSIM.
    pub fn absorb(&mut self, other: &Inventory) {
        if other.total > self.total {
            self.saw_total(other.total);
        }
        for &e in &other.order {
            let e = e as usize;
            let from_end = other.from_end[e];
            let entry = other.entry(e);
            let read_at = other.read_at[e];
            match self.slot(from_end) {
                Ok(pos) => {
                    let mine = self.order[pos] as usize;
                    if read_at <= self.read_at[mine] {
                        continue;
                    }
                    if self.iccid(mine) == entry.iccid {
                        self.update(mine, &entry, read_at);
                    } else {
                        self.from_end[mine] = GONE;
                        self.order[pos] = self.push(&entry, from_end, read_at);
                    }
                }
                Err(pos) => {
                    let new = self.push(&entry, from_end, read_at);
                    self.order.insert(pos, new);
                }
            }
        }
    }

    /// Puts an entry read earlier at its place (loading a saved index); `false` if the place
    /// is taken.
    fn put(&mut self, entry: Entry, from_end: u32, read_at: i64) -> bool {
        match self.slot(from_end) {
            Ok(_) => false,
            Err(pos) => {
                let e = self.push(&entry, from_end, read_at);
                self.order.insert(pos, e);
                true
            }
        }
    }

    /// Where the entry at `from_end` is in `order`, or where it would go.
    fn slot(&self, from_end: u32) -> Result<usize, usize> {
        self.order
            .binary_search_by(|&e| from_end.cmp(&self.from_end[e as usize]))
    }

    /// Updates an entry from a newer read; `true` if its status or limits changed.
    fn update(&mut self, e: usize, entry: &Entry, read_at: i64) -> bool {
        self.read_at[e] = self.read_at[e].max(read_at);
        let status = self.status_id(&entry.status);
        let used = entry.limits.used_pct.unwrap_or(u8::MAX);
        let expires = entry.limits.expires.unwrap_or(i64::MIN);
        let class = class_id(entry.class);
        let changed = self.status[e] != status
            || self.class[e] != class
            || self.used_pct[e] != used
            || self.expires[e] != expires;
        (self.status[e], self.class[e], self.used_pct[e], self.expires[e]) = (status, class, used, expires);
        changed
    }

    /// Adds an entry's columns; its id.
    fn push(&mut self, entry: &Entry, from_end: u32, read_at: i64) -> u32 {
        let id = self.starts.len() as u32;
        self.order_starts.push(self.orders.len() as u32);
        self.orders.push_str(&entry.order);
        self.used_pct.push(entry.limits.used_pct.unwrap_or(u8::MAX));
        self.expires.push(entry.limits.expires.unwrap_or(i64::MIN));
        self.from_end.push(from_end);
        self.read_at.push(read_at);
        self.starts.push(self.iccids.len() as u32);
        // A newline would join two ICCIDs in the searched text; the API's text never has one.
        self.iccids.extend(entry.iccid.chars().filter(|c| *c != '\n'));
        self.iccids.push('\n');
        let hash = iccid_hash(self.iccid(id as usize));
        let older = self.by_iccid.insert(hash, id).unwrap_or(NONE);
        self.same_hash.push(older);
        let s = self.status_id(&entry.status);
        self.status.push(s);
        self.class.push(class_id(entry.class));
        let p = intern(&mut self.packages, &mut self.package_ids, &entry.package, |n| n as u32);
        self.package.push(p);
        id
    }

    /// The interned id of a status.
    fn status_id(&mut self, status: &Status) -> u16 {
        intern(&mut self.statuses, &mut self.status_ids, status, |n| n as u16)
    }

    fn iccid(&self, e: usize) -> &str {
        let start = self.starts[e] as usize;
        let end = self.starts.get(e + 1).map_or(self.iccids.len(), |&s| s as usize);
        &self.iccids[start..end - 1]
    }

    /// The number of the order that made entry `e`.
    fn order_of(&self, e: usize) -> &str {
        let start = self.order_starts[e] as usize;
        let end = self.order_starts.get(e + 1).map_or(self.orders.len(), |&s| s as usize);
        &self.orders[start..end]
    }

    fn limits(&self, e: usize) -> Limits {
        Limits {
            used_pct: Some(self.used_pct[e]).filter(|&p| p != u8::MAX),
            expires: Some(self.expires[e]).filter(|&t| t != i64::MIN),
        }
    }

    fn class(&self, e: usize) -> Class {
        Class::ALL
            .get(self.class[e] as usize)
            .copied()
            .unwrap_or(Class::Unknown)
    }

    fn entry(&self, e: usize) -> Entry {
        Entry {
            iccid: self.iccid(e).to_string(),
            status: self.statuses[self.status[e] as usize].clone(),
            class: self.class(e),
            package: self.packages[self.package[e] as usize].clone(),
            limits: self.limits(e),
            order: self.order_of(e).to_string(),
        }
    }

    /// The place in the list now of entry `e`.
    fn place(&self, e: usize) -> u64 {
        self.total.saturating_sub(u64::from(self.from_end[e]) + 1)
    }

    /// The row of entry `e` (an id from `search`, `select` or `find`), unless it was replaced.
    pub fn row(&self, e: usize) -> Option<Row<'_>> {
        if self.from_end.get(e).is_none_or(|&f| f == GONE) {
            return None;
        }
        Some(Row {
            iccid: self.iccid(e),
            order: self.order_of(e),
            status: &self.statuses[self.status[e] as usize],
            class: self.class(e),
            package: &self.packages[self.package[e] as usize],
            place: self.place(e),
            limits: self.limits(e),
            read_at: self.read_at[e],
        })
    }

    /// The ICCIDs of the eSIMs an order made, in list order.
    pub fn iccids_of_order(&self, order: &str) -> Vec<&str> {
        self.order
            .iter()
            .map(|&e| e as usize)
            .filter(|&e| self.order_of(e) == order)
            .map(|e| self.iccid(e))
            .collect()
    }

    /// The entries with exactly this ICCID, newest first (more than one where a provider
    /// reissued it).
    fn entries_of(&self, iccid: &str) -> Vec<usize> {
        let mut found = Vec::new();
        let mut e = self.by_iccid.get(&iccid_hash(iccid)).copied().unwrap_or(NONE);
        while e != NONE {
            let at = e as usize;
            if self.from_end[at] != GONE && self.iccid(at) == iccid {
                found.push(at);
            }
            e = self.same_hash[at];
        }
        found.sort_by_key(|&e| std::cmp::Reverse(self.from_end[e]));
        found
    }

    /// The newest entry with exactly this ICCID.
    pub fn find(&self, iccid: &str) -> Option<usize> {
        self.entries_of(iccid).into_iter().next()
    }

    /// The entry of this profile: the ICCID made by this order (a reissued ICCID has one entry
    /// a profile); the newest entry of the ICCID when the order is not among them.
    pub fn find_profile(&self, iccid: &str, order: &str) -> Option<usize> {
        let entries = self.entries_of(iccid);
        entries
            .iter()
            .copied()
            .find(|&e| self.order_of(e) == order)
            .or_else(|| entries.first().copied())
    }

    /// Where this ICCID's newest entry sits, counted from the oldest eSIM, with the total it
    /// was counted against: a find reads the page at that place (`esimdash_api::Client::find_esim_at`).
    pub fn whereabouts(&self, iccid: &str) -> Option<Whereabouts> {
        let e = self.find(iccid)?;
        Some(Whereabouts {
            from_end: u64::from(self.from_end[e]),
            total: self.total,
        })
    }

    /// The first place at or after `place` that the index does not cover; `None` when it
    /// covers every place from there to the end of the list.
    pub fn first_gap_from(&self, place: u64) -> Option<u64> {
        if place >= self.total {
            return None;
        }
        // Places rise along `order` one at a time where nothing is missing, so the run from
        // `place` ends where an entry's place runs ahead of its position: found by halving.
        let k = self.order.partition_point(|&e| self.place(e as usize) < place);
        let ahead = |j: usize| self.place(self.order[j] as usize).saturating_sub((j - k) as u64) > place;
        let (mut lo, mut hi) = (k, self.order.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if ahead(mid) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let gap = place + (lo - k) as u64;
        (gap < self.total).then_some(gap)
    }

    /// The list's pages (of `size`) the index holds whole, the one read longest ago first: a
    /// search of the whole list reads them after the others (`esimdash_api::Reach::Whole`), so that a
    /// search stopped by the rate budget and run again reads first what the last one did not.
    pub fn pages_held_whole(&self, size: u64) -> Vec<u64> {
        let size = size.max(1);
        // Per page: entries held, and the oldest read among them.
        let mut pages: std::collections::BTreeMap<u64, (u64, i64)> = std::collections::BTreeMap::new();
        for &e in &self.order {
            let e = e as usize;
            let held = pages.entry(self.place(e) / size + 1).or_insert((0, i64::MAX));
            held.0 += 1;
            held.1 = held.1.min(self.read_at[e]);
        }
        let on_page = |page: u64| size.min(self.total.saturating_sub((page - 1).saturating_mul(size)));
        let mut whole: Vec<(i64, u64)> = pages
            .into_iter()
            .filter(|&(page, (held, _))| held >= on_page(page))
            .map(|(page, (_, oldest))| (oldest, page))
            .collect();
        whole.sort_unstable();
        whole.into_iter().map(|(_, page)| page).collect()
    }

    /// The place of entry `e` among the eSIMs the status filter lets through, counting the
    /// ones the index has before it (all of them, where the index covers the list up to it).
    pub fn place_among(&self, e: usize, status: &esimdash_domain::status::StatusFilter) -> u64 {
        if *status == esimdash_domain::status::StatusFilter::All {
            return self.place(e);
        }
        let status_ok = self.status_mask(status);
        let from_end = self.from_end[e];
        self.order
            .iter()
            .take_while(|&&o| self.from_end[o as usize] > from_end)
            .filter(|&&o| status_ok[self.status[o as usize] as usize])
            .count() as u64
    }

    /// Which interned statuses the filter lets through.
    fn status_mask(&self, filter: &esimdash_domain::status::StatusFilter) -> Vec<bool> {
        self.statuses.iter().map(|s| filter.matches(s)).collect()
    }

    /// Bytes held, roughly: what the memory budget counts.
    pub fn heap_bytes(&self) -> usize {
        self.iccids.capacity()
            + self.starts.capacity() * 4
            + self.status.capacity() * 2
            + self.class.capacity()
            + self.package.capacity() * 4
            + self.used_pct.capacity()
            + self.expires.capacity() * 8
            + self.from_end.capacity() * 4
            + self.read_at.capacity() * 8
            + self.order.capacity() * 4
            + self.orders.capacity()
            + self.order_starts.capacity() * 4
            + self.by_iccid.capacity() * 9
            + self.same_hash.capacity() * 4
    }
}

#[cfg(test)]
/// The class a record of this status has in the usual case (installed where in use).
pub(crate) fn class_of(status: &Status) -> Class {
    match status {
        Status::GotResource => Class::ReadyToInstall,
        Status::InUse => Class::InUse,
        Status::Suspended => Class::Suspended,
        Status::UsedUp => Class::UsedUp,
        Status::Cancel => Class::Cancelled,
        Status::Revoked => Class::Revoked,
        Status::Pending => Class::Pending,
        Status::UsedExpired => Class::ExpiredUsed,
        Status::UnusedExpired => Class::ExpiredUnused,
        Status::Other(_) => Class::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use esimdash_domain::status::StatusFilter;

    fn entry(iccid: &str, status: &str, package: &str) -> Entry {
        Entry {
            iccid: iccid.to_string(),
            class: class_of(&Status::parse(status)),
            status: Status::parse(status),
            package: Package {
                name: package.to_string(),
                slug: package.to_lowercase().replace(' ', "-"),
                code: String::new(),
                location: String::new(),
            },
            limits: Limits::default(),
            order: format!("B{iccid}"),
        }
    }

    /// Page `page` (of `size`) of a list of `total` eSIMs whose ICCID is their place counted
    /// from the oldest, 19 digits.
    fn page(page: u64, size: u64, total: u64, read_at: i64) -> Seen {
        let place = PagePlace { page, size, total };
        let first = place.first_place();
        let entries = (first..(first + size).min(total))
            .map(|at| entry(&format!("{:019}", total - 1 - at), "in_use", "France 1GB"))
            .collect();
        Seen {
            place: Some(place),
            entries,
            read_at,
        }
    }

    #[test]
    fn finds_by_part_of_an_iccid_or_a_package_in_list_order() {
        let mut inv = Inventory::default();
        inv.merge(&Seen {
            place: Some(PagePlace {
                page: 1,
                size: 3,
                total: 3,
            }),
            entries: vec![
                entry("8944100000000000011", "in_use", "France 1GB"),
                entry("8944100000000000029", "cancel", "Japan 5GB"),
                entry("8901100000000000037", "in_use", "France 3GB"),
            ],
            read_at: 0,
        });
        assert_eq!(inv.search("0000 0000-11", &StatusFilter::All), vec![0]);
        assert_eq!(inv.search("89441", &StatusFilter::All), vec![0, 1]);
        assert_eq!(inv.search("france", &StatusFilter::All), vec![0, 2]);
        assert_eq!(inv.search("FRANCE-3", &StatusFilter::All), vec![2]);
        assert_eq!(inv.search("8944", &StatusFilter::Active), vec![0]);
        assert!(inv.search("   ", &StatusFilter::All).is_empty());
        assert_eq!(inv.find("8901100000000000037"), Some(2));
        assert_eq!(inv.find("890110000000000003"), None, "a prefix is not the ICCID");
        assert_eq!(inv.row(1).map(|r| r.package.name.as_str()), Some("Japan 5GB"));
        assert!(inv.is_complete());
    }

    #[test]
    fn pages_read_in_any_order_are_kept_at_their_places_and_the_gaps_are_known() {
        let mut inv = Inventory::default();
        let first = inv.merge(&page(3, 10, 45, 100));
        assert_eq!(first.added, 10);
        inv.merge(&page(1, 10, 45, 100));
        assert_eq!((inv.len(), inv.total()), (20, Some(45)));
        assert!(!inv.is_complete());
        assert_eq!(inv.first_gap_from(0), Some(10), "page 2 is missing");
        assert_eq!(inv.first_gap_from(20), Some(30));
        // Results come in list order however the pages came.
        let all = inv.search("0", &StatusFilter::All);
        let places: Vec<u64> = all.iter().map(|&e| inv.row(e as usize).unwrap().place).collect();
        assert!(places.windows(2).all(|w| w[0] < w[1]), "{places:?}");
        assert_eq!(places.len(), 20);
        for p in [2, 4, 5] {
            inv.merge(&page(p, 10, 45, 100));
        }
        assert!(inv.is_complete());
        assert_eq!(inv.first_gap_from(0), None);
        let again = inv.merge(&page(2, 10, 45, 200));
        assert_eq!(
            (again.known, again.added, again.refreshed),
            (10, 0, 0),
            "read again, nothing new"
        );
        let e = inv.find(&format!("{:019}", 44 - 12)).unwrap();
        assert_eq!(inv.row(e).map(|r| (r.place, r.read_at)), Some((12, 200)));
    }

    #[test]
    fn the_pages_held_whole_come_the_one_read_longest_ago_first() {
        let mut inv = Inventory::default();
        // 45 eSIMs, 10 a page: pages 3 and 1 read, then 5 (the last, of 5), page 2 in part.
        inv.merge(&page(3, 10, 45, 300));
        inv.merge(&page(1, 10, 45, 100));
        inv.merge(&page(5, 10, 45, 200));
        assert_eq!(inv.pages_held_whole(10), vec![1, 5, 3]);
        let mut part = page(2, 10, 45, 50);
        part.entries.truncate(4);
        inv.merge(&part);
        assert_eq!(inv.pages_held_whole(10), vec![1, 5, 3], "page 2 is not whole");
        inv.merge(&page(1, 10, 45, 400));
        assert_eq!(
            inv.pages_held_whole(10),
            vec![5, 3, 1],
            "page 1 read again, now the latest"
        );
    }

    #[test]
    fn new_esims_at_the_top_move_every_place_down_and_a_read_from_the_top_meets_the_known() {
        let mut inv = Inventory::default();
        for p in 1..=3 {
            inv.merge(&page(p, 10, 30, 0));
        }
        let oldest = inv.find(&format!("{:019}", 0)).unwrap();
        assert_eq!(inv.row(oldest).map(|r| r.place), Some(29));
        assert_eq!(
            inv.whereabouts(&format!("{:019}", 0)).map(|w| w.place_in(35)),
            Some(Some(34))
        );
        // Five new eSIMs: page 1 now holds them and five known ones.
        let top = inv.merge(&page(1, 10, 35, 1));
        assert_eq!((top.added, top.known), (5, 5));
        assert_eq!(inv.row(oldest).map(|r| r.place), Some(34));
        assert!(inv.is_complete());
    }

    #[test]
    fn a_record_refreshes_the_status_and_another_esim_at_a_place_replaces_the_old_one() {
        let mut inv = Inventory::default();
        inv.merge(&page(1, 5, 5, 0));
        let iccid = format!("{:019}", 3);
        let mut record = entry(&iccid, "revoked", "France 1GB");
        let seen = Seen {
            place: None,
            entries: vec![record.clone()],
            read_at: 9,
        };
        assert_eq!(inv.merge(&seen).refreshed, 1);
        let e = inv.find(&iccid).unwrap();
        assert_eq!(
            inv.row(e).map(|r| (r.status.clone(), r.read_at)),
            Some((Status::Revoked, 9))
        );
        assert_eq!(inv.merge(&seen).refreshed, 0, "no change the second time");
        // Another eSIM read at that place (the list changed under us): the old entry goes.
        record.iccid = "8944100000000000011".into();
        inv.merge(&Seen {
            place: Some(PagePlace {
                page: 2,
                size: 1,
                total: 5,
            }),
            entries: vec![record],
            read_at: 10,
        });
        assert_eq!(inv.find(&iccid), None);
        assert_eq!(inv.row(e), None);
        assert_eq!(inv.len(), 5);
        assert!(inv.search(&iccid, &StatusFilter::All).is_empty());
    }

    #[test]
    fn another_sessions_index_fills_the_gaps_and_the_newer_read_wins() {
        let mut mine = Inventory::default();
        mine.merge(&page(1, 10, 30, 50));
        let mut theirs = Inventory::default();
        theirs.merge(&page(3, 10, 30, 10));
        theirs.merge(&page(1, 10, 30, 10));
        let iccid = format!("{:019}", 29);
        theirs.merge(&Seen {
            place: None,
            entries: vec![entry(&iccid, "cancel", "France 1GB")],
            read_at: 11,
        });
        mine.absorb(&theirs);
        assert_eq!(mine.len(), 20);
        assert_eq!(mine.first_gap_from(0), Some(10));
        let e = mine.find(&iccid).unwrap();
        assert_eq!(
            mine.row(e).map(|r| r.status.clone()),
            Some(Status::InUse),
            "read later here"
        );
    }
}

#[cfg(test)]
mod at_scale {
    use super::*;
    use chrono::DateTime;
    use esimdash_domain::attention::AttentionRule;
    use esimdash_domain::status::StatusFilter;
    use std::time::Instant;

    /// 100 000 eSIMs as the sandbox makes them, merged from the oldest page up: every search
    /// finds what it should. (How long a search takes is a benchmark's question, not a test's:
    /// `cargo bench --bench hot_paths -- search`; the times are printed here only to be seen.)
    #[test]
    fn a_search_over_100_000_esims_finds_what_it_should() {
        let mut inv = Inventory::default();
        let statuses = [Status::InUse, Status::Cancel, Status::GotResource, Status::UsedUp];
        let total = 100_000u64;
        let started = Instant::now();
        // Read from the oldest page up, the worst order for keeping the list's order.
        for p in (1..=total / 100).rev() {
            let entries = (0..100)
                .map(|k| {
                    let i = (p - 1) * 100 + k;
                    Entry {
                        iccid: format!("89441{i:08}{:06}", i * 7919 % 1_000_000),
                        status: statuses[i as usize % 4].clone(),
                        class: class_of(&statuses[i as usize % 4]),
                        package: Package {
                            name: format!("Country {} {}GB 30 Days", i % 60, i % 5 + 1),
                            slug: format!("c{}-{}gb-30d", i % 60, i % 5 + 1),
                            code: format!("ESD-C{}-{}GB-30D", i % 60, i % 5 + 1),
                            location: format!("C{}", i % 60),
                        },
                        limits: Limits {
                            used_pct: Some((i % 101) as u8),
                            expires: Some(1_800_000_000 + i as i64 * 60),
                        },
                        order: format!("B1{i:011}"),
                    }
                })
                .collect();
            inv.merge(&Seen {
                place: Some(PagePlace {
                    page: p,
                    size: 100,
                    total,
                }),
                entries,
                read_at: 0,
            });
        }
        eprintln!("1 000 pages merged, the oldest first, in {:?}", started.elapsed());
        assert!(inv.is_complete());
        assert_eq!(
            inv.search("89441", &StatusFilter::All).len(),
            100_000,
            "every ICCID holds its prefix"
        );
        let attention = AttentionAt {
            rule: AttentionRule::default(),
            now: DateTime::from_timestamp(1_800_000_000, 0).unwrap_or_default(),
        };
        let started = Instant::now();
        let found = inv.select("", &StatusFilter::All, Some(attention));
        eprintln!("       attention: {:>6} found in {:?}", found.len(), started.elapsed());
        // Each text against the plain reading of it: the eSIMs whose ICCID, plan or place hold it.
        for (text, at_least) in [
            ("894410009", 1),
            ("country 7 ", 1),
            ("c59-5gb", 1),
            ("nothing like it", 0),
        ] {
            let started = Instant::now();
            let found = inv.search(text.trim_end(), &StatusFilter::All);
            eprintln!("{text:>16}: {:>6} found in {:?}", found.len(), started.elapsed());
            if at_least == 0 {
                assert!(found.is_empty(), "{text}: {}", found.len());
            } else {
                assert!(found.len() >= at_least, "{text}: nothing found");
            }
        }
        eprintln!("100 000 entries hold {} KiB", inv.heap_bytes() / 1024);
    }
}
