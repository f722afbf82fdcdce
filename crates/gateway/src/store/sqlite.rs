//! The store in one SQLite file (WAL): no set-up, and replicas on one machine share it, the
//! file's write lock keeping their payments in line.

use super::StoreError;
use super::sql::{Row, Sql, Value};
use rusqlite::types::ValueRef;
use std::path::Path;
use std::time::Duration;

pub struct Sqlite {
    conn: rusqlite::Connection,
    path: String,
}

impl Sqlite {
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        // Agents' hashes and the journal are the team's own: the file (and the WAL files
        // SQLite makes with its mode) 0600, a folder made for it 0700.
        let io = |e: std::io::Error| StoreError::Open(format!("{}: {e}", path.display()));
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
            esimdash_files::create_dir(dir).map_err(io)?;
        }
        esimdash_files::create_or_keep(path).map_err(io)?;
        let fail = |e: rusqlite::Error| StoreError::Open(format!("{}: {e}", path.display()));
        let conn = rusqlite::Connection::open(path).map_err(fail)?;
        // Another replica's payment holds the write lock for a few milliseconds: wait for it.
        conn.busy_timeout(Duration::from_secs(10)).map_err(fail)?;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(fail)?;
        conn.pragma_update(None, "synchronous", "FULL").map_err(fail)?;
        Ok(Self {
            conn,
            path: path.display().to_string(),
        })
    }

    fn statement(&self, sql: &str) -> Result<rusqlite::CachedStatement<'_>, StoreError> {
        self.conn.prepare_cached(sql).map_err(error)
    }
}

fn error(e: rusqlite::Error) -> StoreError {
    StoreError::Database(e.to_string())
}

fn bind(params: &[Value]) -> Vec<rusqlite::types::Value> {
    params
        .iter()
        .map(|p| match p {
            Value::Int(Some(n)) => rusqlite::types::Value::Integer(*n),
            Value::Text(Some(t)) => rusqlite::types::Value::Text(t.clone()),
            Value::Int(None) | Value::Text(None) => rusqlite::types::Value::Null,
        })
        .collect()
}

impl Sql for Sqlite {
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StoreError> {
        let mut statement = self.statement(sql)?;
        let columns = statement.column_count();
        let mut rows = statement
            .query(rusqlite::params_from_iter(bind(params)))
            .map_err(error)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(error)? {
            let mut values = Vec::with_capacity(columns);
            for i in 0..columns {
                values.push(match row.get_ref(i).map_err(error)? {
                    ValueRef::Integer(n) => Value::int(n),
                    ValueRef::Text(t) => Value::text(String::from_utf8_lossy(t)),
                    ValueRef::Null => Value::Text(None),
                    other => {
                        return Err(StoreError::Database(format!(
                            "unexpected column type {:?}",
                            other.data_type()
                        )));
                    }
                });
            }
            out.push(values);
        }
        Ok(out)
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, StoreError> {
        if params.is_empty() && sql.contains(';') {
            self.conn.execute_batch(sql).map_err(error)?;
            return Ok(0);
        }
        let mut statement = self.statement(sql)?;
        let n = statement
            .execute(rusqlite::params_from_iter(bind(params)))
            .map_err(error)?;
        Ok(n as u64)
    }

    fn begin_exclusive(&mut self) -> Result<(), StoreError> {
        // IMMEDIATE takes the file's write lock now, not at the first write: two replicas'
        // reservations cannot both read the day's spend before either writes.
        self.conn.execute_batch("BEGIN IMMEDIATE").map_err(error)
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        self.conn.execute_batch("COMMIT").map_err(error)
    }

    fn rollback(&mut self) {
        let _ = self.conn.execute_batch("ROLLBACK");
    }

    fn describe(&self) -> String {
        format!("SQLite file {}", self.path)
    }
}
