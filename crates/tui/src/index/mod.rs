//! The account's inventory index, as the dashboard holds it: every eSIM of the account the
//! session has read or an earlier one saved (`read`: the index and the reads that fill it),
//! how many need attention by the user's rule, and where an order's eSIMs are
//! (`order_esims`). It is the account's, as its profile and money are: My eSIMs searches it,
//! an order's detail and `t` on an order find their eSIM in it, the windows read it through
//! the frame's context, and a switch of account replaces it whole.

pub mod order_esims;
pub mod read;

use crate::kit::jobs::Outbox;
use crate::kit::remote::Slot;
use crate::msg::{JobId, Request};
use chrono::{DateTime, Utc};
use esimdash_domain::attention::AttentionRule;
use esimdash_domain::status::StatusFilter;
use esimdash_inventory::store::SavedIndex;
use esimdash_inventory::{AttentionAt, Inventory, Merged, Row, Seen};
use std::time::Instant;

pub use order_esims::OrderEsims;
pub use read::{IndexRead, SCAN_PAGE_SIZE};

#[derive(Debug, Clone)]
pub struct Index {
    read: IndexRead,
    /// The thresholds of "needs attention" (the config file's).
    rule: AttentionRule,
    /// How many eSIMs need attention by `rule`, once the whole inventory is known.
    attention_count: Option<usize>,
    /// When the usable eSIM read longest ago was read (Unix seconds), once the whole inventory
    /// is known: how old the count is.
    attention_read_at: Option<i64>,
    /// A record read longer ago than this shows its age (config `status_stale_hours`).
    stale_after: chrono::Duration,
    /// "Now" for the attention rule and the index's age; pinned by tests, whose sandbox is
    /// seeded at a fixed time.
    clock: Option<DateTime<Utc>>,
    /// The order whose eSIM the list was last read from the top for (`order_esims`).
    sought_order: Option<String>,
}

impl Default for Index {
    fn default() -> Self {
        Self {
            read: IndexRead::default(),
            rule: AttentionRule::default(),
            attention_count: None,
            attention_read_at: None,
            stale_after: chrono::Duration::hours(24),
            clock: None,
            sought_order: None,
        }
    }
}

impl Index {
    /// The index and its reads.
    pub fn read(&self) -> &IndexRead {
        &self.read
    }

    pub fn inventory(&self) -> &Inventory {
        self.read.inventory()
    }

    /// Another account's index: empty, with this one's settings (the user's rule and clock).
    pub fn emptied(&self) -> Index {
        Index {
            rule: self.rule,
            stale_after: self.stale_after,
            clock: self.clock,
            ..Index::default()
        }
    }

    /// The config file's thresholds: which eSIMs need attention, and when a record is stale.
    pub fn use_preferences(&mut self, prefs: &esimdash_front::config::Preferences) {
        self.rule = prefs.attention;
        self.stale_after = prefs.stale_after;
        self.recount_attention();
    }

    /// Pins "now" (tests read a sandbox seeded at a fixed time).
    pub fn pin_clock(&mut self, at: DateTime<Utc>) {
        self.clock = Some(at);
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.clock.unwrap_or_else(Utc::now)
    }

    /// The rule of "needs attention".
    pub fn rule(&self) -> AttentionRule {
        self.rule
    }

    /// The attention rule at this moment, as the index judges rows by it.
    pub fn attention_at(&self) -> AttentionAt {
        AttentionAt {
            rule: self.rule,
            now: self.now(),
        }
    }

    /// How many eSIMs need attention, when the whole inventory is known (read or saved).
    pub fn attention_count(&self) -> Option<usize> {
        self.attention_count
    }

    /// How old the attention count is: its oldest usable eSIM's read, when the whole inventory
    /// is known.
    pub fn attention_age(&self) -> Option<chrono::Duration> {
        let read = DateTime::from_timestamp(self.attention_read_at?, 0)?;
        Some((self.now() - read).max(chrono::Duration::zero()))
    }

    /// How old a row's status is, when it was read longer ago than the configured age.
    pub fn stale_age(&self, row: &Row<'_>) -> Option<chrono::Duration> {
        let read = DateTime::from_timestamp(row.read_at, 0)?;
        let age = self.now() - read;
        (age > self.stale_after).then_some(age)
    }

    /// Counts again after the index changed; unknown until the whole inventory is.
    fn recount_attention(&mut self) {
        let inventory = self.read.inventory();
        let complete = self.read.is_complete();
        self.attention_count = complete.then(|| {
            inventory
                .select("", &StatusFilter::All, Some(self.attention_at()))
                .len()
        });
        self.attention_read_at = complete.then(|| inventory.oldest_usable_read()).flatten();
    }

    /// The index an earlier session saved.
    pub fn use_saved(&mut self, saved: SavedIndex) {
        self.read.use_saved(saved);
        self.recount_attention();
    }

    /// eSIMs the client read: merged, and counted again when something really moved (a count
    /// over 100 000 entries for nothing would be waste). What changed.
    pub fn seen(&mut self, seen: &Seen) -> Merged {
        let merged = self.read.seen(seen);
        if merged.changed() || merged.gone > 0 {
            self.recount_attention();
        }
        merged
    }

    /// The whole inventory is wanted (a search, the attention filter, an order's eSIMs).
    pub fn want_whole(&mut self) {
        self.read.want_whole();
    }

    /// Reads from the top again (`r`, money moved, an order's detail refreshed).
    pub fn from_the_top(&mut self) {
        self.read.from_the_top();
    }

    /// The read's next page, when one is wanted and nothing holds it (`hold`: My eSIMs waits on
    /// an answer that may make it needless: a whole ICCID's lookup, the list's first page).
    pub fn fetch(&mut self, out: &mut Outbox<'_>, hold: bool) {
        if hold {
            return;
        }
        if let Some(page) = self.read.wanted_page() {
            let id = out.send(Request::EsimScan { page });
            self.read.asked(page, id);
        }
    }

    pub fn slot(&mut self) -> &mut dyn Slot {
        self.read.slot()
    }

    /// A page the index asked for came, merged already (`seen`); `Some(true)` when the index
    /// just became complete.
    pub fn page_came(&mut self, id: JobId, items: usize, total: u64, now: Instant) -> Option<bool> {
        let complete = self.read.page_came(id, items, total, now)?;
        if complete {
            self.recount_attention();
        }
        Some(complete)
    }
}
