//! Searching the index: by part of an ICCID or of a package, by status, and by the attention
//! rule. Results are entry ids in list order (newest first), or with the rule, most urgent first.

use super::Inventory;
use chrono::{DateTime, Utc};
use esimdash_domain::attention::AttentionRule;
use esimdash_domain::status::StatusFilter;

/// What the attention filter needs: the rule and the time it is applied at.
#[derive(Debug, Clone, Copy)]
pub struct AttentionAt {
    pub rule: AttentionRule,
    pub now: DateTime<Utc>,
}

/// The text searched for, read once: digits (part of an ICCID) or words of a package.
fn as_digits(text: &str) -> Option<String> {
    let digits: String = text.chars().filter(|c| !matches!(c, ' ' | '-')).collect();
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(digits)
}

impl Inventory {
    /// Entries whose ICCID contains `digits`, replaced ones included, in the order read.
    pub(super) fn matching_iccids(&self, digits: &str) -> Vec<u32> {
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
    /// ignoring case) and the status filter, in list order.
    pub fn search(&self, text: &str, status: &StatusFilter) -> Vec<u32> {
        self.select(text, status, None)
    }

    /// The entries that match the search (none: every entry), the status filter and, if given,
    /// the attention rule: in list order, or with the rule, the most urgent first
    /// (`Selection::order`).
    pub fn select(&self, text: &str, status: &StatusFilter, attention: Option<AttentionAt>) -> Vec<u32> {
        let selection = Selection::new(text, status, attention).judged_for(self);
        if selection.is_none() {
            return Vec::new();
        }
        let mut found: Vec<u32> = match &selection.text {
            // The ICCIDs searched in one pass over their text.
            Text::Digits(digits) => {
                let mut found: Vec<u32> = self
                    .matching_iccids(digits)
                    .into_iter()
                    .filter(|&e| selection.takes(self, e))
                    .collect();
                // Read in any order; shown in the list's.
                found.sort_by_key(|&e| std::cmp::Reverse(self.from_end[e as usize]));
                found
            }
            _ => self
                .order
                .iter()
                .copied()
                .filter(|&e| selection.takes(self, e))
                .collect(),
        };
        if attention.is_some() {
            // Stable: equals stay in list order.
            found.sort_by_key(|&e| selection.order(self, e));
        }
        found
    }
}

/// What is searched for, read once.
#[derive(Debug, Clone)]
enum Text {
    /// No text: every entry (with the attention filter) or none.
    Empty,
    /// Part of an ICCID.
    Digits(String),
    /// Part of a package's name, slug or code, lower case.
    Words(String),
}

/// One search as the index answers it: for the whole index (`Inventory::select`), or for the
/// entries a read added or changed (the dashboard keeps its results without searching again).
#[derive(Debug, Clone)]
pub struct Selection<'a> {
    text: Text,
    status: &'a StatusFilter,
    attention: Option<AttentionAt>,
    /// Per package and status the index had when it was made, whether it is let through
    /// (each judged once, not once an entry); those interned later are judged as they come.
    package_ok: Vec<bool>,
    status_ok: Vec<bool>,
}

impl<'a> Selection<'a> {
    pub fn new(text: &str, status: &'a StatusFilter, attention: Option<AttentionAt>) -> Self {
        let text = text.trim();
        let text = if text.is_empty() {
            Text::Empty
        } else if let Some(digits) = as_digits(text) {
            Text::Digits(digits)
        } else {
            Text::Words(text.to_lowercase())
        };
        Self {
            text,
            status,
            attention,
            package_ok: Vec::new(),
            status_ok: Vec::new(),
        }
    }

    /// Judges the index's packages and statuses once, for a search of all its entries.
    pub fn judged_for(mut self, inventory: &Inventory) -> Self {
        self.package_ok = inventory.packages.iter().map(|p| self.package_matches(p)).collect();
        self.status_ok = inventory.statuses.iter().map(|s| self.status.matches(s)).collect();
        self
    }

    fn package_matches(&self, p: &super::Package) -> bool {
        match &self.text {
            Text::Words(needle) => [&p.name, &p.slug, &p.code]
                .iter()
                .any(|t| t.to_lowercase().contains(needle.as_str())),
            _ => true,
        }
    }

    /// Selects nothing: no text and no attention filter.
    pub fn is_none(&self) -> bool {
        matches!(self.text, Text::Empty) && self.attention.is_none()
    }

    /// Whether entry `e` is among the results.
    pub fn takes(&self, inventory: &Inventory, e: u32) -> bool {
        let i = e as usize;
        if self.is_none() || inventory.from_end.get(i).is_none_or(|&f| f == super::GONE) {
            return false;
        }
        let text_ok = match &self.text {
            Text::Empty => true,
            Text::Digits(digits) => inventory.iccid(i).contains(digits.as_str()),
            Text::Words(_) => {
                let p = inventory.package[i] as usize;
                self.package_ok
                    .get(p)
                    .copied()
                    .unwrap_or_else(|| self.package_matches(&inventory.packages[p]))
            }
        };
        let s = inventory.status[i] as usize;
        text_ok
            && self
                .status_ok
                .get(s)
                .copied()
                .unwrap_or_else(|| self.status.matches(&inventory.statuses[s]))
            && self
                .attention
                .is_none_or(|a| a.rule.needs(inventory.class(i), inventory.limits(i), a.now))
    }

    /// Where entry `e` goes among the results: list order, or the most urgent first.
    pub fn order(&self, inventory: &Inventory, e: u32) -> (u64, std::cmp::Reverse<u32>) {
        let i = e as usize;
        let urgency = self.attention.map_or(0, |a| a.rule.urgency(inventory.limits(i), a.now));
        (urgency, std::cmp::Reverse(inventory.from_end[i]))
    }
}
