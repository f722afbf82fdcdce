//! The store in Postgres, for several gateway replicas behind a load balancer: the same
//! schema, and a transaction-scoped advisory lock keeping their payments in line.

use super::StoreError;
use super::sql::{Row, Sql, Value};
use postgres::types::{ToSql, Type};

/// The advisory lock every writing transaction takes: one number, the gateway's own.
const WRITERS: i64 = 0x6573_696d_6761_7465; // "esimgate"

pub struct Postgres {
    client: Option<postgres::Client>,
    /// To connect again when the server closed the connection (a restart, a failover).
    url: String,
    shown: String,
    /// Within a transaction, a lost connection is an error, never a new connection: the
    /// writers' lock and what was read under it went with the old one.
    in_transaction: bool,
}

impl Drop for Postgres {
    /// The blocking client closes its connection by blocking on its own runtime, which a
    /// runtime's thread may not do: the store's last owner is often a task, so it closes on a
    /// thread of its own.
    fn drop(&mut self) {
        if let Some(client) = self.client.take() {
            let _ = std::thread::Builder::new()
                .name("postgres-close".into())
                .spawn(move || drop(client));
        }
    }
}

impl Postgres {
    pub fn open(url: &str) -> Result<Self, StoreError> {
        let shown = super::shown(url);
        let client =
            postgres::Client::connect(url, postgres::NoTls).map_err(|e| StoreError::Open(format!("{shown}: {e}")))?;
        Ok(Self {
            client: Some(client),
            url: url.to_string(),
            shown,
            in_transaction: false,
        })
    }
}

impl Postgres {
    /// The connection, made again if the server closed it.
    fn client(&mut self) -> Result<&mut postgres::Client, StoreError> {
        if !self.in_transaction && self.client.as_ref().is_none_or(postgres::Client::is_closed) {
            let client = postgres::Client::connect(&self.url, postgres::NoTls)
                .map_err(|e| StoreError::Database(format!("{}: {e}", self.shown)))?;
            if let Some(old) = self.client.replace(client) {
                let _ = std::thread::Builder::new().spawn(move || drop(old));
            }
        }
        self.client
            .as_mut()
            .ok_or_else(|| StoreError::Database("the connection is closed".to_string()))
    }
}

fn error(e: postgres::Error) -> StoreError {
    StoreError::Database(e.to_string())
}

fn bind(params: &[Value]) -> Vec<Box<dyn ToSql + Sync>> {
    params
        .iter()
        .map(|p| -> Box<dyn ToSql + Sync> {
            match p {
                Value::Int(n) => Box::new(*n),
                Value::Text(t) => Box::new(t.clone()),
            }
        })
        .collect()
}

impl Sql for Postgres {
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, StoreError> {
        let bound = bind(params);
        let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(|b| b.as_ref()).collect();
        let rows = self.client()?.query(sql, &refs).map_err(error)?;
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| match *row.columns()[i].type_() {
                        Type::INT8 => row.try_get::<_, Option<i64>>(i).map(Value::Int),
                        Type::INT4 => row.try_get::<_, Option<i32>>(i).map(|n| Value::Int(n.map(i64::from))),
                        _ => row.try_get::<_, Option<String>>(i).map(Value::Text),
                    })
                    .collect::<Result<Row, _>>()
                    .map_err(error)
            })
            .collect()
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, StoreError> {
        if params.is_empty() && sql.contains(';') {
            return self.client()?.batch_execute(sql).map(|()| 0).map_err(error);
        }
        let bound = bind(params);
        let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(|b| b.as_ref()).collect();
        self.client()?.execute(sql, &refs).map_err(error)
    }

    fn begin_exclusive(&mut self) -> Result<(), StoreError> {
        self.client()?
            .batch_execute(&format!("BEGIN; SELECT pg_advisory_xact_lock({WRITERS})"))
            .map_err(error)?;
        self.in_transaction = true;
        Ok(())
    }

    fn commit(&mut self) -> Result<(), StoreError> {
        let done = self.client()?.batch_execute("COMMIT").map_err(error);
        self.in_transaction = false;
        done
    }

    fn rollback(&mut self) {
        if let Ok(client) = self.client() {
            let _ = client.batch_execute("ROLLBACK");
        }
        self.in_transaction = false;
    }

    fn describe(&self) -> String {
        format!("Postgres {}", self.shown)
    }
}
