//! What the store asks of a database: statements with `$1`-style parameters (written in
//! ascending order, which SQLite and Postgres both read), and a transaction that excludes every
//! other writer of the same store, in this process or another replica.

use super::StoreError;

/// A parameter or a column. Every column the store keeps is a whole number or text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    Int(Option<i64>),
    Text(Option<String>),
}

impl Value {
    pub fn text(s: impl Into<String>) -> Self {
        Value::Text(Some(s.into()))
    }

    pub fn int(n: i64) -> Self {
        Value::Int(Some(n))
    }

    pub fn as_text(&self) -> Option<&str> {
        match self {
            Value::Text(t) => t.as_deref(),
            Value::Int(_) => None,
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(n) => *n,
            Value::Text(t) => t.as_deref().and_then(|t| t.parse().ok()),
        }
    }
}

pub type Row = Vec<Value>;

pub trait Sql: Send {
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StoreError>;
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, StoreError>;
    /// Starts a transaction no other writer of the store runs beside.
    fn begin_exclusive(&mut self) -> Result<(), StoreError>;
    fn commit(&mut self) -> Result<(), StoreError>;
    fn rollback(&mut self);
    /// What the store is, for messages: never a password.
    fn describe(&self) -> String;
}

/// Runs `work` in an exclusive transaction: committed when it returns `Ok`, rolled back else.
pub fn exclusive<T>(
    db: &mut dyn Sql,
    work: impl FnOnce(&mut dyn Sql) -> Result<T, StoreError>,
) -> Result<T, StoreError> {
    if let Err(e) = db.begin_exclusive() {
        // A begin that failed half-way (the lock's wait cancelled) leaves an aborted
        // transaction on the connection: ended here, or every later statement fails too.
        db.rollback();
        return Err(e);
    }
    match work(db) {
        Ok(value) => {
            db.commit()?;
            Ok(value)
        }
        Err(e) => {
            db.rollback();
            Err(e)
        }
    }
}
