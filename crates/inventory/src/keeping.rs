//! What a keeper of the account's picture reads next, by what the saved index holds now: the
//! top of the list once a minute (new eSIMs come there), the pages the index does not hold (when
//! the keeper fills them), then the page holding the usable eSIM read longest ago, once it was
//! read `SWEEP_AFTER` ago. One rule for every keeper: the client's (`esimdash_front::keeper`)
//! and the team gateway's.

use super::kept::Kept;
use std::time::Duration;

/// The share of the key's budget a keeper takes unless configured: a quarter, so that at the
/// API's 120 a minute a sweep reads 30 pages (3 000 eSIMs) a minute and the dashboards and
/// commands of the account keep three quarters.
pub const DEFAULT_SHARE: f64 = 0.25;

/// How long a keeper that does not hold its lock waits before asking again.
pub const STANDBY: Duration = Duration::from_secs(30);

/// The time between two of a keeper's reads: `share` of a key allowed `limit` a `window`.
pub fn spacing((limit, window): (u32, Duration), share: f64) -> Duration {
    window.div_f64((f64::from(limit.max(1)) * share.clamp(0.01, 1.0)).max(1e-3))
}

/// How often the top of the list is read again for new eSIMs.
pub const TOP_EVERY: chrono::Duration = chrono::Duration::seconds(60);

/// A usable eSIM read this long ago is read again: a small account's picture rests between
/// sweeps (and its dashboard with it), a large one's is swept without pause.
pub const SWEEP_AFTER: chrono::Duration = chrono::Duration::minutes(15);

/// What a keeper reads next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// The top of the list: its total and new eSIMs.
    Top,
    /// The pages whose places the index does not hold, in order: read one after the other
    /// without asking again (asking counts the whole index, a full pass at a million eSIMs).
    Fill(Vec<u64>),
    /// The page holding the usable eSIM read longest ago.
    Sweep(u64),
    /// Nothing for this long: the top was read within the minute and every usable eSIM less
    /// than `SWEEP_AFTER` ago (or, not filling, the index is being filled by another reader).
    Rest(Duration),
}

/// What a keeper reads besides the top: what no other reader of the process reads for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reads {
    /// The places the index lacks.
    pub fills: bool,
    /// The usable eSIMs, oldest read first.
    pub sweeps: bool,
}

impl Reads {
    /// Alone with the index (`metrics --listen`, the gateway): all of it.
    pub const ALL: Reads = Reads {
        fills: true,
        sweeps: true,
    };
    /// Beside a dashboard, whose own read fills the index: the sweep.
    pub const BESIDE_A_DASHBOARD: Reads = Reads {
        fills: false,
        sweeps: true,
    };
    /// Beside `watch`, whose polls read every page in turn (its events come from them): only
    /// the top when no poll read it within the minute.
    pub const BESIDE_A_WATCH: Reads = Reads {
        fills: false,
        sweeps: false,
    };
}

/// What to read of the list (in pages of `size`) next, of what `reads` says the keeper reads.
pub fn next(kept: &Kept, reads: Reads, size: u64, now: chrono::DateTime<chrono::Utc>) -> Next {
    // SQLite counts it: a keeper asks before each page, at 100 000 eSIMs too.
    let Some(picture) = kept.freshness() else {
        return Next::Top;
    };
    let (Some(total), Some(top)) = (picture.total, picture.top) else {
        return Next::Top;
    };
    if now - top >= TOP_EVERY {
        return Next::Top;
    }
    let top_due = TOP_EVERY - (now - top);
    let rest = |due: chrono::Duration| Next::Rest(due.to_std().unwrap_or_default().max(Duration::from_secs(1)));
    if !picture.is_whole() {
        if !reads.fills {
            return rest(top_due);
        }
        let whole: std::collections::HashSet<u64> = kept.pages_held_whole(size).into_iter().collect();
        let missing: Vec<u64> = (1..=total.div_ceil(size.max(1)))
            .filter(|p| !whole.contains(p))
            .collect();
        if !missing.is_empty() {
            return Next::Fill(missing);
        }
    }
    if !reads.sweeps {
        return rest(top_due);
    }
    let sweep_due = picture
        .oldest_usable
        .map_or(TOP_EVERY, |oldest| SWEEP_AFTER - (now - oldest));
    if sweep_due > chrono::Duration::zero() {
        return rest(top_due.min(sweep_due));
    }
    kept.oldest_usable_page(size)
        .map_or(Next::Rest(Duration::from_secs(1)), Next::Sweep)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PagePlace;
    use esimdash_domain::model::Esim;

    const PAGE_SIZE: u64 = 100;

    /// Beside a dashboard, which fills the index itself, a keeper reads nothing while the index
    /// is not whole and the top was read within the minute (it read the top without pause
    /// before: 8 s of CPU in a dashboard's read of 100 000 eSIMs, 68 s at a million); a keeper
    /// that fills reads the pages missing, in order.
    #[test]
    fn a_keeper_that_does_not_fill_rests_until_the_top_is_due() {
        let dir = tempfile::tempdir().unwrap();
        let kept = crate::kept::at(dir.path(), "acct");
        let esims: Vec<Esim> = (0..PAGE_SIZE)
            .map(|i| {
                let raw = format!(r#"{{"iccid":"89{i:017}","smdpStatus":"ENABLED"}}"#);
                serde_json::from_str(&format!(r#"{{"status":"IN_USE","rawOrderJson":{raw}}}"#)).unwrap()
            })
            .collect();
        let place = PagePlace {
            page: 1,
            size: PAGE_SIZE,
            total: 3 * PAGE_SIZE,
        };
        kept.feed(&esims, Some(place));
        assert!(kept.flush());
        let now = chrono::Utc::now();
        assert!(
            matches!(next(&kept, Reads::BESIDE_A_DASHBOARD, PAGE_SIZE, now), Next::Rest(d) if d > Duration::from_secs(50)),
            "{:?}",
            next(&kept, Reads::BESIDE_A_DASHBOARD, PAGE_SIZE, now)
        );
        assert_eq!(next(&kept, Reads::ALL, PAGE_SIZE, now), Next::Fill(vec![2, 3]));
        assert_eq!(
            next(
                &kept,
                Reads::BESIDE_A_DASHBOARD,
                PAGE_SIZE,
                now + chrono::Duration::seconds(61)
            ),
            Next::Top
        );

        // Whole, the top read now, pages 2 and 3 16 minutes ago: their usable eSIMs are due.
        let old = now.timestamp() - 16 * 60;
        for page in [2, 3] {
            kept.writer()
                .send(crate::Seen::page(&esims, PagePlace { page, ..place }, old));
        }
        kept.feed(&esims, Some(place));
        assert!(kept.flush());
        for reads in [Reads::ALL, Reads::BESIDE_A_DASHBOARD] {
            let due = next(&kept, reads, PAGE_SIZE, now);
            assert!(matches!(due, Next::Sweep(2 | 3)), "{reads:?}: {due:?}");
        }
        // Beside a watch, whose polls read every page in turn, it leaves them be.
        assert!(matches!(
            next(&kept, Reads::BESIDE_A_WATCH, PAGE_SIZE, now),
            Next::Rest(_)
        ));
    }
}
