//! Searching the index: by part of an ICCID or of a package, by status, and by the attention
//! rule. Results are entry ids in list order (newest first), or with the rule, most urgent first.

use super::Inventory;
use crate::domain::attention::AttentionRule;
use crate::domain::status::StatusFilter;
use chrono::{DateTime, Utc};

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
            attention.rule.needs(self.class(i), self.limits(i), attention.now)
        };
        let mut found = if text.is_empty() {
            let status_ok = self.status_mask(status);
            self.order
                .iter()
                .copied()
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
            let mut found: Vec<u32> = self
                .matching_iccids(&digits)
                .into_iter()
                .filter(|&i| self.from_end[i as usize] != super::GONE)
                .filter(|&i| status_ok[self.status[i as usize] as usize])
                .collect();
            // Read in any order; shown in the list's.
            found.sort_by_key(|&i| std::cmp::Reverse(self.from_end[i as usize]));
            return found;
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
        self.order
            .iter()
            .copied()
            .filter(|&i| {
                let i = i as usize;
                package_ok[self.package[i] as usize] && status_ok[self.status[i] as usize]
            })
            .collect()
    }
}
