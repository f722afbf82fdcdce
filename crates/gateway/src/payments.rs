//! A payment through the gateway: the role allows it, its price is read upstream, its amount
//! is held against the agent's and the team's daily caps and journalled (one transaction, in
//! the store), then it is sent under a key of its own (`sending`), and what it charged (or that
//! it was not placed) is recorded. One the gateway could not finish is settled by resending it
//! under the same key, never by paying anew (`settling`). No HTTP here: the answer passed on,
//! or the refusal (`Refused`).

use crate::agents::{Agent, Deed, Role};
use crate::counters::Refusal as Counted;
use crate::refused::Refused;
use crate::sending::{Kind, Send, release, sent};
use crate::settling;
use crate::state::Gateway;
use crate::store::{Asked, Caps, From, Payment, Refusal, Stage};
use chrono::{DateTime, Utc};
use esimdash_api::ApiError;
use esimdash_api::relay::Relayed;
use esimdash_domain::iccid::Iccid;
use esimdash_domain::money::format_amount;
use http::StatusCode;
use rust_decimal::Decimal;
use std::sync::Arc;

/// Two payments for one eSIM and plan within this long: the second needs a confirmation
/// (`x-confirm-repeat: true`), whichever agents ask them.
const REPEAT_WINDOW_SECS: i64 = esimdash_api::REPEAT_WINDOW.as_secs() as i64;

/// A payment as an agent asked it: its kind, its idempotency key, whether a repeat was
/// confirmed, and its body.
pub(crate) struct Asking<'a> {
    pub kind: Kind,
    pub key: Option<&'a str>,
    pub confirmed: bool,
    pub body: &'a [u8],
    /// The price each a person approved (a request's): any other now refuses the payment.
    pub approved_price: Option<Decimal>,
}

/// The request as the gateway sends it on: only the contract's fields.
pub(crate) struct Request {
    pub iccid: Option<Iccid>,
    pub slug: String,
    pub qty: u32,
}

impl Request {
    pub(crate) fn read(kind: Kind, body: &[u8]) -> Result<Request, Refused> {
        let bad = |m: &str| Err(Refused::bad_request(m));
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
                Err(_) => return Err(Refused::new(StatusCode::NOT_FOUND, "eSIM not found")),
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

/// What the role may not do of this payment, as the permission table says.
pub(crate) fn role_refusal(gateway: &Gateway, agent: &Agent, kind: Kind) -> Option<Refused> {
    let deed = match kind {
        Kind::Topup => Deed::TopUp,
        Kind::Order => Deed::Buy,
    };
    let can_buy = gateway.settings.support_can_buy;
    if agent.role.may(deed, can_buy) {
        return None;
    }
    let more = if agent.role.may(deed, true) {
        " (support_can_buy is off in the gateway's settings)".to_string()
    } else {
        format!(" ({} may)", Role::who_may(deed))
    };
    gateway.counters.refused(&agent.name, Counted::Role);
    Some(Refused::forbidden(agent, deed, &more))
}

pub(crate) async fn pay(gateway: &Arc<Gateway>, agent: &Agent, asking: Asking<'_>) -> Result<Relayed, Refused> {
    if let Some(refused) = role_refusal(gateway, agent, asking.kind) {
        return Err(refused);
    }
    let key = asking.key;
    if let Some(k) = key
        && (k.is_empty() || k.len() > 255 || !k.bytes().all(|b| (0x20..0x7f).contains(&b)))
    {
        return Err(Refused::bad_request("Invalid Idempotency-Key"));
    }
    let request = Request::read(asking.kind, asking.body)?;
    // A key sent before: its first answer (or 422), whatever the API would say of it now.
    if let Some(k) = key
        && let Some(earlier) = gateway
            .store
            .payment_by_key(&agent.name, k)
            .await
            .map_err(|e| Refused::store(&e))?
    {
        return replay(&earlier, &request.body());
    }
    // One payment of a seat at a time: a charge past its price is seen before the next is sent.
    let turn = gateway.turn(&agent.name);
    let _turn = turn.lock().await;
    settling::drift_checked(gateway, &agent.name).await.inspect_err(|_| {
        gateway.counters.refused(&agent.name, Counted::Cap);
    })?;
    let price = price(gateway, request.iccid.as_ref(), &request.slug).await?;
    if let Some(approved) = asking.approved_price
        && approved != price
    {
        return Err(Refused::new(
            StatusCode::CONFLICT,
            format!(
                "The price changed since it was approved: {} USD then, {} USD now. Nothing was paid",
                format_amount(approved),
                format_amount(price)
            ),
        ));
    }
    let asked = Asked {
        agent: agent.name.clone(),
        kind: asking.kind.name().to_string(),
        iccid: request.iccid.as_ref().map(|i| i.as_str().to_string()),
        slug: request.slug.clone(),
        qty: request.qty,
        body: request.body(),
        agent_key: key.map(str::to_string),
        amount: price * Decimal::from(request.qty),
    };
    let caps = Caps {
        team: gateway.settings.team_daily_cap,
    };
    let now = crate::now();
    let window = (!asking.confirmed).then_some(REPEAT_WINDOW_SECS);
    match gateway.store.reserve(asked.clone(), caps, now, window).await {
        Err(e) => Err(Refused::store(&e)),
        Ok(Err(refusal)) => {
            let why = match &refusal {
                Refusal::Cap { .. } => Some(Counted::Cap),
                Refusal::Repeat(_) => Some(Counted::Repeat),
                Refusal::SameKey(_) => None,
            };
            if let Some(why) = why {
                gateway.counters.refused(&agent.name, why);
            }
            refused(refusal, &asked, now)
        }
        Ok(Ok(payment)) => send(gateway, payment).await,
    }
}

/// The plan's price for this reseller, as the availability answer (a top-up) or the catalog
/// (an order) gives it.
pub(crate) async fn price(gateway: &Gateway, iccid: Option<&Iccid>, slug: &str) -> Result<Decimal, Refused> {
    let plan = match iccid {
        Some(iccid) => {
            let offered = gateway
                .upstream
                .topup_plans(iccid)
                .await
                .map_err(|e| refused_upstream(&e))?;
            let refused = |m: &str| Refused::bad_request(m);
            if offered.is_empty() {
                return Err(refused("This eSIM cannot be topped up"));
            }
            offered
                .into_iter()
                .find(|p| p.slug == slug)
                .ok_or_else(|| refused("Slug not available for this eSIM"))?
        }
        None => gateway.upstream.plan(slug).await.map_err(|e| refused_upstream(&e))?,
    };
    plan.sell_price().ok_or_else(|| {
        Refused::new(
            StatusCode::BAD_GATEWAY,
            format!("The API gave plan {slug} no price: nothing was paid"),
        )
    })
}

/// An upstream refusal of a read the payment needed, passed on in the contract's words.
fn refused_upstream(e: &ApiError) -> Refused {
    match (e.status(), e.server_message()) {
        (Some(status @ 400..=499), Some(message)) if status != 401 && status != 429 => {
            Refused::new(StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST), message)
        }
        _ => Refused::upstream(e),
    }
}

fn refused(refusal: Refusal, asked: &Asked, now: i64) -> Result<Relayed, Refused> {
    match refusal {
        Refusal::Cap {
            whose,
            cap,
            spent,
            amount,
        } => {
            let reset = crate::store::next_reset(now);
            let whose_cap = whose.map_or_else(|| "the team".to_string(), |a| format!("agent {a}"));
            // Short, the figures and the reset first: a client shows the start of a message.
            let message = format!(
                "Daily cap: {whose_cap} {} of {} USD spent today, {} more would pass it; it resets in {} (00:00 UTC).",
                format_amount(spent),
                format_amount(cap),
                format_amount(amount),
                until(reset, now)
            );
            Err(Refused {
                body: serde_json::json!({
                    "error": message,
                    "cap": format_amount(cap),
                    "spent": format_amount(spent),
                    "amount": format_amount(amount),
                    "resetsAt": reset.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                }),
                ..Refused::new(StatusCode::FORBIDDEN, "")
            })
        }
        Refusal::Repeat(earlier) => {
            let minutes = (now - earlier.asked_at).max(0) / 60;
            let by = if earlier.asked.agent == asked.agent {
                "you".to_string()
            } else {
                format!("agent {}", earlier.asked.agent)
            };
            Err(Refused::new(
                StatusCode::PRECONDITION_REQUIRED,
                format!(
                    "{by} paid it {minutes} min ago ({}, {}); to pay again, confirm (header x-confirm-repeat: true)",
                    earlier.asked.slug,
                    earlier.stage.name()
                ),
            ))
        }
        Refusal::SameKey(earlier) => replay(&earlier, &asked.body),
    }
}

/// The agent sent a key it used before: the first request's answer, as the contract says.
fn replay(earlier: &Payment, body: &str) -> Result<Relayed, Refused> {
    if earlier.asked.body != body {
        return Err(Refused::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Idempotency-Key reused with a different request",
        ));
    }
    match (&earlier.status, &earlier.answer, earlier.stage) {
        (Some(status @ 200..=299), Some(answer), Stage::Charged)
        | (Some(status @ (400 | 402 | 404)), Some(answer), Stage::Released) => Ok(Relayed {
            status: *status,
            content_type: Some("application/json".to_string()),
            body: answer.clone().into_bytes(),
            retry_after: None,
            key_echoed: true,
            replayed: true,
        }),
        (_, _, Stage::Released) => Err(Refused::new(
            StatusCode::GONE,
            format!(
                "This payment was not placed ({}): nothing was paid. To pay, send it under a new Idempotency-Key",
                earlier.note.as_deref().unwrap_or("released")
            ),
        )),
        (_, _, Stage::Asked) => Err(Refused::new(
            StatusCode::CONFLICT,
            "A request with this Idempotency-Key is in progress",
        )),
        // Sent, its outcome not known yet: 502, which a client reads as "may have been
        // placed" (a 409 reads as a clash, and invites a new key).
        _ => Err(Refused::new(
            StatusCode::BAD_GATEWAY,
            format!(
                "This payment is still being settled (journal {}): whether it was placed is not known yet, and its amount stays held against the cap. Do not pay again; send the same request with the same Idempotency-Key later to learn its outcome.",
                earlier.id
            ),
        )),
    }
}

/// Sends a reserved payment and records its outcome.
async fn send(gateway: &Arc<Gateway>, payment: Payment) -> Result<Relayed, Refused> {
    match gateway.store.mark_sent(&payment.id, crate::now()).await {
        Ok(true) => {}
        Ok(false) => {
            return Err(Refused::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "A gateway replica starting just now released this payment before it was sent: nothing was paid. Send it again",
            ));
        }
        Err(e) => {
            release(
                gateway,
                &payment,
                "the journal could not record it as sent",
                From::Asked,
            )
            .await;
            return Err(Refused::store(&e));
        }
    }
    // Money moves: no read answered before it is given again.
    gateway.reads.forget();
    match sent(gateway, &payment, Send::First).await {
        Ok((answer, Stage::Charged | Stage::Released)) => Ok(answer),
        // Any other answer after the payment left does not tell whether the API carried it out
        // (a load balancer's 500 after the API committed): the order list is asked.
        Ok((answer, _)) => settling::after_an_error(gateway, payment, Some(answer)).await,
        Err(e) if e.outcome_unknown() => settling::after_an_error(gateway, payment, None).await,
        Err(e) => {
            release(gateway, &payment, &format!("not sent: {e}"), From::Sent).await;
            Err(Refused::upstream(&e))
        }
    }
}

fn until(at: DateTime<Utc>, now: i64) -> String {
    let left = (at.timestamp() - now).max(0);
    format!("{} h {:02} min", left / 3600, left % 3600 / 60)
}

/// `GET /gateway/journal`: an agent's own payments, or everyone's where its role reads the
/// team's journal.
pub(crate) async fn journal(
    gateway: &Gateway,
    agent: &Agent,
    since: Option<&str>,
) -> Result<serde_json::Value, Refused> {
    let since = since
        .map(|t| esimdash_api::audit::since(t).map(|t| t.timestamp()))
        .transpose()
        .map_err(|e| Refused::bad_request(format!("since={e}")))?
        .unwrap_or(0);
    let whose = (!agent.role.may(Deed::ReadTeamJournal, false)).then_some(agent.name.as_str());
    let entries = gateway
        .store
        .journal(whose, since)
        .await
        .map_err(|e| Refused::store(&e))?;
    Ok(serde_json::json!({
        "entries": entries.iter().map(entry_json).collect::<Vec<_>>(),
    }))
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
