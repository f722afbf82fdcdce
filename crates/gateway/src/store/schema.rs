//! The store's tables, one list of steps for SQLite and Postgres alike: a store is brought to
//! the newest step when the gateway or an `agent` command opens it, under the writers' lock,
//! so replicas starting together run each step once.

use super::StoreError;
use super::sql::{Sql, Value, exclusive};

/// Each step, in order; a store records how many it has taken. Never edit a step that has
/// shipped: add one.
const STEPS: &[&str] = &[
    // 1: agents and the journal of payments.
    "CREATE TABLE agents (
        name TEXT PRIMARY KEY,
        access_code TEXT NOT NULL UNIQUE,
        secret_hash TEXT NOT NULL,
        role TEXT NOT NULL,
        daily_cap TEXT,
        created_at BIGINT NOT NULL,
        revoked_at BIGINT
    );
    CREATE TABLE payments (
        id TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        day TEXT NOT NULL,
        kind TEXT NOT NULL,
        iccid TEXT,
        slug TEXT NOT NULL,
        qty BIGINT NOT NULL,
        body TEXT NOT NULL,
        agent_key TEXT,
        upstream_key TEXT NOT NULL,
        reserved TEXT NOT NULL,
        charged TEXT,
        state TEXT NOT NULL,
        asked_at BIGINT NOT NULL,
        sent_at BIGINT,
        settled_at BIGINT,
        status BIGINT,
        answer TEXT,
        order_no TEXT,
        note TEXT,
        key_echoed BIGINT
    );
    CREATE INDEX payments_by_day ON payments (day, agent);
    CREATE INDEX payments_by_esim ON payments (iccid, slug, asked_at);
    CREATE INDEX payments_by_state ON payments (state);
    CREATE UNIQUE INDEX payments_by_agent_key ON payments (agent, agent_key);",
    // 2: a charge past what was held: 'open' until the order list confirms the journal's figure
    // ('agreed'); the seat pays nothing more meanwhile.
    "ALTER TABLE payments ADD COLUMN drift TEXT",
    // 3: what each agent's payments hold each day, and the team's (agent ''), kept in the
    // payment's own transaction so that a cap costs the same at 1 or 20 000 payments a day.
    // A day no payment touched since (an older store's) is summed from the journal once.
    "CREATE TABLE day_totals (
        day TEXT NOT NULL,
        agent TEXT NOT NULL,
        held TEXT NOT NULL,
        PRIMARY KEY (day, agent)
    )",
    // 4: payments an assistant proposed and another seat decides: the request as the client
    // reads it (`body`, JSON), the seat that proposed it, and whether it was decided (an
    // approval or a refusal is written over the body it read, and only over it).
    "CREATE TABLE requests (
        id TEXT PRIMARY KEY,
        seat TEXT NOT NULL,
        proposed_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        decided BIGINT NOT NULL,
        body TEXT NOT NULL
    );
    CREATE INDEX requests_by_time ON requests (proposed_at)",
];

pub fn migrate(db: &mut dyn Sql) -> Result<(), StoreError> {
    exclusive(db, |db| {
        db.execute(
            "CREATE TABLE IF NOT EXISTS gateway_schema (version BIGINT NOT NULL)",
            &[],
        )?;
        let taken = db
            .query("SELECT version FROM gateway_schema", &[])?
            .first()
            .and_then(|row| row.first().and_then(Value::as_int));
        let taken = match taken {
            Some(n) => usize::try_from(n).unwrap_or(usize::MAX),
            None => {
                db.execute("INSERT INTO gateway_schema (version) VALUES (0)", &[])?;
                0
            }
        };
        if taken > STEPS.len() {
            return Err(StoreError::Open(format!(
                "{} was made by a newer gateway (schema step {taken}; this one knows {}): upgrade esimdash",
                db.describe(),
                STEPS.len()
            )));
        }
        for (i, step) in STEPS.iter().enumerate().skip(taken) {
            db.execute(step, &[])?;
            db.execute("UPDATE gateway_schema SET version = $1", &[Value::int(i as i64 + 1)])?;
        }
        Ok(())
    })
}
