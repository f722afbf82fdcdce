//! One inventory index for the whole team (the client's engine, saved beside the store): kept
//! fresh from the top in the background share of the key's budget, and asked where an ICCID
//! sits, so that a lookup costs at most one page read even when the API has no lookup, and a
//! page read for one agent serves the others (`reads`).

use esimdash_api::Client;
use esimdash_api::model::Whereabouts;
use esimdash_inventory::kept::{self, Kept};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// The index reads pages of the API's largest size.
pub(crate) const PAGE: u64 = 100;
/// Between two looks at the top of the list once the index holds all of it.
const PAUSE: Duration = Duration::from_secs(60);

pub(crate) struct TeamIndex {
    kept: Kept,
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
        let feed = kept.clone();
        upstream.on_esims_read(std::sync::Arc::new(move |read| feed.feed(read.esims, read.place)));
        TeamIndex {
            kept,
            total: AtomicU64::new(0),
            held: AtomicU64::new(0),
            upstream_lacks_lookup: AtomicBool::new(false),
            pages_read: AtomicU64::new(0),
        }
    }

    /// Reads the list from the top until the index holds all of it, then looks at the top
    /// every minute for new eSIMs (and refreshes the page read longest ago), for as long as
    /// the gateway runs.
    pub(crate) async fn keep_fresh(&self, upstream: Client) {
        let mut page = 1;
        // Counted (a scan of the saved index) only at the top and at the end of the list: per
        // page, it made reading a million eSIMs quadratic.
        let mut held = 0;
        loop {
            self.pages_read.fetch_add(1, Ordering::Relaxed);
            match upstream.index_page(page, PAGE).await {
                Ok((answer, place)) => {
                    self.total.store(place.total, Ordering::Relaxed);
                    let end = answer.esims.is_empty() || place.first_place() + PAGE >= place.total;
                    if page == 1 || end {
                        held = self.held().await;
                    } else {
                        // Within a pass: at least what the pages read so far hold.
                        let read = (place.first_place() + answer.esims.len() as u64).min(place.total);
                        self.held.fetch_max(read, Ordering::Relaxed);
                    }
                    if held >= place.total || end {
                        page = self.rest(&upstream).await;
                    } else {
                        page += 1;
                    }
                }
                Err(e) => {
                    tracing::warn!(page, "the team index could not read a page: {e}");
                    tokio::time::sleep(Duration::from_secs(5)).await;
                }
            }
        }
    }

    /// Waits, refreshes the page read longest ago; the page to read next (the top).
    async fn rest(&self, upstream: &Client) -> u64 {
        tokio::time::sleep(PAUSE).await;
        let kept = self.kept.clone();
        let oldest = tokio::task::spawn_blocking(move || kept.pages_held_whole(PAGE).first().copied())
            .await
            .ok()
            .flatten();
        if let Some(page) = oldest.filter(|p| *p > 1) {
            self.pages_read.fetch_add(1, Ordering::Relaxed);
            if let Err(e) = upstream.index_page(page, PAGE).await {
                tracing::warn!(page, "the team index could not refresh a page: {e}");
            }
        }
        1
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
