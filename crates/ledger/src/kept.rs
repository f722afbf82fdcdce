//! The orders kept on disk beside the inventory index: one SQLite database per account in the
//! same directory, by the same rules (private, one account's, set aside when damaged;
//! `esimdash_inventory::saved_file`). It holds the sales read and the stretch of the list kept
//! whole (`Run`): every order placed from its start to its top is in it. Two sessions of an
//! account each write the run they read; runs that overlap make one, else the newer stays.
//! Written a few times a command at most, it keeps a rollback journal, not WAL: a command that
//! only reads it (`Kept::peek`) opens and closes it for a fifth of the cost.

use super::sale::Sale;
use chrono::{DateTime, Utc};
use esimdash_inventory::saved_file::{self, Schema};
use esimdash_inventory::store::LoadError;
use rusqlite::{Connection, params};
use rust_decimal::Decimal;
use std::path::{Path, PathBuf};
use std::str::FromStr;

const SCHEMA: Schema = Schema {
    version: 1,
    tables: "
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS sales (
            order_no TEXT PRIMARY KEY,
            at INTEGER NOT NULL,
            status TEXT NOT NULL,
            slug TEXT NOT NULL,
            package TEXT NOT NULL,
            location TEXT NOT NULL,
            quantity INTEGER NOT NULL,
            paid TEXT NOT NULL,
            at_cost TEXT NOT NULL,
            topup INTEGER NOT NULL
        ) WITHOUT ROWID;
    ",
    drop: "DROP TABLE IF EXISTS sales; DROP TABLE IF EXISTS meta;",
    name: "orders",
    wal: false,
};

/// What went wrong with the file, in words of its own (`LoadError` speaks of the inventory).
pub fn why(e: &LoadError) -> String {
    match e {
        LoadError::Unreadable(why) => why.clone(),
        LoadError::Missing => "it is missing".to_string(),
    }
}

pub fn path_in(dir: &Path, account: &str) -> PathBuf {
    dir.join(format!("orders-{account}.sqlite3"))
}

/// The account's kept orders, open.
pub struct Kept {
    conn: Connection,
    /// What was said of a damaged file set aside as this one was made.
    pub set_aside: Option<String>,
}

impl std::fmt::Debug for Kept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kept").finish_non_exhaustive()
    }
}

/// A stretch of the list kept whole: every order placed from `from` to `top` is kept.
/// `from` is `DateTime::MIN_UTC` when it reaches the list's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    pub from: DateTime<Utc>,
    pub top: DateTime<Utc>,
}

impl Run {
    pub fn holds(&self, at: DateTime<Utc>) -> bool {
        self.from <= at && at <= self.top
    }

    /// This run with `other`: one run when they overlap (each reaches into the other), else
    /// this one, the newer read's.
    pub fn joined(self, other: Option<Run>) -> Run {
        match other {
            Some(o) if o.from <= self.top && self.from <= o.top => Run {
                from: self.from.min(o.from),
                top: self.top.max(o.top),
            },
            _ => self,
        }
    }
}

/// What is kept: the sales, the stretch kept whole (`None`: none yet), and when the list was
/// last read from its top down to that stretch (`None`: not since it was kept anew).
#[derive(Debug, Default)]
pub struct Loaded {
    pub sales: Vec<Sale>,
    pub run: Option<Run>,
    pub read_at: Option<DateTime<Utc>>,
}

impl Kept {
    /// Opens (or makes) `account`'s kept orders in `dir`.
    pub fn open(dir: &Path, account: &str) -> Result<Self, LoadError> {
        let opened = saved_file::open(&path_in(dir, account), account, &SCHEMA)?;
        Ok(Self {
            conn: opened.conn,
            set_aside: opened.set_aside,
        })
    }

    /// Everything kept. A row that cannot be read back (a value edited by hand) makes the
    /// whole unreadable: it is then read again from the API, which loses nothing.
    pub fn load(&self) -> Result<Loaded, LoadError> {
        loaded(&self.conn, DateTime::<Utc>::MIN_UTC)
    }

    /// What `account` keeps in `dir` of the orders placed from `since` on, read without
    /// opening the file to write (`None` where it cannot be read so: `open` then makes or
    /// mends it).
    pub fn peek(dir: &Path, account: &str, since: DateTime<Utc>) -> Option<Loaded> {
        let conn = saved_file::read_only(&path_in(dir, account), account, &SCHEMA)?;
        loaded(&conn, since).ok()
    }

    /// Keeps `sales` (newer copies replace older ones) and the run this read made, joined to
    /// the run kept (another session's, maybe), in one transaction. `anew`: what was kept is
    /// of another history (the server's list changed under it) and goes first.
    pub fn write(&mut self, sales: &[Sale], run: Option<Run>, anew: bool) -> Result<(), LoadError> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        // Read in the transaction: another session's run written meanwhile is joined, not lost.
        let kept = if anew { None } else { run_in(&tx)?.0 };
        if anew {
            tx.execute_batch(
                "DELETE FROM sales; DELETE FROM meta WHERE key IN ('whole_from', 'run_top', 'top_read');",
            )?;
        }
        {
            let mut put = tx.prepare_cached(
                "INSERT OR REPLACE INTO sales (order_no, at, status, slug, package, location, quantity, paid, at_cost, topup)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?;
            for s in sales {
                put.execute(params![
                    s.order_no,
                    s.at.timestamp(),
                    s.status,
                    s.slug,
                    s.package,
                    s.location,
                    i64::try_from(s.quantity).unwrap_or(i64::MAX),
                    s.paid.to_string(),
                    s.at_cost.to_string(),
                    s.topup
                ])?;
            }
        }
        if let Some(run) = run {
            let run = run.joined(kept);
            let mut put = tx.prepare_cached("INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)")?;
            put.execute(params!["whole_from", run.from.timestamp()])?;
            put.execute(params!["run_top", run.top.timestamp()])?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Keeps that the list was read from its top down to the run at `at` (another session's
    /// later read stays).
    pub fn write_read_at(&mut self, at: DateTime<Utc>) -> Result<(), LoadError> {
        self.conn.execute(
            "INSERT INTO meta (key, value) VALUES ('top_read', ?1)
             ON CONFLICT (key) DO UPDATE SET value = max(value, excluded.value)",
            [at.timestamp()],
        )?;
        Ok(())
    }
}

/// The orders kept in `conn` placed from `since` on, the run and when it was read.
fn loaded(conn: &Connection, since: DateTime<Utc>) -> Result<Loaded, LoadError> {
    let (run, read_at) = run_in(conn)?;
    let mut statement = conn.prepare(
        "SELECT order_no, at, status, slug, package, location, quantity, paid, at_cost, topup FROM sales WHERE at >= ?1",
    )?;
    let rows = statement.query_map([since.timestamp()], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, i64>(1)?,
            [r.get::<_, String>(2)?, r.get(3)?, r.get(4)?, r.get(5)?],
            r.get::<_, i64>(6)?,
            [r.get::<_, String>(7)?, r.get(8)?],
            r.get::<_, bool>(9)?,
        ))
    })?;
    let mut sales = Vec::new();
    for row in rows {
        let (order_no, at, [status, slug, package, location], quantity, [paid, at_cost], topup) = row?;
        let bad = || LoadError::Unreadable(format!("order {order_no} kept with values that do not read back"));
        sales.push(Sale {
            at: DateTime::from_timestamp(at, 0).ok_or_else(bad)?,
            quantity: u64::try_from(quantity).map_err(|_| bad())?,
            paid: Decimal::from_str(&paid).map_err(|_| bad())?,
            at_cost: Decimal::from_str(&at_cost).map_err(|_| bad())?,
            order_no,
            status,
            slug,
            package,
            location,
            topup,
        });
    }
    Ok(Loaded { sales, run, read_at })
}

/// The run kept in the database `conn` reads, and when the list was read from its top down to
/// it: one statement (a command that only reads them pays for each statement it compiles).
fn run_in(conn: &Connection) -> Result<(Option<Run>, Option<DateTime<Utc>>), LoadError> {
    let [from, top, read]: [Option<i64>; 3] = conn.query_row(
        "SELECT (SELECT value FROM meta WHERE key = 'whole_from'), (SELECT value FROM meta WHERE key = 'run_top'),
                (SELECT value FROM meta WHERE key = 'top_read')",
        [],
        |r| Ok([r.get(0)?, r.get(1)?, r.get(2)?]),
    )?;
    let at = |t: Option<i64>| t.and_then(|t| DateTime::from_timestamp(t, 0));
    let run = at(from).zip(at(top)).map(|(from, top)| Run { from, top });
    Ok((run, at(read)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Ledger;

    fn sale(no: &str, hours_ago: i64) -> Sale {
        Sale {
            order_no: no.into(),
            at: DateTime::from_timestamp(1_800_000_000 - hours_ago * 3600, 0).unwrap(),
            status: "in_use".into(),
            slug: "fr-1gb-7d".into(),
            package: "France 1GB 7 Days".into(),
            location: "FR".into(),
            quantity: 2,
            paid: Decimal::new(1240, 2),
            at_cost: Decimal::new(990, 2),
            topup: false,
        }
    }

    /// The kept orders are read without opening them to write only where young: read from
    /// the top of the list within the max age, their run reaching back to the period's start;
    /// nothing kept, never read from the top, or another account's: not so.
    #[test]
    fn kept_orders_are_young_only_within_the_max_age_and_their_run() {
        let dir = tempfile::tempdir().unwrap();
        let at = |h: i64| DateTime::from_timestamp(1_800_000_000 - h * 3600, 0).unwrap();
        let (now, hour) = (at(0), chrono::Duration::hours(1));
        let young = |account: &str, since: i64, max_age| Ledger::young((dir.path(), account), at(since), now, max_age);
        assert!(young("acme", 48, hour).is_none(), "nothing kept");
        let mut kept = Kept::open(dir.path(), "acme").unwrap();
        let run = Run {
            from: at(72),
            top: at(1),
        };
        kept.write(&[sale("B1", 1), sale("B2", 30), sale("B3", 100)], Some(run), false)
            .unwrap();
        assert!(young("acme", 48, hour).is_none(), "never read from the top");
        let read = now - chrono::Duration::minutes(10);
        kept.write_read_at(read).unwrap();
        let (sales, when) = young("acme", 48, hour).unwrap();
        assert_eq!(when, read);
        let mut numbers: Vec<&str> = sales.iter().map(|s| s.order_no.as_str()).collect();
        numbers.sort_unstable();
        assert_eq!(numbers, ["B1", "B2"], "the period's only");
        assert!(
            young("acme", 48, chrono::Duration::minutes(5)).is_none(),
            "older than the max age"
        );
        assert!(
            young("acme", 96, hour).is_none(),
            "the run does not reach back that far"
        );
        assert!(
            young("other", 48, hour).is_none(),
            "another account's file is not there"
        );
        // An earlier read written later is no younger: the latest stays.
        kept.write_read_at(read - hour).unwrap();
        assert_eq!(young("acme", 48, hour).map(|(_, w)| w), Some(read));
    }

    /// What one session keeps, another reads back whole; two sessions' runs that overlap make
    /// one, a run apart from the kept one replaces it; a history of another server goes whole;
    /// a row that does not read back empties the file (read again, nothing lost).
    #[test]
    fn kept_orders_read_back_and_runs_join_only_where_they_overlap() {
        let dir = tempfile::tempdir().unwrap();
        let at = |h: i64| DateTime::from_timestamp(1_800_000_000 - h * 3600, 0).unwrap();
        let run = |from: i64, top: i64| {
            Some(Run {
                from: at(from),
                top: at(top),
            })
        };
        let mut kept = Kept::open(dir.path(), "acme").unwrap();
        kept.write(&[sale("B1", 1), sale("B2", 30)], run(48, 1), false).unwrap();
        kept.write(&[sale("B3", 0)], run(24, 0), false).unwrap();
        let loaded = Kept::open(dir.path(), "acme").unwrap().load().unwrap();
        assert_eq!(loaded.sales.len(), 3);
        assert!(loaded.sales.contains(&sale("B2", 30)));
        assert_eq!(loaded.run, run(48, 0));
        // A look that reached its start without meeting the run: the two are not one.
        kept.write(&[sale("B4", -9)], run(-5, -9), false).unwrap();
        assert_eq!(kept.load().unwrap().run, run(-5, -9));

        kept.write(&[sale("B9", 2)], None, true).unwrap();
        let loaded = kept.load().unwrap();
        assert_eq!((loaded.sales.len(), loaded.run), (1, None));

        kept.conn.execute("UPDATE sales SET paid = 'lots'", []).unwrap();
        assert!(kept.load().is_err());
        let ledger = Ledger::kept_in(dir.path(), "acme");
        assert!(ledger.since(DateTime::<Utc>::MIN_UTC).is_empty());
        assert!(Kept::open(dir.path(), "acme").unwrap().load().unwrap().sales.is_empty());
    }
}
