//! How the gateway's answers go out: an upstream answer passed on (its status, type and
//! wait; the reseller's key refused said as the gateway's trouble), and every refusal as the
//! contract's `{"error": …}` with its status.

use crate::refused::Refused;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use esimdash_api::relay::Relayed;
use std::time::Duration;

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let mut response = (self.status, axum::Json(self.body)).into_response();
        if let Some(wait) = self.retry_after {
            set_wait(&mut response, wait);
        }
        response
    }
}

/// What a rule answered, as the agent gets it.
pub(crate) fn answered(result: Result<Relayed, Refused>) -> Response {
    result.map_or_else(IntoResponse::into_response, passed_on)
}

/// The upstream's answer as the agent gets it. A 401 is the reseller's key refused, not the
/// agent's token: said as the gateway's trouble, so that no seat takes its own token for
/// revoked.
fn passed_on(answer: Relayed) -> Response {
    if answer.status == 401 {
        tracing::error!("the API refused the gateway's key (401)");
        return Refused::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "The API refused the gateway's key (401): the team's admin must renew it. Nothing was sent or paid",
        )
        .into_response();
    }
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::BAD_GATEWAY);
    let mut response = (status, answer.body).into_response();
    set_header(
        &mut response,
        "content-type",
        answer.content_type.as_deref().unwrap_or("application/json"),
    );
    if let Some(wait) = answer.retry_after {
        set_wait(&mut response, wait);
    }
    if answer.replayed {
        set_header(&mut response, "idempotent-replayed", "true");
    }
    response
}

pub(crate) fn set_header(response: &mut Response, name: &'static str, value: &str) {
    if let Ok(value) = HeaderValue::from_str(value) {
        response.headers_mut().insert(name, value);
    }
}

/// `retry-after` in whole seconds, at least one.
fn set_wait(response: &mut Response, wait: Duration) {
    set_header(response, "retry-after", &wait.as_secs().max(1).to_string());
}

pub(crate) fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim)
}
