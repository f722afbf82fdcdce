//! The inventory saved between sessions: one SQLite database per account in the XDG cache
//! directory (named by a hash of the base URL and access code, so the name gives neither away),
//! private to the user (file 0600, directory 0700). It holds what finding needs, never an
//! activation code or anything secret.
//!
//! Every read of the list goes in as it comes, a page one transaction (`merge`): a session
//! killed mid-read loses at most the page it was merging, and two sessions of one account
//! (the dashboard and a command, two commands) write in turn and read each other's pages
//! (WAL: readers never wait for a writer). What a command needs is answered by the database's
//! own indexes, never by reading the whole file: where an ICCID was seen, which pages it holds
//! whole. The dashboard, whose search runs on every key, loads it whole
//! (`load`) into the in-memory `Inventory`.
//!
//! Places are kept counted from the oldest eSIM (`from_end`), as the in-memory index keeps
//! them: both follow one rule, "a place holds the eSIM read there last", and a property test
//! holds them to the same rows (`same_rows_as_the_inventory`).

use super::{Entry, Inventory, Merged, Package, Seen, Whereabouts};
use chrono::{DateTime, Utc};
use esimdash_domain::attention::Limits;
use esimdash_domain::esim_state::Class;
use esimdash_domain::status::Status;
use rusqlite::{Connection, OptionalExtension, params};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The schema's version (`PRAGMA user_version`); a database of another is made anew.
const VERSION: i64 = 7;

const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS packages (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL, slug TEXT NOT NULL, code TEXT NOT NULL, location TEXT NOT NULL,
        UNIQUE (name, slug, code, location)
    );
    -- One row a place of the list, counted from the oldest eSIM and negated: the list is read
    -- newest first, and a key that rises as rows are written fills the table's pages (falling,
    -- it left them half empty, a third more to read in every pass over them).
    CREATE TABLE IF NOT EXISTS esims (
        minus_from_end INTEGER PRIMARY KEY,
        iccid TEXT NOT NULL,
        status TEXT NOT NULL,
        class TEXT NOT NULL,
        package INTEGER NOT NULL,
        used_pct INTEGER,
        expires INTEGER,
        order_no TEXT NOT NULL,
        read_at INTEGER NOT NULL
    );
    CREATE INDEX IF NOT EXISTS esims_by_iccid ON esims (iccid);
";

/// Where an eSIM read without a place sits: its newest entry of that ICCID and order.
const BY_ICCID_AND_ORDER: &str =
    "SELECT -minus_from_end FROM esims WHERE iccid = ?1 AND order_no = ?2 ORDER BY minus_from_end LIMIT 1";

const SAVED: super::saved_file::Schema = super::saved_file::Schema {
    version: VERSION,
    tables: SCHEMA,
    drop: "DROP TABLE IF EXISTS esims; DROP TABLE IF EXISTS packages; DROP TABLE IF EXISTS meta;",
    wal: true,
    name: "inventory index",
};

/// Where the saved inventories go: `esimdash/` under the XDG cache directory.
pub fn default_dir() -> Option<PathBuf> {
    dirs::cache_dir().map(|d| d.join("esimdash"))
}

/// Which account a saved inventory belongs to: a hash of the base URL and the account
/// (`Credentials::account`).
pub fn account_key(base_url: &str, account: &str) -> String {
    let digest = Sha256::digest(format!("{base_url}\n{account}").as_bytes());
    esimdash_domain::text::hex(&digest[..12])
}

pub fn path_in(dir: &Path, account: &str) -> PathBuf {
    dir.join(format!("inventory-{account}.sqlite3"))
}

/// A saved inventory as loaded whole: the entries and when they were last written.
#[derive(Debug, Clone)]
pub struct SavedIndex {
    pub inventory: Inventory,
    pub saved_at: DateTime<Utc>,
    /// The account it belongs to (a session that switched account drops another's).
    pub account: String,
}

pub use super::saved_file::LoadError;

/// The account's database, open.
pub struct Store {
    conn: Connection,
    /// Package ids already in the database (a page names the same few packages).
    packages: HashMap<Package, i64>,
    /// What was said of a damaged file set aside as this one was made.
    set_aside: Option<String>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").finish_non_exhaustive()
    }
}

/// A row as the database has it at a place.
struct AtPlace {
    iccid: String,
    status: String,
    class: String,
    used_pct: Option<i64>,
    expires: Option<i64>,
    read_at: i64,
}

impl Store {
    /// Opens (or makes) the database of `account` at `path`. A database of another version or
    /// account is emptied; an index this account kept as JSON before is taken in once.
    pub fn open(path: &Path, account: &str) -> Result<Self, LoadError> {
        let opened = super::saved_file::open(path, account, &SAVED)?;
        index_usable_reads(&opened.conn)?;
        let mut store = Self {
            conn: opened.conn,
            packages: HashMap::new(),
            set_aside: opened.set_aside,
        };
        if opened.fresh {
            store.take_in_json(path.parent().unwrap_or_else(|| Path::new(".")), account);
        }
        Ok(store)
    }

    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Whether a damaged file was set aside as this one was made (said once to the user).
    pub fn take_set_aside(&mut self) -> Option<String> {
        self.set_aside.take()
    }

    /// The JSON index an earlier version kept, taken in and removed.
    fn take_in_json(&mut self, dir: &Path, account: &str) {
        let path = super::legacy::path_in(dir, account);
        match super::legacy::load(&path, account) {
            Ok(inventory) => match self.absorb(&inventory) {
                Ok(()) => {
                    let _ = std::fs::remove_file(&path);
                }
                Err(e) => tracing::warn!(%e, "the JSON index was not taken in"),
            },
            Err(super::legacy::LoadError::Missing) => {}
            Err(e) => {
                tracing::warn!(path = %path.display(), "{e}");
                let _ = std::fs::remove_file(&path);
            }
        }
    }

    /// The list's total as last seen (`None`: never).
    pub fn total(&self) -> rusqlite::Result<Option<u64>> {
        let total: Option<i64> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'total'", [], |r| r.get(0))
            .optional()?;
        Ok(total.and_then(|t| u64::try_from(t).ok()))
    }

    /// How many eSIMs the index holds.
    pub fn held(&self) -> rusqlite::Result<u64> {
        let n: i64 = self.conn.query_row("SELECT COUNT(*) FROM esims", [], |r| r.get(0))?;
        Ok(n.max(0) as u64)
    }

    /// Where this ICCID's newest entry sits, counted from the oldest eSIM, with the total it
    /// was counted against.
    pub fn whereabouts(&self, iccid: &str) -> rusqlite::Result<Option<Whereabouts>> {
        let Some(total) = self.total()? else { return Ok(None) };
        let mut stmt = self
            .conn
            .prepare_cached("SELECT -MIN(minus_from_end) FROM esims WHERE iccid = ?1")?;
        let from_end: Option<i64> = stmt.query_row([iccid], |r| r.get(0))?;
        Ok(from_end.map(|f| Whereabouts {
            from_end: f.max(0) as u64,
            total,
        }))
    }

    /// The ICCIDs the index saw for this order, the newest entry first.
    pub fn iccids_of_order(&self, order_no: &str) -> rusqlite::Result<Vec<String>> {
        let mut stmt = self.conn.prepare_cached(
            "SELECT iccid FROM esims WHERE order_no = ?1 GROUP BY iccid ORDER BY MIN(minus_from_end) LIMIT 100",
        )?;
        stmt.query_map([order_no], |r| r.get(0))?.collect()
    }

    /// The list's pages (of `size`) the index holds whole, the one read longest ago first
    /// (`Inventory::pages_held_whole`).
    pub fn pages_held_whole(&self, size: u64) -> rusqlite::Result<Vec<u64>> {
        let size = size.max(1) as i64;
        let Some(total) = self.total()? else {
            return Ok(Vec::new());
        };
        let total = i64::try_from(total).unwrap_or(i64::MAX);
        let mut stmt = self.conn.prepare_cached(
            "SELECT (?1 - 1 + minus_from_end) / ?2 + 1 AS page, COUNT(*), MIN(read_at)
             FROM esims GROUP BY page",
        )?;
        let pages = stmt.query_map(params![total, size], |r| {
            Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
        })?;
        let on_page = |page: i64| size.min(total - (page - 1) * size);
        let mut whole = Vec::new();
        for row in pages {
            let (page, held, oldest) = row?;
            if page >= 1 && held >= on_page(page) {
                whole.push((oldest, page as u64));
            }
        }
        whole.sort_unstable();
        Ok(whole.into_iter().map(|(_, page)| page).collect())
    }

    /// Merges what a read brought, in one transaction, by the in-memory index's rule.
    pub fn merge(&mut self, seen: &Seen) -> rusqlite::Result<Merged> {
        let mut merged = Merged::default();
        self.merge_all(std::slice::from_ref(seen), |m| merged = m)?;
        Ok(merged)
    }

    /// Merges several reads in order, in one transaction (a commit a page was a fifth of the
    /// writing of a whole read); `each` is told what each read merged.
    pub fn merge_all(&mut self, seen: &[Seen], mut each: impl FnMut(Merged)) -> rusqlite::Result<()> {
        let Self { conn, packages, .. } = self;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut rows = RowStatements::of(&tx)?;
        for seen in seen {
            each(merge_one(&tx, &mut rows, packages, seen)?);
        }
        drop(rows);
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('saved_at', ?1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [Utc::now().timestamp()],
        )?;
        tx.commit()
    }

    /// Takes in every entry of an in-memory index (a JSON index of an earlier version), in one
    /// transaction; an entry read later here is kept.
    pub fn absorb(&mut self, inventory: &Inventory) -> rusqlite::Result<()> {
        let Self { conn, packages, .. } = self;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        if inventory.total > 0 {
            saw_total(&tx, inventory.total)?;
        }
        let mut rows = RowStatements::of(&tx)?;
        for &e in &inventory.order {
            let e = e as usize;
            let from_end = i64::from(inventory.from_end[e]);
            let read_at = inventory.read_at[e];
            let old = row_at(&mut rows, from_end)?;
            if old.as_ref().is_some_and(|old| old.read_at >= read_at) {
                continue;
            }
            let entry = inventory.entry(e);
            let package = package_id(&tx, packages, &entry.package)?;
            put(&mut rows, (from_end, old.is_some()), (&entry, package), read_at)?;
        }
        drop(rows);
        tx.commit()
    }

    /// The whole index, for a session that searches it on every key.
    pub fn load(&self, account: &str) -> Result<SavedIndex, LoadError> {
        let mut inventory = Inventory::default();
        let Some(total) = self.total()? else {
            return Err(LoadError::Missing);
        };
        inventory.saw_total(total);
        let mut packages = HashMap::new();
        let mut stmt = self
            .conn
            .prepare("SELECT id, name, slug, code, location FROM packages")?;
        for row in stmt.query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                Package {
                    name: r.get(1)?,
                    slug: r.get(2)?,
                    code: r.get(3)?,
                    location: r.get(4)?,
                },
            ))
        })? {
            let (id, package) = row?;
            packages.insert(id, package);
        }
        let mut stmt = self.conn.prepare(
            "SELECT -minus_from_end, iccid, status, class, package, used_pct, expires, order_no, read_at
             FROM esims ORDER BY minus_from_end",
        )?;
        let mut rows = stmt.query([])?;
        let mut skipped = 0u64;
        while let Some(r) = rows.next()? {
            let from_end: i64 = r.get(0)?;
            let iccid: String = r.get(1)?;
            let package = packages.get(&r.get::<_, i64>(4)?);
            let (Ok(from_end), Some(package)) = (u32::try_from(from_end), package) else {
                skipped += 1;
                continue;
            };
            // The file is ours, but read as outside data: a row that could not have been
            // written is left out (and read again from the API), never trusted.
            if u64::from(from_end) >= total || !is_iccid(&iccid) {
                skipped += 1;
                continue;
            }
            let entry = Entry {
                iccid,
                status: Status::parse(&r.get::<_, String>(2)?),
                class: Class::from_key(&r.get::<_, String>(3)?).unwrap_or(Class::Unknown),
                package: package.clone(),
                limits: limits(r.get(5)?, r.get(6)?),
                order: r.get(7)?,
            };
            inventory.put(entry, from_end, r.get(8)?);
        }
        if skipped > 0 {
            tracing::warn!(skipped, "rows of the saved index that cannot be right were left out");
        }
        let saved_at: Option<i64> = self
            .conn
            .query_row("SELECT value FROM meta WHERE key = 'saved_at'", [], |r| r.get(0))
            .optional()?;
        Ok(SavedIndex {
            inventory,
            saved_at: saved_at
                .and_then(|t| DateTime::from_timestamp(t, 0))
                .unwrap_or_default(),
            account: account.to_string(),
        })
    }
}

/// Loads the saved index of `account` whole (`Missing` when there is none yet).
pub fn load(path: &Path, account: &str) -> Result<SavedIndex, LoadError> {
    if !saved(path, account) {
        return Err(LoadError::Missing);
    }
    Store::open(path, account)?.load(account)
}

/// Whether an index of `account` was saved at `path`, or as JSON by an earlier version beside it.
pub fn saved(path: &Path, account: &str) -> bool {
    path.exists() || super::legacy::path_in(path.parent().unwrap_or(Path::new(".")), account).exists()
}

fn is_iccid(iccid: &str) -> bool {
    !iccid.is_empty() && iccid.len() <= 32 && iccid.bytes().all(|b| b.is_ascii_digit())
}

/// The usable eSIMs' read times, indexed (a partial index: their rows only), so that the
/// picture's age and the page a keeper sweeps next are a look-up, not a pass over every row
/// (20 ms a check at 100 000 eSIMs, and before every page a keeper reads). SQLite uses it for a
/// query whose condition is this one's, word for word: both are `usable()`. Made once in a
/// database that lacks it.
pub(crate) fn index_usable_reads(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    conn.execute_batch(&format!(
        "CREATE INDEX IF NOT EXISTS esims_usable_read ON esims (read_at) WHERE {}",
        usable()
    ))
}

/// The condition an `esims` row of a usable eSIM meets (`Class::is_usable`: the one rule,
/// written out for SQLite), as comparisons joined by OR: SQLite evaluates an `IN` list of more
/// than two values through a table it makes each time the statement runs, which an insert into
/// the partial index did for every row.
pub(crate) fn usable() -> String {
    let usable: Vec<String> = Class::ALL
        .into_iter()
        .filter(|c| c.is_usable())
        .map(|c| format!("class = '{}'", c.key()))
        .collect();
    format!("({})", usable.join(" OR "))
}

pub(crate) fn limits(used_pct: Option<i64>, expires: Option<i64>) -> Limits {
    Limits {
        used_pct: used_pct.and_then(|p| u8::try_from(p.clamp(0, 100)).ok()),
        expires,
    }
}

/// One read merged, in the transaction `tx`.
fn merge_one(
    tx: &rusqlite::Transaction<'_>,
    rows: &mut RowStatements<'_>,
    packages: &mut HashMap<Package, i64>,
    seen: &Seen,
) -> rusqlite::Result<Merged> {
    let mut merged = Merged::default();
    match seen.place {
        Some(place) => {
            saw_total(tx, place.total)?;
            let places: Vec<i64> = (0..seen.entries.len() as u64)
                .map_while(|k| {
                    let at = place.first_place() + k;
                    let from_end = place.total.checked_sub(at + 1)?;
                    (from_end <= u64::from(u32::MAX - 1)).then_some(from_end as i64)
                })
                .collect();
            // What the page's places hold, in one query (a query a row was a tenth of the writing).
            let held = match (places.last(), places.first()) {
                (Some(&low), Some(&high)) => rows_between(rows, low, high)?,
                _ => Vec::new(),
            };
            for (entry, &from_end) in seen.entries.iter().zip(&places) {
                let old = held
                    .binary_search_by_key(&from_end, |(at, _)| *at)
                    .ok()
                    .map(|i| &held[i].1);
                match old {
                    Some(old) if old.iccid == entry.iccid => {
                        merged.known += 1;
                        merged.refreshed += usize::from(update(rows, from_end, old, entry, seen.read_at)?);
                    }
                    old => {
                        let package = package_id(tx, packages, &entry.package)?;
                        put(rows, (from_end, old.is_some()), (entry, package), seen.read_at)?;
                        merged.added += 1;
                    }
                }
            }
        }
        None => {
            // Where each is, all looked up before any is updated: a statement run between
            // writes to its table is compiled again each time (SQLite's STAT4 build).
            let mut stmt = tx.prepare_cached(BY_ICCID_AND_ORDER)?;
            let mut found = Vec::with_capacity(seen.entries.len());
            for entry in &seen.entries {
                let at: Option<i64> = stmt.query_row([&entry.iccid, &entry.order], |r| r.get(0)).optional()?;
                found.push(at);
            }
            drop(stmt);
            for (entry, at) in seen.entries.iter().zip(found) {
                if let Some(from_end) = at
                    && let Some(old) = row_at(rows, from_end)?
                {
                    merged.known += 1;
                    merged.refreshed += usize::from(update(rows, from_end, &old, entry, seen.read_at)?);
                }
            }
        }
    }
    Ok(merged)
}

/// The list's total moved: places past its end are dropped (`Inventory::saw_total`).
fn saw_total(tx: &rusqlite::Transaction<'_>, total: u64) -> rusqlite::Result<()> {
    let total = i64::try_from(total).unwrap_or(i64::MAX);
    let before: Option<i64> = tx
        .query_row("SELECT value FROM meta WHERE key = 'total'", [], |r| r.get(0))
        .optional()?;
    if before == Some(total) {
        return Ok(());
    }
    tx.execute("DELETE FROM esims WHERE minus_from_end <= -?1", [total])?;
    tx.execute(
        "INSERT INTO meta (key, value) VALUES ('total', ?1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [total],
    )?;
    Ok(())
}

/// The statements a merge runs for each row, found in the connection's cache once a merge
/// (once a row, hashing their text was a tenth of the writing).
struct RowStatements<'t> {
    at: rusqlite::CachedStatement<'t>,
    between: rusqlite::CachedStatement<'t>,
    update: rusqlite::CachedStatement<'t>,
    insert: rusqlite::CachedStatement<'t>,
    replace: rusqlite::CachedStatement<'t>,
}

impl<'t> RowStatements<'t> {
    fn of(tx: &'t rusqlite::Transaction<'_>) -> rusqlite::Result<Self> {
        const COLUMNS: &str = "(minus_from_end, iccid, status, class, package, used_pct, expires, order_no, read_at)
             VALUES (-?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)";
        Ok(Self {
            at: tx.prepare_cached(&format!("SELECT {AT_PLACE} FROM esims WHERE minus_from_end = -?1"))?,
            between: tx.prepare_cached(&format!(
                "SELECT -minus_from_end, {AT_PLACE} FROM esims WHERE minus_from_end BETWEEN -?2 AND -?1
                 ORDER BY minus_from_end DESC"
            ))?,
            update: tx.prepare_cached(
                "UPDATE esims SET status = ?2, class = ?3, used_pct = ?4, expires = ?5, read_at = MAX(read_at, ?6)
                 WHERE minus_from_end = -?1",
            )?,
            insert: tx.prepare_cached(&format!("INSERT INTO esims {COLUMNS}"))?,
            // A plain insert where the place is empty: a replace may delete a row first, so
            // SQLite keeps a statement journal for it.
            replace: tx.prepare_cached(&format!("INSERT OR REPLACE INTO esims {COLUMNS}"))?,
        })
    }
}

/// An `AtPlace`'s columns, as `at_place` reads them from the column `first` on.
const AT_PLACE: &str = "iccid, status, class, used_pct, expires, read_at";

fn at_place(r: &rusqlite::Row<'_>, first: usize) -> rusqlite::Result<AtPlace> {
    Ok(AtPlace {
        iccid: r.get(first)?,
        status: r.get(first + 1)?,
        class: r.get(first + 2)?,
        used_pct: r.get(first + 3)?,
        expires: r.get(first + 4)?,
        read_at: r.get(first + 5)?,
    })
}

fn row_at(rows: &mut RowStatements<'_>, from_end: i64) -> rusqlite::Result<Option<AtPlace>> {
    rows.at.query_row([from_end], |r| at_place(r, 0)).optional()
}

/// The rows at the places from `low` to `high`, by place.
fn rows_between(rows: &mut RowStatements<'_>, low: i64, high: i64) -> rusqlite::Result<Vec<(i64, AtPlace)>> {
    rows.between
        .query_map([low, high], |r| Ok((r.get(0)?, at_place(r, 1)?)))?
        .collect()
}

/// The same eSIM read again: its status, state and limits as now read; `true` if one changed.
fn update(
    rows: &mut RowStatements<'_>,
    from_end: i64,
    old: &AtPlace,
    entry: &Entry,
    read_at: i64,
) -> rusqlite::Result<bool> {
    let used = entry.limits.used_pct.map(i64::from);
    let changed = old.status != entry.status.as_str()
        || old.class != entry.class.key()
        || old.used_pct != used
        || old.expires != entry.limits.expires;
    if changed || read_at > old.read_at {
        rows.update.execute(params![
            from_end,
            entry.status.as_str(),
            entry.class.key(),
            used,
            entry.limits.expires,
            read_at
        ])?;
    }
    Ok(changed)
}

/// Another eSIM (`taken`: in place of the one there), or the first, at a place.
fn put(
    rows: &mut RowStatements<'_>,
    (from_end, taken): (i64, bool),
    (entry, package): (&Entry, i64),
    read_at: i64,
) -> rusqlite::Result<()> {
    let statement = if taken { &mut rows.replace } else { &mut rows.insert };
    statement.execute(params![
        from_end,
        entry.iccid,
        entry.status.as_str(),
        entry.class.key(),
        package,
        entry.limits.used_pct.map(i64::from),
        entry.limits.expires,
        entry.order,
        read_at
    ])?;
    Ok(())
}

fn package_id(
    tx: &rusqlite::Transaction<'_>,
    known: &mut HashMap<Package, i64>,
    package: &Package,
) -> rusqlite::Result<i64> {
    if let Some(&id) = known.get(package) {
        return Ok(id);
    }
    let p = package;
    tx.execute(
        "INSERT OR IGNORE INTO packages (name, slug, code, location) VALUES (?1, ?2, ?3, ?4)",
        params![p.name, p.slug, p.code, p.location],
    )?;
    let id = tx.query_row(
        "SELECT id FROM packages WHERE name = ?1 AND slug = ?2 AND code = ?3 AND location = ?4",
        params![p.name, p.slug, p.code, p.location],
        |r| r.get(0),
    )?;
    known.insert(package.clone(), id);
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page read with a filter (no place) is merged by ICCID and order: each lookup's
    /// statement is compiled once a page, not once an eSIM (it was, 51 918 times in one `check
    /// attention` at 100 000 eSIMs, a third of its time).
    #[test]
    fn a_filtered_page_compiles_its_lookup_once() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = Store::open(&dir.path().join("index.sqlite3"), "acct").unwrap();
        let esims: Vec<esimdash_domain::model::Esim> = (0..100)
            .map(|i| {
                serde_json::from_value(serde_json::json!({"status": "IN_USE", "orderNo": format!("B{i}"),
                    "rawOrderJson": {"iccid": format!("8900{i:04}"), "smdpStatus": "ENABLED"}}))
                .unwrap()
            })
            .collect();
        let place = super::super::PagePlace {
            page: 1,
            size: 100,
            total: 100,
        };
        store.merge(&Seen::page(&esims, place, 1)).unwrap();
        for read_at in 2..5 {
            let merged = store.merge(&Seen::records(&esims, read_at)).unwrap();
            assert_eq!(merged.known, 100);
        }
        let lookup = store.conn.prepare_cached(BY_ICCID_AND_ORDER).unwrap();
        let compiled_again = lookup.get_status(rusqlite::StatementStatus::RePrepare);
        assert!(compiled_again <= 3, "compiled again {compiled_again} times for 3 pages");
    }
    use crate::{PagePlace, class_of};
    use proptest::prelude::*;

    fn entry(iccid: u64, status: &str) -> Entry {
        let status = Status::parse(status);
        Entry {
            iccid: format!("{iccid:019}"),
            class: class_of(&status),
            status,
            package: Package {
                name: format!("Country {} 1GB", iccid % 3),
                slug: format!("c{}-1gb", iccid % 3),
                code: String::new(),
                location: String::new(),
            },
            limits: Limits {
                used_pct: Some((iccid % 101) as u8),
                expires: None,
            },
            order: format!("B{iccid}"),
        }
    }

    /// Every row of an index, newest first, as both keep it.
    fn rows_of(inventory: &Inventory) -> Vec<(u64, String, String, String, Option<u8>, i64)> {
        (0..inventory.starts.len())
            .filter_map(|e| inventory.row(e))
            .map(|r| {
                let from_end = inventory.total - 1 - r.place;
                (
                    from_end,
                    r.iccid.to_string(),
                    r.status.to_string(),
                    r.class.key().to_string(),
                    r.limits.used_pct,
                    r.read_at,
                )
            })
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    /// A step of a random session: a page of a list of `total` eSIMs (the eSIM at place `p`
    /// counted from the oldest is `p + shift`, so that a shift is another eSIM at a place),
    /// or records of some eSIMs without a place.
    #[derive(Debug, Clone)]
    enum Step {
        Page {
            page: u64,
            size: u64,
            total: u64,
            shift: u64,
            status: &'static str,
        },
        Records {
            from_end: Vec<u64>,
            shift: u64,
            status: &'static str,
        },
    }

    fn step() -> impl Strategy<Value = Step> {
        let status = prop::sample::select(vec!["in_use", "cancel", "got_resource", "used_up"]);
        prop_oneof![
            (1u64..8, 1u64..6, 0u64..40, 0u64..2, status.clone()).prop_map(|(page, size, total, shift, status)| {
                Step::Page {
                    page,
                    size,
                    total,
                    shift,
                    status,
                }
            }),
            (prop::collection::vec(0u64..40, 0..4), 0u64..2, status).prop_map(|(from_end, shift, status)| {
                Step::Records {
                    from_end,
                    shift,
                    status,
                }
            }),
        ]
    }

    /// Page `page` of a list of `total`, a page of one eSIM (11, in use).
    fn one_in_use(page: u64, total: u64, read_at: i64) -> Seen {
        Seen {
            place: Some(PagePlace { page, size: 1, total }),
            entries: vec![entry(11, "in_use")],
            read_at,
        }
    }

    fn seen(step: &Step, read_at: i64) -> Seen {
        match step {
            Step::Page {
                page,
                size,
                total,
                shift,
                status: listed,
            } => {
                let status = listed;
                let place = PagePlace {
                    page: *page,
                    size: *size,
                    total: *total,
                };
                let first = place.first_place();
                let entries = (first..(first + size).min(*total))
                    .map(|at| entry(total - 1 - at + shift * 1000, status))
                    .collect();
                Seen {
                    place: Some(place),
                    entries,
                    read_at,
                }
            }
            Step::Records {
                from_end,
                shift,
                status,
            } => Seen {
                place: None,
                entries: from_end.iter().map(|f| entry(f + shift * 1000, status)).collect(),
                read_at,
            },
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// The database and the in-memory index follow one rule: after any reads, in any
        /// order, they hold the same eSIMs at the same places, and count the same changes.
        #[test]
        fn same_rows_as_the_inventory(steps in prop::collection::vec(step(), 1..25)) {
            let dir = tempfile::tempdir().unwrap();
            let path = path_in(dir.path(), "acme");
            let mut store = Store::open(&path, "acme").unwrap();
            let mut inventory = Inventory::default();
            for (k, step) in steps.iter().enumerate() {
                let seen = seen(step, k as i64);
                let mine = inventory.merge(&seen);
                let theirs = store.merge(&seen).unwrap();
                prop_assert_eq!((mine.known, mine.added, mine.refreshed), (theirs.known, theirs.added, theirs.refreshed));
                let loaded = store.load("acme").map(|l| l.inventory).unwrap_or_default();
                prop_assert_eq!(rows_of(&loaded), rows_of(&inventory));
                prop_assert_eq!(store.held().unwrap(), inventory.len() as u64);
                for e in 0..inventory.starts.len() {
                    if let Some(row) = inventory.row(e) {
                        prop_assert_eq!(store.whereabouts(row.iccid).unwrap(), inventory.whereabouts(row.iccid));
                    }
                }
                if let Some(total) = inventory.total() {
                    prop_assert_eq!(store.total().unwrap(), Some(total));
                }
                prop_assert_eq!(store.pages_held_whole(5).unwrap(), inventory.pages_held_whole(5));
                // The gap found by halving is the first place from there that no entry holds.
                let total = inventory.total().unwrap_or(0);
                let held: std::collections::BTreeSet<u64> =
                    (0..inventory.starts.len()).filter_map(|e| inventory.row(e)).map(|r| r.place).collect();
                for from in 0..=total {
                    let naive = (from..total).find(|p| !held.contains(p));
                    prop_assert_eq!(inventory.first_gap_from(from), naive, "from {}", from);
                }
            }
        }
    }

    #[test]
    fn private_reopened_by_another_session_and_another_accounts_file_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_in(&dir.path().join("esimdash"), "abc");
        let page = one_in_use(2, 7, 1_700_000_000);
        Store::open(&path, "abc").unwrap().merge(&page).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600);
            assert_eq!(mode(path.parent().unwrap()), 0o700);
        }
        let other = Store::open(&path, "abc").unwrap();
        assert_eq!(
            other.whereabouts(&format!("{:019}", 11)).unwrap(),
            Some(Whereabouts { from_end: 5, total: 7 })
        );
        let loaded = load(&path, "abc").unwrap();
        assert_eq!(loaded.inventory.len(), 1);
        // The same file opened for another account is emptied, never read as theirs.
        let foreign = Store::open(&path, "xyz").unwrap();
        assert_eq!(foreign.held().unwrap(), 0);
        assert!(matches!(
            load(&dir.path().join("none.sqlite3"), "abc"),
            Err(LoadError::Missing)
        ));
    }

    #[test]
    fn a_damaged_file_is_set_aside_and_made_anew_and_a_newer_versions_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_in(dir.path(), "abc");
        std::fs::write(
            &path,
            "junk, and long enough to be read as a database's first page: ".repeat(40),
        )
        .unwrap();
        let mut store = Store::open(&path, "abc").unwrap();
        let said = store.take_set_aside().expect("said");
        assert!(said.contains("moved to") && said.contains(".damaged"), "{said}");
        assert!(path.with_extension("sqlite3.damaged").exists());
        let page = one_in_use(1, 1, 0);
        assert_eq!(store.merge(&page).unwrap().added, 1, "the new database works");
        drop(store);

        let newer = path_in(dir.path(), "new");
        let conn = Connection::open(&newer).unwrap();
        conn.pragma_update(None, "user_version", VERSION + 1).unwrap();
        drop(conn);
        let Err(e) = Store::open(&newer, "new") else {
            panic!("opened a newer version's")
        };
        assert!(e.to_string().contains("newer esimdash"), "{e}");
        let conn = Connection::open(&newer).unwrap();
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(version, VERSION + 1, "left as it was");
    }

    #[cfg(unix)]
    #[test]
    fn a_link_planted_at_the_index_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let path = path_in(&dir.path().join("esimdash"), "abc");
        esimdash_files::create_dir(path.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        assert!(Store::open(&path, "abc").is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    }

    #[test]
    fn a_json_index_of_an_earlier_version_is_taken_in_once_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        let json = super::super::legacy::path_in(dir.path(), "abc");
        std::fs::write(
            &json,
            r#"{"version":5,"account":"abc","saved_at":1700000000,"total":7,"statuses":["in_use"],
            "packages":[{"name":"France 1GB","slug":"fr-1gb","code":"ESD-FR","location":"FR"}],
            "entries":[["8944100000000000011",0,"in_use",0,85,1800000000,"B100000010001",5,1700000000]]}"#,
        )
        .unwrap();
        let loaded = load(&path_in(dir.path(), "abc"), "abc").unwrap();
        assert_eq!(loaded.inventory.find("8944100000000000011"), Some(0));
        assert!(!json.exists(), "taken in, then removed");
    }
}
