//! The account's keeper: a long-running esimdash (`watch`, `metrics --listen`) keeps the kept
//! picture (`esimdash_inventory::picture`) young, so that checks and scrapes answer from it in a
//! request or two. It reads, one page at a time and within its share of the key's budget:
//! the top of the list once a minute (new eSIMs come there), the places the index does not hold
//! yet, and otherwise the page holding the usable eSIM read longest ago: a sweep, oldest first,
//! of every eSIM whose facts can still change.
//!
//! One keeper per account on a machine sweeps: the one holding `keepers/<account>` (a `flock`
//! the kernel lets go of when its holder ends, however it ends); another waits to take over.
//! Its pages go through the client's background share, so what a user waits for goes first,
//! and through the key's budget shared by every process of the account.

use esimdash_api::Client;
use esimdash_api::model::{EsimQuery, OrderQuery};
use esimdash_api::pages::PAGE_SIZE;
use esimdash_domain::status::{Status, StatusFilter};
pub use esimdash_inventory::keeping::Reads;
use esimdash_inventory::keeping::{Next, STANDBY, next};
use esimdash_inventory::kept::Kept;
use esimdash_inventory::picture::OrderTotals;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use esimdash_inventory::keeping::DEFAULT_SHARE;

/// How often the orders' totals by status are read again (a request per status).
const ORDERS_EVERY: Duration = Duration::from_secs(300);

/// `keepers/<account>` in the state folder (`Client::state_place`: the account's id there).
pub fn lock_path(state_dir: &Path, account: &str) -> PathBuf {
    state_dir.join("keepers").join(account)
}

/// How a keeper goes about it.
#[derive(Debug, Clone)]
pub struct Keeping {
    /// Its share of the key's budget (0 to 1).
    pub share: f64,
    /// What it reads besides the top (what the process's other readers do not).
    pub reads: Reads,
    /// The account's keeper lock (`lock_path`).
    pub lock: PathBuf,
}

/// Keeps the picture of `kept`'s account young while it runs (it never returns): when this
/// process holds the account's keeper lock, else in standby until it does.
pub async fn keep(client: Client, kept: Kept, keeping: Keeping) {
    let Keeping { share, reads, lock } = keeping;
    let _held = loop {
        match esimdash_files::hold_if_free(&lock) {
            Ok(Some(held)) => break held,
            Ok(None) => tokio::time::sleep(STANDBY).await,
            Err(e) => {
                tracing::warn!(path = %lock.display(), %e, "no keeper lock: this process keeps no picture");
                return std::future::pending().await;
            }
        }
    };
    tracing::info!("keeping the account's picture");
    let spacing = esimdash_inventory::keeping::spacing(client.rate_budget(), share);
    let mut failures = 0u32;
    let mut orders_read: Option<std::time::Instant> = None;
    loop {
        if orders_read.is_none_or(|at| at.elapsed() >= ORDERS_EVERY) {
            match client.in_background(order_totals(&client)).await {
                Ok(totals) => {
                    kept.keep_order_totals(&totals);
                    orders_read = Some(std::time::Instant::now());
                }
                Err(e) => tracing::warn!(%e, "the keeper could not read the orders' totals"),
            }
        }
        let pages = match next(&kept, reads, PAGE_SIZE, chrono::Utc::now()) {
            Next::Top => vec![1],
            Next::Fill(pages) => pages,
            Next::Sweep(page) => vec![page],
            Next::Rest(rest) => {
                tokio::time::sleep(rest).await;
                continue;
            }
        };
        for page in pages {
            let query = EsimQuery {
                page: Some(page),
                page_size: Some(PAGE_SIZE),
                ..EsimQuery::default()
            };
            // Read as any page is: into the index, and the dashboard's too, where one runs.
            match client.in_background(client.esims(&query)).await {
                Ok(_) => failures = 0,
                Err(e) => {
                    failures = failures.saturating_add(1);
                    tracing::warn!(page, %e, "the keeper's read failed");
                }
            }
            // Spaced to its share; after failures, further apart (at most a minute between reads).
            let backoff = spacing
                .saturating_mul(1 << failures.min(5))
                .min(Duration::from_secs(60).max(spacing));
            tokio::time::sleep(backoff).await;
        }
    }
}

/// The orders' totals by status now: the list's `total` for each status, a page of one each.
pub async fn order_totals(client: &Client) -> Result<OrderTotals, esimdash_api::ApiError> {
    let mut by_status = Vec::new();
    for status in Status::KNOWN {
        let query = OrderQuery {
            page: Some(1),
            page_size: Some(1),
            status: StatusFilter::Is(status.clone()),
            ..OrderQuery::default()
        };
        by_status.push((status.as_str().to_string(), client.orders(&query).await?.total));
    }
    Ok(OrderTotals {
        read_at: chrono::Utc::now().timestamp(),
        by_status,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lock is the account's: a second keeper of it stands by until the first ends, a
    /// keeper of another account is not held up.
    #[test]
    fn one_keeper_per_account_holds_the_lock() {
        let state = tempfile::tempdir().unwrap();
        let (path, other) = (lock_path(state.path(), "a1"), lock_path(state.path(), "a2"));
        assert_ne!(path, other, "each account its own");
        let first = esimdash_files::hold_if_free(&path).unwrap();
        assert!(first.is_some());
        assert!(
            esimdash_files::hold_if_free(&path).unwrap().is_none(),
            "a second keeper stands by"
        );
        drop(first);
        assert!(
            esimdash_files::hold_if_free(&path).unwrap().is_some(),
            "and takes over when the first ends"
        );
    }
}
