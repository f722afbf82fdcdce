//! The requests an assistant proposed through a seat, kept for the team: any seat reads them,
//! another decides them. The store keeps each as the client reads it (JSON text); a decision
//! is written over the text it was taken on, so that of two deciding at once (on any replica)
//! one writes and the other reads the first's decision.

use super::sql::{Value, exclusive};
use super::{Store, StoreError};

/// A request as kept: the seat that proposed it and the request's JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeptRequest {
    pub seat: String,
    pub body: String,
}

/// When a request is kept and until when it waits.
#[derive(Debug, Clone, Copy)]
pub struct Times {
    pub now: i64,
    pub expires_at: i64,
}

impl Store {
    /// Keeps a new request, unless `most` wait for a decision already (their count, then).
    pub async fn keep_request(
        &self,
        id: &str,
        kept: KeptRequest,
        times: Times,
        most: usize,
    ) -> Result<Result<(), usize>, StoreError> {
        let id = id.to_string();
        self.run(move |db| {
            exclusive(db, |db| {
                let waiting = db
                    .query(
                        "SELECT COUNT(*) FROM requests WHERE decided = 0 AND expires_at > $1",
                        &[Value::int(times.now)],
                    )?
                    .first()
                    .and_then(|r| r.first().and_then(Value::as_int))
                    .unwrap_or(0);
                let waiting = usize::try_from(waiting).unwrap_or(usize::MAX);
                if waiting >= most {
                    return Ok(Err(waiting));
                }
                db.execute(
                    "INSERT INTO requests (id, seat, proposed_at, expires_at, decided, body) VALUES ($1, $2, $3, $4, $5, $6)",
                    &[
                        Value::text(id),
                        Value::text(kept.seat),
                        Value::int(times.now),
                        Value::int(times.expires_at),
                        Value::int(0),
                        Value::text(kept.body),
                    ],
                )?;
                Ok(Ok(()))
            })
        })
        .await
    }

    /// The request `id`, if kept.
    pub async fn request(&self, id: &str) -> Result<Option<KeptRequest>, StoreError> {
        let id = id.to_string();
        self.run(move |db| {
            Ok(db
                .query("SELECT seat, body FROM requests WHERE id = $1", &[Value::text(id)])?
                .first()
                .map(|row| kept_of(row)))
        })
        .await
    }

    /// The newest `most` requests, newest first.
    pub async fn requests(&self, most: usize) -> Result<Vec<KeptRequest>, StoreError> {
        let most = i64::try_from(most).unwrap_or(i64::MAX);
        self.run(move |db| {
            Ok(db
                .query(
                    "SELECT seat, body FROM requests ORDER BY proposed_at DESC, id LIMIT $1",
                    &[Value::int(most)],
                )?
                .iter()
                .map(|row| kept_of(row))
                .collect())
        })
        .await
    }

    /// Writes a decision (`after`) over the request as it was read (`before`); `false` when it
    /// had changed meanwhile (another seat decided it first).
    pub async fn decide_request(&self, id: &str, before: &str, after: String) -> Result<bool, StoreError> {
        let (id, before) = (id.to_string(), before.to_string());
        self.run(move |db| {
            db.execute(
                "UPDATE requests SET body = $1, decided = 1 WHERE id = $2 AND body = $3",
                &[Value::text(after), Value::text(id), Value::text(before)],
            )
            .map(|n| n == 1)
        })
        .await
    }
}

fn kept_of(row: &[Value]) -> KeptRequest {
    let text = |i: usize| row.get(i).and_then(Value::as_text).unwrap_or_default().to_string();
    KeptRequest {
        seat: text(0),
        body: text(1),
    }
}
