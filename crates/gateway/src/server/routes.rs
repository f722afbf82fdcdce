//! The gateway's routes: each takes the signed-in agent and what HTTP carried, asks the rule
//! it names, and answers (`answer`). No rule is decided here.

use super::answer::{answered, header, set_header};
use super::caller::Caller;
use crate::payments::{self, Asking};
use crate::relaying::{self, Passing};
use crate::sending::Kind;
use crate::state::Gateway;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

pub(crate) async fn topup(state: State<Arc<Gateway>>, caller: Caller, headers: HeaderMap, body: Bytes) -> Response {
    paid(state, caller, Kind::Topup, headers, body).await
}

pub(crate) async fn order(state: State<Arc<Gateway>>, caller: Caller, headers: HeaderMap, body: Bytes) -> Response {
    paid(state, caller, Kind::Order, headers, body).await
}

/// A payment in a task of its own: a seat that hangs up (a timeout, Ctrl-C, a dropped network)
/// ends its request, never the payment, which is journalled and settled all the same. Every
/// answer echoes the agent's key, as the contract's server does.
async fn paid(
    State(gateway): State<Arc<Gateway>>,
    Caller(agent): Caller,
    kind: Kind,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let key = header(&headers, "idempotency-key").map(str::to_string);
    let confirmed = header(&headers, "x-confirm-repeat").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    let asked_key = key.clone();
    let task = tokio::spawn(async move {
        let asking = Asking {
            kind,
            key: asked_key.as_deref(),
            confirmed,
            body: &body,
        };
        answered(payments::pay(&gateway, &agent, asking).await)
    });
    let mut response = task.await.unwrap_or_else(|e| {
        tracing::error!("a payment's task failed: {e}");
        crate::refused::Refused::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "The gateway failed; the journal tells what became of the payment",
        )
        .into_response()
    });
    if let Some(key) = key.filter(|k| HeaderValue::from_str(k).is_ok()) {
        set_header(&mut response, "idempotency-key", &key);
    }
    response
}

/// `GET /gateway/me`: who the token is, and what is left of its cap today.
pub(crate) async fn me(State(gateway): State<Arc<Gateway>>, Caller(agent): Caller) -> Response {
    gateway.me(&agent).await.map(axum::Json).into_response()
}

#[derive(Debug, serde::Deserialize)]
pub(crate) struct JournalQuery {
    since: Option<String>,
}

/// `GET /gateway/journal`: an agent's own payments, or everyone's for a role that reads the
/// team's.
pub(crate) async fn journal(
    State(gateway): State<Arc<Gateway>>,
    Caller(agent): Caller,
    Query(query): Query<JournalQuery>,
) -> Response {
    payments::journal(&gateway, &agent, query.since.as_deref())
        .await
        .map(axum::Json)
        .into_response()
}

/// Any other route of the contract, passed on.
pub(crate) async fn relay(
    State(gateway): State<Arc<Gateway>>,
    Caller(agent): Caller,
    method: Method,
    uri: Uri,
    body: Bytes,
) -> Response {
    let passing = Passing {
        method: method.as_str(),
        path: uri.path(),
        query: uri.query(),
        body: body.to_vec(),
    };
    answered(relaying::relay(&gateway, &agent, passing).await)
}
