//! Who is asking: every request names an agent by its token, checked before any route runs
//! (`authenticate`), and the signed-in agent handed to the routes (`Caller`). Failed sign-ins
//! are counted by access code and by address (`sign_in`): a code being guessed waits, an
//! address failing often has its failures refused, and a valid token still signs in.

use super::answer::set_header;
use crate::agents::Agent;
use crate::refused::Refused;
use crate::sign_in;
use crate::state::Gateway;
use crate::tls::Peer;
use axum::extract::{ConnectInfo, FromRequestParts, Request, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use esimdash_api::relay::SEAT_HEADER;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

/// The agent a request comes from, as `authenticate` signed it in.
#[derive(Debug, Clone)]
pub(crate) struct Caller(pub Agent);

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = Refused;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Caller, Refused> {
        parts
            .extensions
            .get::<Caller>()
            .cloned()
            .ok_or_else(|| Refused::new(StatusCode::UNAUTHORIZED, "Unauthorized"))
    }
}

fn wait(wait: Duration) -> Response {
    Refused::wait("Too many failed sign-ins: wait before trying again", wait).into_response()
}

/// A failed sign-in, counted; the answer to it.
fn failed(gateway: &Gateway, ip: IpAddr, code: Option<&str>) -> Response {
    gateway.sign_ins.failed(ip, code);
    gateway.counters.failed_sign_in();
    Refused::new(StatusCode::UNAUTHORIZED, "Unauthorized").into_response()
}

pub(crate) async fn authenticate(State(gateway): State<Arc<Gateway>>, mut request: Request, next: Next) -> Response {
    let ip = request
        .extensions()
        .get::<ConnectInfo<Peer>>()
        .map_or(IpAddr::from([0, 0, 0, 0]), |c| c.0.0.ip());
    let headers = request.headers();
    let text = |name: &str| super::answer::header(headers, name);
    let (code, secret) = (text("x-access-code"), text("x-secret-key"));
    // No agent's: refused before anything is looked up or kept but the address's count.
    let (Some(code), Some(secret)) = (
        code.filter(|c| !c.is_empty() && c.len() <= sign_in::LONGEST_CODE),
        secret.filter(|s| !s.is_empty() && s.len() <= sign_in::LONGEST_SECRET),
    ) else {
        return match gateway.sign_ins.address_waits(ip) {
            Some(w) => wait(w),
            None => failed(&gateway, ip, None),
        };
    };
    if let Some(w) = gateway.sign_ins.code_waits(ip, code) {
        return wait(w);
    }
    let agent = match gateway.store.agent_by_code(code).await {
        Ok(agent) => agent,
        Err(e) => {
            tracing::error!("{e}");
            return Refused::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "The gateway's store cannot be read; try again",
            )
            .into_response();
        }
    };
    let Some(agent) = agent.filter(|a| a.holds(secret)) else {
        return match gateway.sign_ins.address_waits(ip) {
            Some(w) => wait(w),
            None => failed(&gateway, ip, Some(code)),
        };
    };
    gateway.sign_ins.signed_in(ip, code);
    if agent.is_revoked() {
        // Not the contract's "API key revoked or expired" (a client reads those words as its
        // key revoked, and sends its user to the reseller portal): the agent needs a new token
        // from the team's admin.
        return Refused::new(
            StatusCode::UNAUTHORIZED,
            "This agent's token is no longer accepted by the team gateway: ask the team's admin for a new one",
        )
        .into_response();
    }
    gateway.counters.request(&agent.name);
    request.extensions_mut().insert(Caller(agent.clone()));
    let mut response = next.run(request).await;
    // The agent's seat on every answer: the dashboard's header shows it, at no request's cost.
    if let Some(seat) = gateway.seat(&agent).await {
        set_header(&mut response, SEAT_HEADER, &seat.header());
    }
    response
}
