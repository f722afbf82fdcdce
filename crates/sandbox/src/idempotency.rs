//! `Idempotency-Key` on the two routes that move money, exactly as docs/api-contract.md has it: per
//! reseller and key, the request and its answer are kept for 24 hours; the same request again
//! gets the stored answer (marked replayed) and debits nothing, another request under the same
//! key is 422, and one still being handled is 409. Every answer echoes the key.

use super::Shared;
use super::auth::Caller;
use super::http::{Failure, MAX_BODY_BYTES};
use axum::Extension;
use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const KEY_HEADER: &str = "idempotency-key";
pub const REPLAYED_HEADER: &str = "idempotent-replayed";
/// How long a key and its answer are kept (docs/api-contract.md).
const KEEP: Duration = Duration::from_secs(24 * 60 * 60);
/// Longest key accepted (docs/api-contract.md: 1–255 printable ASCII characters).
const MAX_KEY_LEN: usize = 255;

/// What a request is, for telling "the same request again" from "another under the same key":
/// its route and its body as JSON (so spacing and key order do not matter), or its bytes.
#[derive(Debug, Clone, PartialEq)]
enum Fingerprint {
    Json(String, serde_json::Value),
    Raw(String, Bytes),
}

impl Fingerprint {
    fn of(path: &str, body: &Bytes) -> Self {
        match serde_json::from_slice(body) {
            Ok(value) => Self::Json(path.to_string(), value),
            Err(_) => Self::Raw(path.to_string(), body.clone()),
        }
    }
}

#[derive(Debug, Clone)]
struct Stored {
    status: StatusCode,
    body: Bytes,
}

#[derive(Debug)]
struct Entry {
    request: Fingerprint,
    /// `None` while the first request with this key is being handled.
    answer: Option<Stored>,
    at: Instant,
}

/// The keys seen, per reseller.
#[derive(Debug, Default)]
pub struct Ledger {
    entries: Mutex<HashMap<(usize, String), Entry>>,
}

enum Begin {
    Fresh,
    InProgress,
    Mismatch,
    Replay(Stored),
}

impl Ledger {
    fn begin(&self, id: &(usize, String), request: Fingerprint, now: Instant) -> Begin {
        let mut entries = self.lock();
        entries.retain(|_, e| now.duration_since(e.at) < KEEP);
        match entries.get(id) {
            Some(e) if e.request != request => Begin::Mismatch,
            Some(Entry { answer: None, .. }) => Begin::InProgress,
            Some(Entry {
                answer: Some(stored), ..
            }) => Begin::Replay(stored.clone()),
            None => {
                entries.insert(
                    id.clone(),
                    Entry {
                        request,
                        answer: None,
                        at: now,
                    },
                );
                Begin::Fresh
            }
        }
    }

    fn finish(&self, id: &(usize, String), answer: Stored) {
        if let Some(e) = self.lock().get_mut(id) {
            e.answer = Some(answer);
        }
    }

    fn abandon(&self, id: &(usize, String)) {
        let mut entries = self.lock();
        if entries.get(id).is_some_and(|e| e.answer.is_none()) {
            entries.remove(id);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(usize, String), Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Forgets a key whose request never finished (its handler was dropped), so that it does not
/// answer 409 for a day.
struct Pending<'a> {
    ledger: &'a Ledger,
    id: (usize, String),
    done: bool,
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if !self.done {
            self.ledger.abandon(&self.id);
        }
    }
}

/// The key of a request: absent is `None`; present but not 1–255 printable ASCII is 400.
fn key_of(req: &Request) -> Result<Option<String>, Failure> {
    let Some(value) = req.headers().get(KEY_HEADER) else {
        return Ok(None);
    };
    let bad = || Failure::bad_request("Invalid Idempotency-Key: 1 to 255 printable ASCII characters");
    let text = value.to_str().map_err(|_| bad())?;
    let printable = text.bytes().all(|b| (0x20..0x7f).contains(&b));
    if text.is_empty() || text.len() > MAX_KEY_LEN || !printable {
        return Err(bad());
    }
    Ok(Some(text.to_string()))
}

/// The middleware on `POST /portal/topups` and `POST /portal/orders`.
pub async fn idempotent(
    State(s): State<Arc<Shared>>,
    Extension(caller): Extension<Caller>,
    req: Request,
    next: Next,
) -> Response {
    let key = match key_of(&req) {
        Ok(Some(key)) => key,
        Ok(None) => return next.run(req).await,
        Err(failure) => return failure.into_response(),
    };
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(b) => b,
        Err(_) => {
            let failure = Failure::new(StatusCode::PAYLOAD_TOO_LARGE, "Request body too large (limit 64 KiB)");
            return echo(failure.into_response(), &key);
        }
    };
    let id = (caller.reseller, key.clone());
    let ledger = &s.idempotency;
    let response = match ledger.begin(&id, Fingerprint::of(parts.uri.path(), &bytes), Instant::now()) {
        Begin::Mismatch => Failure::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Idempotency-Key reused with a different request",
        )
        .into_response(),
        Begin::InProgress => Failure::new(
            StatusCode::CONFLICT,
            "A request with this Idempotency-Key is in progress",
        )
        .into_response(),
        Begin::Replay(stored) => {
            let mut r = answer(&stored);
            r.headers_mut()
                .insert(REPLAYED_HEADER, HeaderValue::from_static("true"));
            r
        }
        Begin::Fresh => {
            let mut pending = Pending {
                ledger,
                id,
                done: false,
            };
            let response = next.run(Request::from_parts(parts, Body::from(bytes))).await;
            let status = response.status();
            let body = axum::body::to_bytes(response.into_body(), usize::MAX)
                .await
                .unwrap_or_default();
            let stored = Stored { status, body };
            ledger.finish(&pending.id, stored.clone());
            pending.done = true;
            answer(&stored)
        }
    };
    echo(response, &key)
}

fn answer(stored: &Stored) -> Response {
    (
        stored.status,
        [(header::CONTENT_TYPE, "application/json")],
        stored.body.clone(),
    )
        .into_response()
}

fn echo(mut response: Response, key: &str) -> Response {
    if let Ok(value) = HeaderValue::from_str(key) {
        response.headers_mut().insert(KEY_HEADER, value);
    }
    response
}
