//! What a watch remembers between polls, in a SQLite database of its own in the state
//! directory (`watch/<account>.sqlite3`, 0600): a row per eSIM seen, and the rest of `Seen`
//! (the balance's side of the threshold, the newest orders, where the window of pages is, the
//! changes `--exec` has yet to take) as one small row. A poll writes, in one transaction, what
//! it changed: the eSIMs it found new or changed, and that row. Nothing is copied whole, in
//! memory or on disk, however many eSIMs the account has; a kill before the commit leaves the
//! memory of the poll before, so the changes are told again, never lost.

use super::{EsimSeen, Seen};
use rusqlite::{Connection, OptionalExtension, params};
use std::cell::RefCell;
use std::path::{Path, PathBuf};

const VERSION: i64 = 1;

const SCHEMA: &str = "
    CREATE TABLE IF NOT EXISTS rest (id INTEGER PRIMARY KEY CHECK (id = 0), seen TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS esims (
        key TEXT PRIMARY KEY,
        status TEXT NOT NULL, smdp TEXT NOT NULL, attention INTEGER NOT NULL, state TEXT NOT NULL
    ) WITHOUT ROWID;
";

/// Why the memory could not be used.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    #[error("{path} is not a watch's memory ({why}); move it away to start afresh")]
    Unreadable { path: PathBuf, why: String },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

pub struct Memory {
    conn: Connection,
    path: PathBuf,
    /// The first failure to read a remembered eSIM during a poll (the poll is then not kept).
    failed: RefCell<Option<String>>,
}

impl Memory {
    /// Where the memory of `account` is kept under `dir`.
    pub fn path_in(dir: &Path, account: &str) -> PathBuf {
        dir.join("watch").join(format!("{account}.sqlite3"))
    }

    /// Opens the memory at `path` (made when missing) and what it holds but the eSIMs. A memory
    /// an earlier version kept whole as JSON beside it (`<account>.json`) is taken in once and
    /// removed.
    pub fn open(path: &Path) -> Result<(Self, Seen), MemoryError> {
        let unreadable = |why: String| MemoryError::Unreadable {
            path: path.to_path_buf(),
            why,
        };
        let fresh = !path.exists();
        drop(esimdash_files::open_or_create(path).map_err(|e| unreadable(e.to_string()))?);
        let conn = Connection::open(path).map_err(|e| unreadable(e.to_string()))?;
        let mut memory = Self {
            conn,
            path: path.to_path_buf(),
            failed: RefCell::new(None),
        };
        memory.ready().map_err(|e| unreadable(e.to_string()))?;
        let json = path.with_extension("json");
        if fresh && json.exists() {
            let seen = super::memory::legacy(&json)?;
            memory.save(&seen).map_err(|e| unreadable(e.to_string()))?;
            let _ = std::fs::remove_file(&json);
        }
        let rest: Option<String> = memory
            .conn
            .query_row("SELECT seen FROM rest WHERE id = 0", [], |r| r.get(0))
            .optional()
            .map_err(|e| unreadable(e.to_string()))?;
        let seen = match rest {
            Some(text) => serde_json::from_str(&text).map_err(|e| unreadable(e.to_string()))?,
            None => Seen::default(),
        };
        Ok((memory, seen))
    }

    fn ready(&mut self) -> rusqlite::Result<()> {
        self.conn.busy_timeout(std::time::Duration::from_secs(10))?;
        self.conn.pragma_update(None, "journal_mode", "WAL")?;
        let version: i64 = self.conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version != 0 && version != VERSION {
            return Err(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_READONLY),
                Some(format!("a memory of another esimdash version (schema {version})")),
            ));
        }
        if version == 0 {
            self.conn.execute_batch(SCHEMA)?;
            self.conn.pragma_update(None, "user_version", VERSION)?;
        }
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this memory is `account`'s: a memory that names no account yet (new, or of an
    /// earlier version) is made its own; one that names another is not (the caller sets it
    /// aside rather than take another account's orders for seen).
    pub fn claim(&self, account: &str) -> rusqlite::Result<bool> {
        self.conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS account (id INTEGER PRIMARY KEY CHECK (id = 0), name TEXT NOT NULL)",
        )?;
        let named: Option<String> = self
            .conn
            .query_row("SELECT name FROM account WHERE id = 0", [], |r| r.get(0))
            .optional()?;
        match named {
            Some(name) => Ok(name == account),
            None => {
                self.conn
                    .execute("INSERT INTO account (id, name) VALUES (0, ?1)", [account])?;
                Ok(true)
            }
        }
    }

    /// What the memory has of one eSIM (by ICCID and order).
    pub fn esim(&self, key: &str) -> Option<EsimSeen> {
        let found = self
            .conn
            .prepare_cached("SELECT status, smdp, attention, state FROM esims WHERE key = ?1")
            .and_then(|mut stmt| {
                stmt.query_row([key], |r| {
                    Ok(EsimSeen {
                        status: r.get(0)?,
                        smdp: r.get(1)?,
                        attention: r.get(2)?,
                        state: r.get(3)?,
                    })
                })
                .optional()
            });
        found.unwrap_or_else(|e| {
            self.failed.borrow_mut().get_or_insert_with(|| e.to_string());
            None
        })
    }

    /// Why a read of the memory failed since the last call, if one did: a poll that could not
    /// compare what it read is not kept, and says so.
    pub fn take_failure(&self) -> Option<MemoryError> {
        self.failed.borrow_mut().take().map(|why| MemoryError::Unreadable {
            path: self.path.clone(),
            why,
        })
    }

    /// Keeps what a poll changed: its eSIMs (`Seen::esims`, this poll's) and the rest.
    pub fn save(&mut self, seen: &Seen) -> rusqlite::Result<()> {
        let rest = serde_json::to_string(seen).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
        let tx = self.conn.transaction()?;
        {
            let mut stmt = tx.prepare_cached(
                "INSERT INTO esims (key, status, smdp, attention, state) VALUES (?1, ?2, ?3, ?4, ?5)
                 ON CONFLICT (key) DO UPDATE SET status = excluded.status, smdp = excluded.smdp,
                 attention = excluded.attention, state = excluded.state",
            )?;
            for (key, e) in &seen.esims {
                stmt.execute(params![key, e.status, e.smdp, e.attention, e.state])?;
            }
            tx.execute(
                "INSERT INTO rest (id, seen) VALUES (0, ?1) ON CONFLICT (id) DO UPDATE SET seen = excluded.seen",
                [rest],
            )?;
        }
        tx.commit()
    }

    /// How many eSIMs the memory holds.
    pub fn esims_known(&self) -> rusqlite::Result<u64> {
        self.conn
            .query_row("SELECT COUNT(*) FROM esims", [], |r| r.get::<_, i64>(0))
            .map(|n| n.max(0) as u64)
    }
}

/// A memory as an earlier version kept it: one JSON document, every eSIM in it.
fn legacy(path: &Path) -> Result<Seen, MemoryError> {
    let bytes = esimdash_files::read_regular(path)?;
    serde_json::from_slice(&bytes).map_err(|e| MemoryError::Unreadable {
        path: path.to_path_buf(),
        why: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn esim(status: &str) -> EsimSeen {
        EsimSeen {
            status: status.into(),
            smdp: "ENABLED".into(),
            attention: false,
            state: "in_use".into(),
        }
    }

    #[test]
    fn a_poll_keeps_what_it_changed_and_the_rest_and_a_json_memory_is_taken_in_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = Memory::path_in(dir.path(), "acme");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            path.with_extension("json"),
            r#"{"balanceBelow":false,"orders":["B1"],"esims":{"89@B1":{"status":"in_use","smdp":"ENABLED","attention":false,"state":"in_use"}},"nextPage":3}"#,
        )
        .unwrap();
        let (mut memory, mut seen) = Memory::open(&path).unwrap();
        assert!(!path.with_extension("json").exists(), "taken in, then removed");
        assert_eq!((seen.orders.clone(), seen.next_page), (vec!["B1".to_string()], 3));
        assert!(seen.esims.is_empty(), "the eSIMs stay in the database");
        assert_eq!(memory.esim("89@B1"), Some(esim("in_use")));

        seen.esims.insert("89@B1".into(), esim("used_up"));
        seen.esims.insert("90@B2".into(), esim("got_resource"));
        seen.next_page = 4;
        memory.save(&seen).unwrap();
        drop(memory);
        let (memory, seen) = Memory::open(&path).unwrap();
        assert_eq!(seen.next_page, 4);
        assert_eq!(memory.esim("89@B1"), Some(esim("used_up")));
        assert_eq!(memory.esims_known().unwrap(), 2);
        assert!(memory.take_failure().is_none());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
        }
    }

    #[test]
    fn a_file_that_is_no_memory_is_refused_with_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("acme.sqlite3");
        std::fs::write(&path, "not a database, and long enough to be read as one's header....").unwrap();
        let Err(e) = Memory::open(&path) else { panic!("opened") };
        assert!(e.to_string().contains("move it away"), "{e}");
    }

    #[test]
    fn a_memory_is_one_accounts_and_another_is_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let path = Memory::path_in(dir.path(), "acme");
        let (memory, _) = Memory::open(&path).unwrap();
        assert!(memory.claim("acme").unwrap(), "a new memory is made the account's");
        drop(memory);
        let (memory, _) = Memory::open(&path).unwrap();
        assert!(memory.claim("acme").unwrap());
        assert!(
            !memory.claim("globex").unwrap(),
            "another account's memory is not taken"
        );
    }
}
