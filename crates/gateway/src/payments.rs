//! A payment through the gateway: the role allows it, its price is read upstream, its amount
//! is held against the agent's and the team's daily caps and journalled (one transaction, in
//! the store), then it is sent under a key of its own, and what it charged (or that it was
//! not placed) is recorded. One the gateway could not finish is settled by resending it under
//! the same key, never by paying anew.

use crate::agents::{Agent, Role};
use crate::server::{
    Caller, Gateway, Refused, error, forbidden, header, passed_on, set_header, store_failed, upstream_failed,
};
use crate::settling;
use crate::store::{Asked, Caps, From, Outcome, Payment, Refusal, Stage};
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use esimdash_api::model::Placed;
use esimdash_api::relay::Relayed;
use esimdash_api::{ApiError, Endpoint, PLACE_ORDER, TOPUP};
use esimdash_domain::iccid::Iccid;
use esimdash_domain::money::format_amount;
use rust_decimal::Decimal;
use std::sync::Arc;

/// Two payments for one eSIM and plan within this long: the second needs a confirmation
/// (`x-confirm-repeat: true`), whichever agents ask them.
const REPEAT_WINDOW_SECS: i64 = esimdash_api::REPEAT_WINDOW.as_secs() as i64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Topup,
    Order,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Topup => "topup",
            Kind::Order => "order",
        }
    }

    fn endpoint(kind: &str) -> Endpoint {
        if kind == "order" { PLACE_ORDER } else { TOPUP }
    }
}

pub(crate) async fn topup(
    State(gateway): State<Arc<Gateway>>,
    axum::Extension(Caller(agent)): axum::Extension<Caller>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    paid(gateway, agent, Kind::Topup, headers, body).await
}

pub(crate) async fn order(
    State(gateway): State<Arc<Gateway>>,
    axum::Extension(Caller(agent)): axum::Extension<Caller>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    paid(gateway, agent, Kind::Order, headers, body).await
}

/// A payment in a task of its own: a seat that hangs up (a timeout, Ctrl-C, a dropped network)
/// ends its request, never the payment, which is journalled and settled all the same. Every
/// answer echoes the agent's key, as the contract's server does.
async fn paid(gateway: Arc<Gateway>, agent: Agent, kind: Kind, headers: HeaderMap, body: Bytes) -> Response {
    let key = header(&headers, "idempotency-key").map(str::to_string);
    let task = tokio::spawn(async move { pay(&gateway, &agent, kind, &headers, &body).await });
    let mut response = task.await.unwrap_or_else(|e| {
        tracing::error!("a payment's task failed: {e}");
        error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "The gateway failed; the journal tells what became of the payment",
        )
    });
    if let Some(key) = key.filter(|k| HeaderValue::from_str(k).is_ok()) {
        set_header(&mut response, "idempotency-key", &key);
    }
    response
}

/// The request as the gateway sends it on: only the contract's fields.
struct Request {
    iccid: Option<Iccid>,
    slug: String,
    qty: u32,
}

impl Request {
    fn read(kind: Kind, body: &[u8]) -> Result<Request, Refused> {
        let bad = |m: &str| Err(Refused(StatusCode::BAD_REQUEST, m.to_string()));
        let Ok(json) = serde_json::from_slice::<serde_json::Value>(body) else {
            return bad("Invalid JSON");
        };
        let text = |f: &str| {
            json.get(f)
                .and_then(|v| v.as_str())
                .map(str::trim)
                .filter(|s| !s.is_empty())
        };
        let slug = text("slug");
        let iccid = text("iccid");
        let (iccid, slug) = match (kind, iccid, slug) {
            (Kind::Topup, Some(i), Some(s)) => match Iccid::parse(i) {
                Ok(i) => (Some(i), s),
                Err(_) => return Err(Refused(StatusCode::NOT_FOUND, "eSIM not found".to_string())),
            },
            (Kind::Topup, ..) => return bad("Missing iccid or slug"),
            (Kind::Order, _, Some(s)) => (None, s),
            (Kind::Order, _, None) => return bad("Missing slug"),
        };
        let qty = match json.get("qty") {
            None | Some(serde_json::Value::Null) => 1,
            Some(q) => match q.as_u64().filter(|q| (1..=10).contains(q)) {
                Some(q) => q as u32,
                None => return bad("qty must be a whole number from 1 to 10"),
            },
        };
        Ok(Request {
            iccid,
            slug: slug.to_string(),
            qty,
        })
    }

    fn body(&self) -> String {
        let mut body = serde_json::json!({ "slug": self.slug, "qty": self.qty });
        if let Some(iccid) = &self.iccid {
            body["iccid"] = serde_json::Value::String(iccid.as_str().to_string());
        }
        body.to_string()
    }
}

async fn pay(gateway: &Arc<Gateway>, agent: &Agent, kind: Kind, headers: &HeaderMap, body: &[u8]) -> Response {
    let refused_role = match (agent.role, kind) {
        (Role::Viewer, _) => Some("pay (top-ups and orders need support or admin)"),
        (Role::Support, Kind::Order) if !gateway.settings.support_can_buy => {
            Some("buy new eSIMs (support_can_buy is off in the gateway's settings); top-ups it may")
        }
        _ => None,
    };
    if let Some(what) = refused_role {
        gateway.counters.refused(&agent.name, crate::metrics::Refusal::Role);
        return forbidden(agent, what);
    }
    let key = header(headers, "idempotency-key").map(str::to_string);
    if let Some(k) = &key
        && (k.is_empty() || k.len() > 255 || !k.bytes().all(|b| (0x20..0x7f).contains(&b)))
    {
        return error(StatusCode::BAD_REQUEST, "Invalid Idempotency-Key");
    }
    let request = match Request::read(kind, body) {
        Ok(r) => r,
        Err(refused) => return refused.into_response(),
    };
    // A key sent before: its first answer (or 422), whatever the API would say of it now.
    if let Some(k) = &key {
        match gateway.store.payment_by_key(&agent.name, k).await {
            Ok(Some(earlier)) => return replay(&earlier, &request.body(), key.as_deref()),
            Ok(None) => {}
            Err(e) => return store_failed(&e),
        }
    }
    // One payment of a seat at a time: a charge past its price is seen before the next is sent.
    let turn = gateway.turn(&agent.name);
    let _turn = turn.lock().await;
    if let Err(refused) = settling::drift_checked(gateway, &agent.name).await {
        gateway.counters.refused(&agent.name, crate::metrics::Refusal::Cap);
        return refused.into_response();
    }
    let price = match price(gateway, &request).await {
        Ok(p) => p,
        Err(refused) => return refused.into_response(),
    };
    let asked = Asked {
        agent: agent.name.clone(),
        kind: kind.name().to_string(),
        iccid: request.iccid.as_ref().map(|i| i.as_str().to_string()),
        slug: request.slug.clone(),
        qty: request.qty,
        body: request.body(),
        agent_key: key.clone(),
        amount: price * Decimal::from(request.qty),
    };
    let confirmed = header(headers, "x-confirm-repeat").is_some_and(|v| v.eq_ignore_ascii_case("true"));
    let caps = Caps {
        team: gateway.settings.team_daily_cap,
    };
    let now = crate::now();
    let window = (!confirmed).then_some(REPEAT_WINDOW_SECS);
    match gateway.store.reserve(asked.clone(), caps, now, window).await {
        Err(e) => store_failed(&e),
        Ok(Err(refusal)) => {
            let why = match &refusal {
                Refusal::Cap { .. } => Some(crate::metrics::Refusal::Cap),
                Refusal::Repeat(_) => Some(crate::metrics::Refusal::Repeat),
                Refusal::SameKey(_) => None,
            };
            if let Some(why) = why {
                gateway.counters.refused(&agent.name, why);
            }
            refused(refusal, &asked, key.as_deref(), now)
        }
        Ok(Ok(payment)) => send(gateway, payment).await,
    }
}

/// The plan's price for this reseller, as the availability answer (a top-up) or the catalog
/// (an order) gives it.
async fn price(gateway: &Gateway, request: &Request) -> Result<Decimal, Refused> {
    let plan = match &request.iccid {
        Some(iccid) => {
            let offered = gateway
                .upstream
                .topup_plans(iccid)
                .await
                .map_err(|e| refused_upstream(&e))?;
            let refused = |m: &str| Refused(StatusCode::BAD_REQUEST, m.to_string());
            if offered.is_empty() {
                return Err(refused("This eSIM cannot be topped up"));
            }
            offered
                .into_iter()
                .find(|p| p.slug == request.slug)
                .ok_or_else(|| refused("Slug not available for this eSIM"))?
        }
        None => gateway
            .upstream
            .plan(&request.slug)
            .await
            .map_err(|e| refused_upstream(&e))?,
    };
    plan.sell_price().ok_or_else(|| {
        Refused(
            StatusCode::BAD_GATEWAY,
            format!("The API gave plan {} no price: nothing was paid", request.slug),
        )
    })
}

/// An upstream refusal of a read the payment needed, passed on in the contract's words.
fn refused_upstream(e: &ApiError) -> Refused {
    match (e.status(), e.server_message()) {
        (Some(status @ 400..=499), Some(message)) if status != 401 && status != 429 => Refused(
            StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST),
            message.to_string(),
        ),
        _ => Refused::upstream(e),
    }
}

fn refused(refusal: Refusal, asked: &Asked, key: Option<&str>, now: i64) -> Response {
    match refusal {
        Refusal::Cap {
            whose,
            cap,
            spent,
            amount,
        } => {
            let reset = next_reset(now);
            let whose_cap = whose.map_or_else(|| "the team".to_string(), |a| format!("agent {a}"));
            // The figures first: a client may show only the start of a long message.
            // Short, the figures and the reset first: a client shows the start of a message.
            let message = format!(
                "Daily cap: {whose_cap} {} of {} USD spent today, {} more would pass it; it resets in {} (00:00 UTC).",
                format_amount(spent),
                format_amount(cap),
                format_amount(amount),
                until(reset, now)
            );
            let mut response = (
                StatusCode::FORBIDDEN,
                axum::Json(serde_json::json!({
                    "error": message,
                    "cap": format_amount(cap),
                    "spent": format_amount(spent),
                    "amount": format_amount(amount),
                    "resetsAt": reset.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                })),
            )
                .into_response();
            if let Some(key) = key {
                set_header(&mut response, "idempotency-key", key);
            }
            response
        }
        Refusal::Repeat(earlier) => {
            let minutes = (now - earlier.asked_at).max(0) / 60;
            let by = if earlier.asked.agent == asked.agent {
                "you".to_string()
            } else {
                format!("agent {}", earlier.asked.agent)
            };
            error(
                StatusCode::PRECONDITION_REQUIRED,
                &format!(
                    "{by} paid it {minutes} min ago ({}, {}); to pay again, confirm (header x-confirm-repeat: true)",
                    earlier.asked.slug,
                    earlier.stage.name()
                ),
            )
        }
        Refusal::SameKey(earlier) => replay(&earlier, &asked.body, key),
    }
}

/// The agent sent a key it used before: the first request's answer, as the contract says.
fn replay(earlier: &Payment, body: &str, key: Option<&str>) -> Response {
    let mut response = if earlier.asked.body != body {
        error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Idempotency-Key reused with a different request",
        )
    } else {
        match (&earlier.status, &earlier.answer, earlier.stage) {
            (Some(status @ 200..=299), Some(answer), Stage::Charged)
            | (Some(status @ (400 | 402 | 404)), Some(answer), Stage::Released) => {
                let mut r = (StatusCode::from_u16(*status).unwrap_or(StatusCode::OK), answer.clone()).into_response();
                set_header(&mut r, "content-type", "application/json");
                set_header(&mut r, "idempotent-replayed", "true");
                r
            }
            (_, _, Stage::Released) => error(
                StatusCode::GONE,
                &format!(
                    "This payment was not placed ({}): nothing was paid. To pay, send it under a new Idempotency-Key",
                    earlier.note.as_deref().unwrap_or("released")
                ),
            ),
            (_, _, Stage::Asked) => error(
                StatusCode::CONFLICT,
                "A request with this Idempotency-Key is in progress",
            ),
            // Sent, its outcome not known yet: 502, which a client reads as "may have been
            // placed" (a 409 reads as a clash, and invites a new key).
            _ => error(
                StatusCode::BAD_GATEWAY,
                &format!(
                    "This payment is still being settled (journal {}): whether it was placed is not known yet, and its amount stays held against the cap. Do not pay again; send the same request with the same Idempotency-Key later to learn its outcome.",
                    earlier.id
                ),
            ),
        }
    };
    if let Some(key) = key {
        set_header(&mut response, "idempotency-key", key);
    }
    response
}

/// Sends a reserved payment and records its outcome.
async fn send(gateway: &Arc<Gateway>, payment: Payment) -> Response {
    match gateway.store.mark_sent(&payment.id, crate::now()).await {
        Ok(true) => {}
        Ok(false) => {
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                "A gateway replica starting just now released this payment before it was sent: nothing was paid. Send it again",
            );
        }
        Err(e) => {
            settling::release(
                gateway,
                &payment,
                "the journal could not record it as sent",
                From::Asked,
            )
            .await;
            return store_failed(&e);
        }
    }
    // Money moves: no read answered before it is given again.
    gateway.reads.forget();
    match sent(gateway, &payment, Send::First).await {
        Ok((answer, Stage::Charged | Stage::Released)) => passed_on(answer, None),
        // Any other answer after the payment left does not tell whether the API carried it out
        // (a load balancer's 500 after the API committed): the order list is asked.
        Ok((answer, _)) => settling::after_an_error(gateway, payment, Some(answer)).await,
        Err(e) if e.outcome_unknown() => settling::after_an_error(gateway, payment, None).await,
        Err(e) => {
            settling::release(gateway, &payment, &format!("not sent: {e}"), From::Sent).await;
            upstream_failed(&e)
        }
    }
}

/// A payment's first sending, or a resend under its key of one whose outcome is not known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Send {
    First,
    Again,
}

/// Sends the payment under its own key and records what the answer says; the answer and the
/// stage it tells (`Unknown`: nothing recorded); `Err` when no answer came.
pub(crate) async fn sent(gateway: &Gateway, payment: &Payment, send: Send) -> Result<(Relayed, Stage), ApiError> {
    let endpoint = Kind::endpoint(&payment.asked.kind);
    let answer = gateway
        .upstream
        .relay(
            endpoint,
            None,
            Some(payment.asked.body.clone().into_bytes()),
            Some(&payment.upstream_key),
        )
        .await?;
    gateway.reads.forget();
    let outcome = outcome_of(&answer, payment, send);
    let stage = outcome.as_ref().map_or(Stage::Unknown, |o| o.stage);
    gateway
        .counters
        .payment(&payment.asked.agent, stage.name(), Some(answer.status));
    if let Some(outcome) = outcome {
        settling::record(gateway, payment, outcome).await;
    }
    Ok((answer, stage))
}

/// What an answer says became of a payment; `None` when it says nothing (left as it is).
///
/// Only a placement tells: 2xx (to a resend, only with the key echoed: a 2xx without the echo
/// may be a second payment from an API that does not honour keys). Every other answer to a
/// first sending says nothing, and the caller asks the order list (`settling::after_an_error`):
/// a load balancer or proxy may answer 500, 503, 429, 400 or 401 after the API charged. To a
/// resend under the key, the contract's refusals of it (400, 402, 404: nothing was carried
/// out under that key) tell as well.
fn outcome_of(answer: &Relayed, payment: &Payment, send: Send) -> Option<Outcome> {
    let text = String::from_utf8_lossy(&answer.body).into_owned();
    let base = Outcome {
        status: Some(answer.status),
        answer: Some(text),
        key_echoed: Some(answer.key_echoed),
        ..Outcome::default()
    };
    let noted = |stage: Stage, note: String| Outcome {
        stage,
        note: Some(note),
        ..base.clone()
    };
    match (answer.status, send) {
        (200..=299, Send::Again) if !answer.key_echoed => Some(noted(
            Stage::Unknown,
            "resent, and the API did not echo the key: it may not honour keys, so this may be a second order; check the order list".to_string(),
        )),
        (200..=299, _) => Some(match serde_json::from_slice::<Placed>(&answer.body) {
            Ok(placed) => Outcome {
                stage: Stage::Charged,
                charged: Some(placed.order.total_sell_price.unwrap_or(payment.asked.amount)),
                order_no: Some(placed.order.record.provider_order_no.to_string()),
                ..base.clone()
            },
            Err(e) => Outcome {
                charged: Some(payment.asked.amount),
                ..noted(
                    Stage::Charged,
                    format!("placed, but its answer could not be read ({e}): the amount held is counted"),
                )
            },
        }),
        (status @ (400 | 402 | 404), Send::Again) => {
            Some(noted(Stage::Released, format!("refused by the API ({status})")))
        }
        _ => None,
    }
}

/// The next midnight, UTC: when the daily caps start again.
pub(crate) fn next_reset(now: i64) -> DateTime<Utc> {
    let day = DateTime::from_timestamp(now, 0).unwrap_or_default().date_naive();
    day.succ_opt()
        .unwrap_or(day)
        .and_hms_opt(0, 0, 0)
        .unwrap_or_default()
        .and_utc()
}

fn until(at: DateTime<Utc>, now: i64) -> String {
    let left = (at.timestamp() - now).max(0);
    format!("{} h {:02} min", left / 3600, left % 3600 / 60)
}

#[derive(Debug, serde::Deserialize)]
pub(crate) struct JournalQuery {
    since: Option<String>,
}

/// `GET /gateway/journal`: an agent's own payments, or everyone's for an admin.
pub(crate) async fn journal(
    State(gateway): State<Arc<Gateway>>,
    axum::Extension(Caller(agent)): axum::Extension<Caller>,
    Query(query): Query<JournalQuery>,
) -> Response {
    let since = match query
        .since
        .as_deref()
        .map(|t| esimdash_api::audit::since(t).map(|t| t.timestamp()))
        .transpose()
    {
        Ok(s) => s.unwrap_or(0),
        Err(e) => return error(StatusCode::BAD_REQUEST, &format!("since={e}")),
    };
    let whose = (agent.role != Role::Admin).then_some(agent.name.as_str());
    match gateway.store.journal(whose, since).await {
        Ok(entries) => axum::Json(serde_json::json!({
            "entries": entries.iter().map(entry_json).collect::<Vec<_>>(),
        }))
        .into_response(),
        Err(e) => store_failed(&e),
    }
}

fn entry_json(p: &Payment) -> serde_json::Value {
    let time = |t: Option<i64>| {
        t.and_then(|t| DateTime::from_timestamp(t, 0))
            .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
    };
    serde_json::json!({
        "id": p.id,
        "agent": p.asked.agent,
        "kind": p.asked.kind,
        "iccid": p.asked.iccid,
        "slug": p.asked.slug,
        "qty": p.asked.qty,
        "amount": p.asked.amount.to_string(),
        "charged": p.charged.map(|c| c.to_string()),
        "stage": p.stage.name(),
        "askedAt": time(Some(p.asked_at)),
        "sentAt": time(p.sent_at),
        "settledAt": time(p.settled_at),
        "status": p.status,
        "orderNo": p.order_no,
        "note": p.note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(status: u16, key_echoed: bool) -> Relayed {
        Relayed {
            status,
            content_type: None,
            body: b"{}".to_vec(),
            retry_after: None,
            key_echoed,
            replayed: false,
        }
    }

    fn payment() -> Payment {
        let asked = Asked {
            agent: "ana".into(),
            kind: "topup".into(),
            iccid: None,
            slug: "s".into(),
            qty: 1,
            body: "{}".into(),
            agent_key: None,
            amount: Decimal::ONE,
        };
        Payment {
            stage: Stage::Sent,
            ..Payment::asked("p".into(), asked, 0)
        }
    }

    /// What each answer tells of a payment: to its first sending, only a placement (any other
    /// answer may follow a charge and says nothing: the order list is asked); to a resend under
    /// its key, a placement with the key echoed or the contract's refusals.
    #[test]
    fn a_resend_is_settled_only_by_answers_that_tell() {
        let stage = |status, echoed, send| outcome_of(&answer(status, echoed), &payment(), send).map(|o| o.stage);
        assert_eq!(stage(201, true, Send::First), Some(Stage::Charged));
        for not_telling in [500, 503, 429, 400, 401, 402, 502] {
            assert_eq!(stage(not_telling, true, Send::First), None, "{not_telling}");
        }
        assert_eq!(stage(201, true, Send::Again), Some(Stage::Charged));
        assert_eq!(
            stage(201, false, Send::Again),
            Some(Stage::Unknown),
            "maybe a second order"
        );
        assert_eq!(stage(402, true, Send::Again), Some(Stage::Released));
        for says_nothing in [429, 500, 503, 401, 409, 502] {
            assert_eq!(stage(says_nothing, true, Send::Again), None, "{says_nothing}");
        }
    }
}
