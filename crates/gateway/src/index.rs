//! One inventory index for the whole team (the client's engine, saved beside the store): kept
//! as the account's picture by the client keeper's rule (read whole, then the top every minute
//! and the usable eSIMs swept oldest first, within the key's budget), and asked where an ICCID
//! sits, so that a lookup costs at most one page read even when the API has no lookup, and a
//! page read for one agent serves the others (`reads`).

use esimdash_api::Client;
use esimdash_api::model::Whereabouts;
use esimdash_inventory::keeping::{self, Next};
use esimdash_inventory::kept::{self, Kept};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// The index reads pages of the API's largest size.
pub(crate) const PAGE: u64 = 100;

pub(crate) struct TeamIndex {
    kept: Kept,
    /// Its keeper's lock: one gateway on an index keeps it.
    lock: PathBuf,
    /// The list's total as last read, and how many eSIMs the index holds.
    total: AtomicU64,
    held: AtomicU64,
    /// The API answered a lookup with other eSIMs: it has none, the index answers.
    upstream_lacks_lookup: AtomicBool,
    /// Pages this index asked the API for.
    pages_read: AtomicU64,
}

impl TeamIndex {
    /// The index of the account `upstream` speaks for, in `dir`; every eSIM `upstream` reads
    /// goes into it.
    pub(crate) fn open(dir: &Path, upstream: &Client, account: &str) -> TeamIndex {
        let account = esimdash_inventory::store::account_key(upstream.base_url().as_str(), account);
        let kept = kept::at(dir, &account);
        let lock = dir.join("keepers").join(&account);
        let feed = kept.clone();
        upstream.on_esims_read(std::sync::Arc::new(move |read| feed.feed(read.esims, read.place)));
        TeamIndex {
            kept,
            lock,
            total: AtomicU64::new(0),
            held: AtomicU64::new(0),
            upstream_lacks_lookup: AtomicBool::new(false),
            pages_read: AtomicU64::new(0),
        }
    }

    /// Keeps the team's picture for as long as the gateway runs, by the client keeper's rule
    /// (`esimdash_inventory::keeping`): the list read whole from the top (at the background
    /// share), then the top once a minute and the usable eSIMs swept oldest first, at the
    /// keeper's share of the key's budget. While this gateway holds the index's keeper lock
    /// (`keepers/<account>` beside the index): a second gateway on the same index stands by.
    pub(crate) async fn keep_fresh(&self, upstream: Client) {
        let _held = loop {
            match esimdash_files::hold_if_free(&self.lock) {
                Ok(Some(held)) => break held,
                Ok(None) => tokio::time::sleep(keeping::STANDBY).await,
                Err(e) => {
                    tracing::warn!(path = %self.lock.display(), %e, "no keeper lock: the team index is not kept");
                    return std::future::pending().await;
                }
            }
        };
        let spacing = keeping::spacing(upstream.rate_budget(), keeping::DEFAULT_SHARE);
        loop {
            let kept = self.kept.clone();
            let next = tokio::task::spawn_blocking(move || {
                keeping::next(&kept, keeping::Reads::ALL, PAGE, chrono::Utc::now())
            })
            .await
            .unwrap_or(Next::Rest(Duration::from_secs(5)));
            let (pages, paced) = match next {
                Next::Top => (vec![1], true),
                // Paced by the background share alone: the team waits for a whole index.
                Next::Fill(pages) => (pages, false),
                Next::Sweep(page) => (vec![page], true),
                Next::Rest(rest) => {
                    tokio::time::sleep(rest).await;
                    continue;
                }
            };
            for (n, page) in pages.into_iter().enumerate() {
                self.pages_read.fetch_add(1, Ordering::Relaxed);
                match upstream.index_page(page, PAGE).await {
                    Ok((_, place)) => self.total.store(place.total, Ordering::Relaxed),
                    Err(e) => {
                        tracing::warn!(page, "the team index could not read a page: {e}");
                        tokio::time::sleep(Duration::from_secs(5)).await;
                    }
                }
                // Counted (a pass over the saved index) every 100 pages of a fill, not after
                // each: per page, it made reading a million eSIMs quadratic.
                if n % 100 == 99 {
                    self.held().await;
                }
                if paced {
                    tokio::time::sleep(spacing).await;
                }
            }
            self.held().await;
        }
    }

    async fn held(&self) -> u64 {
        let kept = self.kept.clone();
        let held = tokio::task::spawn_blocking(move || kept.held())
            .await
            .ok()
            .flatten()
            .unwrap_or(0);
        self.held.store(held, Ordering::Relaxed);
        held
    }

    /// Where the index saw this ICCID.
    pub(crate) async fn whereabouts(&self, iccid: &str) -> Option<Whereabouts> {
        let (kept, iccid) = (self.kept.clone(), iccid.to_string());
        tokio::task::spawn_blocking(move || kept.whereabouts(&iccid))
            .await
            .ok()
            .flatten()
    }

    /// (eSIMs held, the list's total): how much of the list the index covers.
    pub(crate) fn coverage(&self) -> (u64, u64) {
        (self.held.load(Ordering::Relaxed), self.total.load(Ordering::Relaxed))
    }

    /// Pages this index asked the API for since the gateway started.
    pub(crate) fn pages_read(&self) -> u64 {
        self.pages_read.load(Ordering::Relaxed)
    }

    /// The index holds every eSIM of the list: an ICCID it lacks is not the account's.
    pub(crate) fn is_complete(&self) -> bool {
        let (held, total) = self.coverage();
        total > 0 && held >= total
    }

    pub(crate) fn upstream_lacks_lookup(&self) -> bool {
        self.upstream_lacks_lookup.load(Ordering::Relaxed)
    }

    pub(crate) fn saw_no_lookup(&self) {
        if !self.upstream_lacks_lookup.swap(true, Ordering::Relaxed) {
            tracing::info!("the API has no lookup by ICCID: the team index answers lookups");
        }
    }
}
