//! A database of ours on disk, one account's: private to the user (file 0600, directory 0700,
//! never opened through a link), in WAL where sessions read it while one writes page after page
//! (the inventory index: readers never wait for a writer; two sessions write in turn), emptied when of another schema version or account, left alone when a newer esimdash
//! made it, and set aside when damaged, so that what it keeps is read again from the API.
//! The inventory index and the orders kept for the money view are each one.

use rusqlite::{Connection, OptionalExtension};
use std::path::{Path, PathBuf};

/// Why a saved inventory was not used (it is then read again from the API).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("no saved inventory")]
    Missing,
    #[error("the saved inventory index could not be read ({0})")]
    Unreadable(String),
}

impl From<rusqlite::Error> for LoadError {
    fn from(e: rusqlite::Error) -> Self {
        LoadError::Unreadable(e.to_string())
    }
}

impl From<std::io::Error> for LoadError {
    fn from(e: std::io::Error) -> Self {
        LoadError::Unreadable(e.to_string())
    }
}

/// How much of a WAL database is read through a mapping of the file: the index of a million
/// eSIMs whole.
const MAPPED: i64 = 256 * 1024 * 1024;

/// How long a write waits for another session's write to end.
const BUSY_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// What a database holds: its schema's version (`PRAGMA user_version`), its tables (a `meta`
/// table among them, with `key` and `value`), the statement that drops them, its name as the
/// user is told of it, and whether it is kept in WAL.
pub struct Schema {
    pub version: i64,
    pub tables: &'static str,
    pub drop: &'static str,
    pub name: &'static str,
    /// In WAL: for a file read while another session writes to it page after page. Otherwise
    /// a rollback journal, for a small file written now and then: a reader's open and close
    /// then cost a fifth of theirs in WAL (no shared-memory file to set up each time).
    pub wal: bool,
}

/// A database opened: whether it was made just now, and what was said of a damaged file set
/// aside to make it.
pub struct Opened {
    pub conn: Connection,
    pub fresh: bool,
    pub set_aside: Option<String>,
}

/// Why a database did not open: a damaged one is set aside and made anew; anything else (a
/// directory or a link in its place, a newer esimdash's) is left alone and said.
enum Opening {
    Damaged(String),
    Other(LoadError),
}

impl From<rusqlite::Error> for Opening {
    fn from(e: rusqlite::Error) -> Self {
        use rusqlite::ffi::ErrorCode;
        match e.sqlite_error_code() {
            Some(ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt) => Opening::Damaged(e.to_string()),
            _ => Opening::Other(e.into()),
        }
    }
}

impl From<std::io::Error> for Opening {
    fn from(e: std::io::Error) -> Self {
        Opening::Other(e.into())
    }
}

impl From<Opening> for LoadError {
    fn from(e: Opening) -> Self {
        match e {
            Opening::Damaged(why) => LoadError::Unreadable(why),
            Opening::Other(e) => e,
        }
    }
}

/// `account`'s database of `schema` at `path`, opened to read only: when it is there, of this
/// version and this account (`None` otherwise, and the caller opens it with `open`). Nothing is
/// made or changed, and closing it writes nothing: a command that only reads what is kept (a
/// `balance` whose orders are young enough) pays for neither.
pub fn read_only(path: &Path, account: &str, schema: &Schema) -> Option<Connection> {
    use rusqlite::OpenFlags;
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NOFOLLOW | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags).ok()?;
    conn.busy_timeout(BUSY_WAIT).ok()?;
    let (version, owner): (i64, Option<String>) = conn
        .query_row(
            "SELECT (SELECT user_version FROM pragma_user_version), (SELECT value FROM meta WHERE key = 'account')",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .ok()?;
    (version == schema.version && owner.as_deref() == Some(account)).then_some(conn)
}

/// Opens (or makes) `account`'s database of `schema` at `path`.
pub fn open(path: &Path, account: &str, schema: &Schema) -> Result<Opened, LoadError> {
    match open_as_is(path, account, schema) {
        Err(Opening::Damaged(why)) => {
            // Not a database (or a damaged one): kept aside for whoever wants to look, and
            // made anew, so that it works again from this session on.
            let aside = path.with_extension("sqlite3.damaged");
            std::fs::rename(path, &aside)?;
            for suffix in ["-wal", "-shm"] {
                let mut side = path.as_os_str().to_owned();
                side.push(suffix);
                let _ = std::fs::remove_file(PathBuf::from(side));
            }
            let mut opened = open_as_is(path, account, schema).map_err(LoadError::from)?;
            opened.set_aside = Some(format!(
                "the saved {} could not be read ({why}); it was moved to {} and is read again from the API",
                schema.name,
                aside.display()
            ));
            Ok(opened)
        }
        other => other.map_err(LoadError::from),
    }
}

fn open_as_is(path: &Path, account: &str, schema: &Schema) -> Result<Opened, Opening> {
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    esimdash_files::create_dir(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    // Made here first, private and never through a link; SQLite's own files beside it
    // (-wal, -shm) take its mode.
    let fresh = !path.exists();
    drop(esimdash_files::open_or_create(path)?);
    let mut conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_WAIT)?;
    if schema.wal {
        conn.pragma_update(None, "journal_mode", "WAL")?;
        // In WAL a commit reaches the file at once; only a power cut can lose the last pages.
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        // Read through a mapping of the file, not a copy of each page: a pass over every row
        // (the picture's) spent a tenth of its time copying pages.
        conn.pragma_update(None, "mmap_size", MAPPED)?;
    } else {
        // A file an earlier build kept in WAL leaves it when no other session has it open (else
        // the next open does); a commit is then synced whole.
        let _ = conn.pragma_update(None, "journal_mode", "DELETE");
        conn.pragma_update(None, "synchronous", "FULL")?;
    }
    ready(&mut conn, account, schema)?;
    Ok(Opened {
        conn,
        fresh,
        set_aside: None,
    })
}

/// Makes the schema, or empties a database of another version or account.
fn ready(conn: &mut Connection, account: &str, schema: &Schema) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let version: i64 = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if version > schema.version {
        // A newer esimdash's: left as it is for it (an older one never empties a newer's).
        return Err(rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_READONLY),
            Some(format!(
                "made by a newer esimdash (schema {version}); this one keeps no {}",
                schema.name
            )),
        ));
    }
    let owner: Option<String> = if version == schema.version {
        tx.query_row("SELECT value FROM meta WHERE key = 'account'", [], |r| r.get(0))
            .optional()?
    } else {
        None
    };
    if version != schema.version || owner.as_deref() != Some(account) {
        tx.execute_batch(schema.drop)?;
        tx.execute_batch(schema.tables)?;
        tx.execute("INSERT INTO meta (key, value) VALUES ('account', ?1)", [account])?;
        tx.pragma_update(None, "user_version", schema.version)?;
    }
    tx.commit()
}
