//! The gateway's routes: each takes the signed-in agent and what HTTP carried, asks the rule
//! it names, and answers (`answer`). No rule is decided here.

use super::answer::{answered, header, set_header};
use super::caller::Caller;
use crate::payments::{self, Asking};
use crate::relaying::{self, Passing};
use crate::requests;
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
    let request = header(&headers, esimdash_api::requests::REQUEST_HEADER).map(str::to_string);
    let asked_key = key.clone();
    let task = tokio::spawn(async move {
        let asking = Asking {
            kind,
            key: asked_key.as_deref(),
            confirmed,
            body: &body,
            approved_price: None,
        };
        answered(match request {
            Some(id) => requests::approve(&gateway, &agent, &id, asking).await,
            None => payments::pay(&gateway, &agent, asking).await,
        })
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

/// `POST /gateway/requests`: a seat's assistant proposes a payment for another seat to decide.
pub(crate) async fn propose(State(gateway): State<Arc<Gateway>>, Caller(agent): Caller, body: Bytes) -> Response {
    match requests::propose(&gateway, &agent, &body).await {
        Ok(kept) => (StatusCode::CREATED, axum::Json(kept)).into_response(),
        Err(refused) => refused.into_response(),
    }
}

#[derive(Debug, Default, serde::Deserialize)]
pub(crate) struct RequestId {
    id: Option<String>,
    why: Option<String>,
}

/// `GET /gateway/requests`: the team's requests, newest first; `?id=`: that one.
pub(crate) async fn requests(
    State(gateway): State<Arc<Gateway>>,
    Caller(_): Caller,
    Query(asked): Query<RequestId>,
) -> Response {
    let listed = match asked.id {
        Some(id) => requests::one(&gateway, &id).await.map(|one| vec![one]),
        None => requests::list(&gateway).await,
    };
    listed
        .map(|kept| axum::Json(serde_json::json!({ "requests": kept })))
        .into_response()
}

/// `POST /gateway/requests/refuse` with `{"id": …, "why": …}`.
pub(crate) async fn refuse(State(gateway): State<Arc<Gateway>>, Caller(agent): Caller, body: Bytes) -> Response {
    let Ok(asked) = serde_json::from_slice::<RequestId>(&body) else {
        return crate::refused::Refused::bad_request("Invalid JSON").into_response();
    };
    let why = asked.why.as_deref().unwrap_or("refused by a person");
    requests::refuse(&gateway, &agent, asked.id.as_deref().unwrap_or_default(), why)
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
