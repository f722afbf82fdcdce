//! The eSIM inventory as finding needs it: per eSIM its ICCID, status, package and place in the
//! list, and nothing else (never the activation code). Kept compact so that 100 000 eSIMs take
//! a few MB, searched in one pass, and saved between sessions (`store`).
//!
//! Places: the list is newest first, so a new eSIM pushes every older one down by one. An entry
//! keeps its place as it was when read, with the `total` of that moment; when an answer later
//! shows a larger total, every place moves down by the growth (`shift`).

pub mod store;

use crate::api::model::Esim;
use crate::domain::attention::{AttentionRule, Judged, Limits};
use crate::domain::status::{Status, StatusFilter};
use chrono::{DateTime, Utc};
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
    pub status: &'a Status,
    pub package: &'a Package,
    /// Its place in the list now (0: the newest).
    pub place: u64,
    pub limits: Limits,
}

/// What the attention filter needs: the rule and the time it is applied at.
#[derive(Debug, Clone, Copy)]
pub struct AttentionAt {
    pub rule: AttentionRule,
    pub now: DateTime<Utc>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inventory {
    /// Every ICCID, each followed by a newline: one text to search in one pass.
    iccids: String,
    /// Where each entry's ICCID starts in `iccids`; entries are in list order.
    starts: Vec<u32>,
    status: Vec<u16>,
    package: Vec<u32>,
    /// Per entry, what the attention rule reads (`u8::MAX`, `i64::MIN`: not given).
    used_pct: Vec<u8>,
    expires: Vec<i64>,
    /// Per entry, the number of the order that made it: an order's detail names its eSIMs.
    orders: Vec<Box<str>>,
    statuses: Vec<Status>,
    packages: Vec<Package>,
    status_ids: HashMap<Status, u16>,
    package_ids: HashMap<Package, u32>,
    /// The list's total when the first entry was read, and how much it grew since.
    total: Option<u64>,
    shift: u64,
}

/// The text searched for, read once: digits (part of an ICCID) or words of a package.
fn as_digits(text: &str) -> Option<String> {
    let digits: String = text.chars().filter(|c| !matches!(c, ' ' | '-')).collect();
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(digits)
}

impl Inventory {
    pub fn len(&self) -> usize {
        self.starts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// The list's total as last seen.
    pub fn total(&self) -> Option<u64> {
        self.total.map(|t| t + self.shift)
    }

    /// Adds the next page of the list, in order.
    pub fn extend(&mut self, esims: &[Esim], total: u64) {
        self.total.get_or_insert(total);
        self.saw_total(total);
        for e in esims {
            self.push(
                e.raw_order_json.iccid.as_str(),
                &e.record.status,
                Package::of(e),
                e.limits(),
                &e.record.provider_order_no,
            );
        }
    }

    fn push(&mut self, iccid: &str, status: &Status, package: Package, limits: Limits, order: &str) {
        self.orders.push(order.into());
        self.used_pct.push(limits.used_pct.unwrap_or(u8::MAX));
        self.expires.push(limits.expires.unwrap_or(i64::MIN));
        self.starts.push(self.iccids.len() as u32);
        // A newline would join two ICCIDs in the searched text; the API's text never has one.
        self.iccids.extend(iccid.chars().filter(|c| *c != '\n'));
        self.iccids.push('\n');
        let s = self.status_id(status);
        self.status.push(s);
        let next = self.packages.len() as u32;
        let p = *self.package_ids.entry(package.clone()).or_insert_with(|| {
            self.packages.push(package);
            next
        });
        self.package.push(p);
    }

    /// The interned id of a status.
    fn status_id(&mut self, status: &Status) -> u16 {
        let next = self.statuses.len() as u16;
        *self.status_ids.entry(status.clone()).or_insert_with(|| {
            self.statuses.push(status.clone());
            next
        })
    }

    /// Which interned statuses the filter lets through.
    fn status_mask(&self, filter: &StatusFilter) -> Vec<bool> {
        self.statuses.iter().map(|s| filter.matches(s)).collect()
    }

    /// An answer showed the list's total: the growth since the entries were read moves them.
    /// Whether `saw_total` would move the places.
    pub fn total_moves(&self, total: u64) -> bool {
        self.total.is_some_and(|read| total.saturating_sub(read) > self.shift)
    }

    pub fn saw_total(&mut self, total: u64) {
        if let Some(read) = self.total {
            self.shift = self.shift.max(total.saturating_sub(read));
        }
    }

    fn iccid(&self, i: usize) -> &str {
        let start = self.starts[i] as usize;
        let end = self.starts.get(i + 1).map_or(self.iccids.len(), |&s| s as usize);
        &self.iccids[start..end - 1]
    }

    fn limits(&self, i: usize) -> Limits {
        Limits {
            used_pct: Some(self.used_pct[i]).filter(|&p| p != u8::MAX),
            expires: Some(self.expires[i]).filter(|&t| t != i64::MIN),
        }
    }

    pub fn row(&self, i: usize) -> Option<Row<'_>> {
        if i >= self.len() {
            return None;
        }
        Some(Row {
            iccid: self.iccid(i),
            status: &self.statuses[self.status[i] as usize],
            package: &self.packages[self.package[i] as usize],
            place: i as u64 + self.shift,
            limits: self.limits(i),
        })
    }

    /// The ICCIDs of the eSIMs an order made, in list order.
    pub fn iccids_of_order(&self, order: &str) -> Vec<&str> {
        (0..self.len())
            .filter(|&i| &*self.orders[i] == order)
            .map(|i| self.iccid(i))
            .collect()
    }

    /// The entry with exactly this ICCID.
    pub fn find(&self, iccid: &str) -> Option<usize> {
        self.matching_iccids(iccid)
            .into_iter()
            .find(|&i| self.iccid(i as usize) == iccid)
            .map(|i| i as usize)
    }

    /// Entries whose ICCID contains `digits`, in list order.
    fn matching_iccids(&self, digits: &str) -> Vec<u32> {
        let mut found: Vec<u32> = Vec::new();
        if digits.is_empty() || digits.contains('\n') {
            return found;
        }
        for (at, _) in self.iccids.match_indices(digits) {
            let entry = self.starts.partition_point(|&s| s as usize <= at) as u32 - 1;
            if found.last() != Some(&entry) {
                found.push(entry);
            }
        }
        found
    }

    /// The entries that match `text` (part of an ICCID, or of a package's name, slug or code,
    /// ignoring case) and the status filter, in list order: new pages only add results after
    /// these, so the results never jump as the read goes on.
    pub fn search(&self, text: &str, status: &StatusFilter) -> Vec<u32> {
        self.select(text, status, None)
    }

    /// The entries that match the search (none: every entry), the status filter and, if given,
    /// the attention rule: in list order, or with the rule, the most urgent first.
    pub fn select(&self, text: &str, status: &StatusFilter, attention: Option<AttentionAt>) -> Vec<u32> {
        let text = text.trim();
        let Some(attention) = attention else {
            return if text.is_empty() {
                Vec::new()
            } else {
                self.search_text(text, status)
            };
        };
        let needs = |i: u32| {
            let i = i as usize;
            attention
                .rule
                .needs(&self.statuses[self.status[i] as usize], self.limits(i), attention.now)
        };
        let mut found = if text.is_empty() {
            let status_ok = self.status_mask(status);
            (0..self.len() as u32)
                .filter(|&i| status_ok[self.status[i as usize] as usize] && needs(i))
                .collect()
        } else {
            let mut found = self.search_text(text, status);
            found.retain(|&i| needs(i));
            found
        };
        // What needs attention most comes first (stable: equals stay in list order).
        found.sort_by_key(|&i| attention.rule.urgency(self.limits(i as usize), attention.now));
        found
    }

    fn search_text(&self, text: &str, status: &StatusFilter) -> Vec<u32> {
        let status_ok = self.status_mask(status);
        if let Some(digits) = as_digits(text) {
            return self
                .matching_iccids(&digits)
                .into_iter()
                .filter(|&i| status_ok[self.status[i as usize] as usize])
                .collect();
        }
        let needle = text.to_lowercase();
        let package_ok: Vec<bool> = self
            .packages
            .iter()
            .map(|p| {
                [&p.name, &p.slug, &p.code]
                    .iter()
                    .any(|t| t.to_lowercase().contains(&needle))
            })
            .collect();
        (0..self.len() as u32)
            .filter(|&i| {
                let i = i as usize;
                package_ok[self.package[i] as usize] && status_ok[self.status[i] as usize]
            })
            .collect()
    }

    /// The place of entry `i` among the eSIMs the status filter lets through, when every entry
    /// before it is known (the list is read in order, so they are).
    pub fn place_among(&self, i: usize, status: &StatusFilter) -> u64 {
        let status_ok = self.status_mask(status);
        let before = self.status[..i.min(self.len())]
            .iter()
            .filter(|&&s| status_ok[s as usize])
            .count() as u64;
        if *status == StatusFilter::All {
            before + self.shift
        } else {
            // A filtered list's growth is not known from the unfiltered total.
            before
        }
    }

    /// A fresher status for an eSIM, from any answer that showed it; `true` if it changed.
    /// Whether `update_status` would change anything (asked first where the index is shared
    /// and a change means copying it).
    pub fn status_differs(&self, iccid: &str, status: &Status) -> bool {
        self.find(iccid)
            .is_some_and(|i| self.status_ids.get(status) != Some(&self.status[i]))
    }

    pub fn update_status(&mut self, iccid: &str, status: &Status) -> bool {
        let Some(i) = self.find(iccid) else { return false };
        let id = self.status_id(status);
        std::mem::replace(&mut self.status[i], id) != id
    }

    /// Bytes held, roughly: what the memory budget counts.
    pub fn heap_bytes(&self) -> usize {
        self.iccids.capacity()
            + self.starts.capacity() * 4
            + self.status.capacity() * 2
            + self.package.capacity() * 4
            + self.used_pct.capacity()
            + self.expires.capacity() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esim(iccid: &str, status: &str, package: &str) -> Esim {
        serde_json::from_value(serde_json::json!({
            "status": status,
            "packageName": package,
            "slug": package.to_lowercase().replace(' ', "-"),
            "rawOrderJson": { "iccid": iccid },
        }))
        .expect("an eSIM item")
    }

    #[test]
    fn finds_by_part_of_an_iccid_or_a_package_in_list_order() {
        let mut inv = Inventory::default();
        inv.extend(
            &[
                esim("8944100000000000011", "in_use", "France 1GB"),
                esim("8944100000000000029", "cancel", "Japan 5GB"),
                esim("8901100000000000037", "in_use", "France 3GB"),
            ],
            3,
        );
        assert_eq!(inv.search("0000 0000-11", &StatusFilter::All), vec![0]);
        assert_eq!(inv.search("89441", &StatusFilter::All), vec![0, 1]);
        assert_eq!(inv.search("france", &StatusFilter::All), vec![0, 2]);
        assert_eq!(inv.search("FRANCE-3", &StatusFilter::All), vec![2]);
        assert_eq!(inv.search("8944", &StatusFilter::Active), vec![0]);
        assert!(inv.search("   ", &StatusFilter::All).is_empty());
        assert_eq!(inv.find("8901100000000000037"), Some(2));
        assert_eq!(inv.find("890110000000000003"), None, "a prefix is not the ICCID");
        assert_eq!(inv.row(1).map(|r| r.package.name.as_str()), Some("Japan 5GB"));
    }

    #[test]
    fn places_move_down_as_the_list_grows_and_statuses_refresh() {
        let mut inv = Inventory::default();
        inv.extend(
            &[
                esim("8944100000000000011", "in_use", "A"),
                esim("8944100000000000029", "cancel", "B"),
            ],
            2,
        );
        assert_eq!(inv.row(1).map(|r| r.place), Some(1));
        inv.saw_total(5);
        assert_eq!(inv.row(1).map(|r| r.place), Some(4), "three new eSIMs at the top");
        assert_eq!(inv.total(), Some(5));
        assert_eq!(inv.place_among(1, &StatusFilter::Is(Status::Cancel)), 0);
        assert!(inv.update_status("8944100000000000029", &Status::Revoked));
        assert!(
            !inv.update_status("8944100000000000029", &Status::Revoked),
            "no change the second time"
        );
        assert_eq!(inv.row(1).map(|r| r.status.clone()), Some(Status::Revoked));
    }
}

#[cfg(test)]
mod at_scale {
    use super::*;
    use std::time::{Duration, Instant};

    /// 100 000 eSIMs as the sandbox makes them: searching any of them takes well under a frame.
    #[test]
    fn a_search_over_100_000_esims_fits_in_a_frame() {
        let mut inv = Inventory::default();
        let statuses = [Status::InUse, Status::Cancel, Status::GotResource, Status::UsedUp];
        for i in 0..100_000u64 {
            let package = Package {
                name: format!("Country {} {}GB 30 Days", i % 60, i % 5 + 1),
                slug: format!("c{}-{}gb-30d", i % 60, i % 5 + 1),
                code: format!("ESD-C{}-{}GB-30D", i % 60, i % 5 + 1),
                location: format!("C{}", i % 60),
            };
            inv.push(
                &format!("89441{i:08}{:06}", i * 7919 % 1_000_000),
                &statuses[i as usize % 4],
                package,
                Limits {
                    used_pct: Some((i % 101) as u8),
                    expires: Some(1_800_000_000 + i as i64 * 60),
                },
                &format!("B1{i:011}"),
            );
        }
        let mut slowest = Duration::ZERO;
        let attention = AttentionAt {
            rule: AttentionRule::default(),
            now: DateTime::from_timestamp(1_800_000_000, 0).unwrap_or_default(),
        };
        let started = Instant::now();
        let found = inv.select("", &StatusFilter::All, Some(attention));
        eprintln!("       attention: {:>6} found in {:?}", found.len(), started.elapsed());
        slowest = slowest.max(started.elapsed());
        for text in ["4829", "894410009", "country 7", "30GB", "c59-5gb", "nothing like it"] {
            let started = Instant::now();
            let found = inv.search(text, &StatusFilter::All);
            let took = started.elapsed();
            eprintln!("{text:>16}: {:>6} found in {took:?}", found.len());
            slowest = slowest.max(took);
        }
        eprintln!("100 000 entries hold {} KiB", inv.heap_bytes() / 1024);
        // The frame budget in an optimised build; an unoptimised test build is given 4 frames.
        let budget = Duration::from_millis(if cfg!(debug_assertions) { 64 } else { 16 });
        assert!(slowest <= budget, "slowest search {slowest:?}");
    }
}
