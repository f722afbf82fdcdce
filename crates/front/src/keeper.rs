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
use esimdash_inventory::kept::Kept;
use esimdash_inventory::picture::OrderTotals;
use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The share of the key's budget a keeper takes unless configured: a quarter, so that at the
/// API's 120 a minute a sweep reads 30 pages (3 000 eSIMs) a minute and the dashboards and
/// commands of the account keep three quarters.
pub const DEFAULT_SHARE: f64 = 0.25;

/// How often the top of the list is read again for new eSIMs.
const TOP_EVERY: chrono::Duration = chrono::Duration::seconds(60);

/// A usable eSIM read this long ago is read again: a small account's picture rests between
/// sweeps (and its dashboard with it), a large one's is swept without pause.
const SWEEP_AFTER: chrono::Duration = chrono::Duration::minutes(15);

/// How often the orders' totals by status are read again (a request per status).
const ORDERS_EVERY: Duration = Duration::from_secs(300);

/// How long a keeper that does not hold the lock waits before asking again.
const STANDBY: Duration = Duration::from_secs(30);

/// `keepers/<account>` in the state folder (`Client::state_place`: the account's id there).
pub fn lock_path(state_dir: &Path, account: &str) -> PathBuf {
    state_dir.join("keepers").join(account)
}

/// What a keeper reads next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// The top of the list: its total and new eSIMs.
    Top,
    /// A page whose places the index does not hold.
    Missing(u64),
    /// The page holding the usable eSIM read longest ago.
    Sweep(u64),
    /// Nothing for this long: the top was read within the minute and every usable eSIM less
    /// than `SWEEP_AFTER` ago.
    Rest(Duration),
}

/// What to read of the list next, by what the index holds now; the places it lacks only when
/// the keeper `fills` them (the dashboard reads those itself).
pub fn next(kept: &Kept, fills: bool, now: chrono::DateTime<chrono::Utc>) -> Next {
    // SQLite counts it: the keeper asks before each page, at 100 000 eSIMs too.
    let Some(picture) = kept.freshness() else {
        return Next::Top;
    };
    let (Some(total), Some(top)) = (picture.total, picture.top) else {
        return Next::Top;
    };
    if now - top >= TOP_EVERY {
        return Next::Top;
    }
    if !picture.is_whole() {
        if !fills {
            // The dashboard fills the index itself: the keeper waits for the top's minute.
            let top_due = TOP_EVERY - (now - top);
            return Next::Rest(top_due.to_std().unwrap_or_default().max(Duration::from_secs(1)));
        }
        let whole: std::collections::HashSet<u64> = kept.pages_held_whole(PAGE_SIZE).into_iter().collect();
        let pages = total.div_ceil(PAGE_SIZE);
        if let Some(page) = (1..=pages).find(|p| !whole.contains(p)) {
            return Next::Missing(page);
        }
    }
    let top_due = TOP_EVERY - (now - top);
    let sweep_due = picture
        .oldest_usable
        .map_or(TOP_EVERY, |oldest| SWEEP_AFTER - (now - oldest));
    if sweep_due > chrono::Duration::zero() {
        let rest = top_due.min(sweep_due).to_std().unwrap_or_default();
        return Next::Rest(rest.max(Duration::from_secs(1)));
    }
    kept.oldest_usable_page(PAGE_SIZE)
        .map_or(Next::Rest(Duration::from_secs(1)), Next::Sweep)
}

/// How a keeper goes about it.
#[derive(Debug, Clone)]
pub struct Keeping {
    /// Its share of the key's budget (0 to 1).
    pub share: f64,
    /// It reads the places the index lacks (not in the dashboard, whose own read does).
    pub fills: bool,
    /// The account's keeper lock (`lock_path`).
    pub lock: PathBuf,
}

/// Keeps the picture of `kept`'s account young while it runs (it never returns): when this
/// process holds the account's keeper lock, else in standby until it does.
pub async fn keep(client: Client, kept: Kept, keeping: Keeping) {
    let Keeping { share, fills, lock } = keeping;
    let _held = loop {
        match try_hold(&lock) {
            Ok(Some(held)) => break held,
            Ok(None) => tokio::time::sleep(STANDBY).await,
            Err(e) => {
                tracing::warn!(path = %lock.display(), %e, "no keeper lock: this process keeps no picture");
                return std::future::pending().await;
            }
        }
    };
    tracing::info!("keeping the account's picture");
    let (limit, window) = client.rate_budget();
    let spacing = window.div_f64((f64::from(limit.max(1)) * share.clamp(0.01, 1.0)).max(1e-3));
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
        let page = match next(&kept, fills, chrono::Utc::now()) {
            Next::Top => 1,
            Next::Missing(page) | Next::Sweep(page) => page,
            Next::Rest(rest) => {
                tokio::time::sleep(rest).await;
                continue;
            }
        };
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

/// The keeper lock, if no other process holds it.
fn try_hold(path: &Path) -> std::io::Result<Option<File>> {
    let file = esimdash_files::open_or_create(path)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(e),
    }
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
        let first = try_hold(&path).unwrap();
        assert!(first.is_some());
        assert!(try_hold(&path).unwrap().is_none(), "a second keeper stands by");
        drop(first);
        assert!(try_hold(&path).unwrap().is_some(), "and takes over when the first ends");
    }

    /// Beside a dashboard, which fills the index itself, a keeper reads nothing while the index
    /// is not whole and the top was read within the minute (it read the top without pause
    /// before: 8 s of CPU in a dashboard's read of 100 000 eSIMs, 68 s at a million); a keeper
    /// that fills reads the first page missing.
    #[test]
    fn a_keeper_that_does_not_fill_rests_until_the_top_is_due() {
        let dir = tempfile::tempdir().unwrap();
        let kept = esimdash_inventory::kept::at(dir.path(), "acct");
        let esims: Vec<esimdash_api::model::Esim> = (0..PAGE_SIZE)
            .map(|i| {
                let raw = format!(r#"{{"iccid":"89{i:017}","smdpStatus":"ENABLED"}}"#);
                serde_json::from_str(&format!(r#"{{"status":"IN_USE","rawOrderJson":{raw}}}"#)).unwrap()
            })
            .collect();
        let place = esimdash_api::model::PagePlace {
            page: 1,
            size: PAGE_SIZE,
            total: 3 * PAGE_SIZE,
        };
        kept.feed(&esims, Some(place));
        assert!(kept.flush());
        let now = chrono::Utc::now();
        assert!(
            matches!(next(&kept, false, now), Next::Rest(d) if d > Duration::from_secs(50)),
            "{:?}",
            next(&kept, false, now)
        );
        assert_eq!(next(&kept, true, now), Next::Missing(2));
        assert_eq!(next(&kept, false, now + chrono::Duration::seconds(61)), Next::Top);
    }
}
