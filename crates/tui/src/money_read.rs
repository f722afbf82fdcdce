//! The account's orders for the money view (Profile's chart and the header's sparkline), read
//! off the event loop: the ledger is opened by the first read (on disk beside the inventory
//! index when the account keeps one), and each read looks from the top until a known order.
//! Nobody types while it reads, so its pages take the background share of the key's budget
//! and never go ahead of what the user asks.

use chrono::{DateTime, Local, Utc};
use esimdash_api::{ApiError, Client};
use esimdash_front::session::Opened;
use esimdash_ledger::Ledger;
use esimdash_ledger::overview::Overview;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One account's ledger, shared by its reads (one at a time: a second waits, then reads what
/// is new since the first).
#[derive(Clone, Default)]
pub struct Ledgers {
    /// The directory and the account's key, when kept on disk.
    at: Option<(PathBuf, String)>,
    ledger: Arc<tokio::sync::Mutex<Option<Ledger>>>,
    /// A fixed clock, in UTC (tests and screenshots of a seeded history); else now, in this
    /// machine's zone.
    pinned: Option<DateTime<Utc>>,
}

impl std::fmt::Debug for Ledgers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledgers").field("at", &self.at).finish_non_exhaustive()
    }
}

impl Ledgers {
    /// The ledger of the account `opened`, kept in `dir` when the account keeps its index.
    pub fn of(dir: Option<&Path>, opened: &Opened) -> Self {
        Self {
            at: dir.zip(opened.index_key.clone()).map(|(d, k)| (d.to_path_buf(), k)),
            ledger: Arc::default(),
            pinned: None,
        }
    }

    /// Read as if it were `at`, with days in UTC: what a test of a seeded history draws the
    /// same on every machine and every day.
    pub fn pinned(at: DateTime<Utc>) -> Self {
        Self {
            pinned: Some(at),
            ..Self::default()
        }
    }

    /// The last 30 days as the dashboard shows them, read up to now.
    pub async fn overview(&self, client: &Client) -> Result<Overview, ApiError> {
        let mut slot = self.ledger.lock().await;
        if slot.is_none() {
            let at = self.at.clone();
            let opened = tokio::task::spawn_blocking(move || {
                Ledger::open(at.as_ref().map(|(dir, account)| (dir.as_path(), account.as_str())))
            });
            *slot = Some(opened.await.unwrap_or_default());
        }
        let ledger = slot.get_or_insert_with(Ledger::in_memory);
        let since = match self.pinned {
            Some(at) => Overview::since(at, &Utc),
            None => Overview::since(Utc::now(), &Local),
        };
        // In the background share of the budget a first look paces slower than a command's:
        // a few request timeouts for the whole look, then it stops and says so.
        let budget = client.request_timeout() * 4;
        let read = client.in_background(ledger.refresh_within(client, since, budget)).await;
        if let Some(trouble) = ledger.take_trouble() {
            tracing::warn!("{trouble}");
        }
        read?;
        Ok(match self.pinned {
            Some(at) => Overview::of(ledger, at, &Utc),
            None => Overview::of(ledger, Utc::now(), &Local),
        })
    }
}
