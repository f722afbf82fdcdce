//! What became of a payment whose answer did not tell. After it was sent, only a placement
//! (2xx) says what the API did: a 500, 503, 429, 400 or 401 may come from a load balancer or a
//! proxy after the API charged, and a dropped connection tells nothing. Such a payment stays
//! held against its caps, *unknown*, until the order list (or a resend under its key, where the
//! API honours keys) says; the agent is told so, never invited to pay again. A charge past what
//! was held is counted as charged, and the seat pays nothing more until the order list confirms
//! the journal's figure (`drift`).

use crate::refused::Refused;
use crate::sending::{Send, record, release, sent};
use crate::state::Gateway;
use crate::store::{From, Outcome, Payment, Stage};
use esimdash_api::model::{Order, OrderQuery, Placed};
use esimdash_api::relay::Relayed;
use esimdash_domain::iccid::Iccid;
use http::StatusCode;
use std::sync::Arc;
use std::time::Duration;

/// Tries to settle a payment in the background, waiting 1, 2, 4, 8 and 16 s before each.
const TRIES: u32 = 5;
/// A payment is resent under its key only while the API keeps keys (24 hours), with an hour to
/// spare for clocks that disagree.
const KEY_KEPT_SECS: i64 = 23 * 3600;
/// An order in the list is the payment's only if created since shortly before it was sent
/// (clocks disagree by minutes).
const CLOCKS_DIFFER_SECS: i64 = 5 * 60;

/// What the order list shows of a payment.
enum Listed {
    /// No order of it.
    Nothing,
    /// Its order.
    One(Box<Order>),
    /// It cannot say: why (orders without a creation time, several that could be it, another
    /// payment of the same eSIM and plan still open).
    Unclear(String),
}

/// The order list's word on `payment` (one read of the plan's newest orders).
async fn listed(gateway: &Gateway, payment: &Payment) -> Result<Listed, String> {
    let iccid = payment.asked.iccid.as_deref().and_then(|i| Iccid::parse(i).ok());
    let orders = gateway
        .upstream
        .recent_orders_for(&payment.asked.slug, iccid.as_ref())
        .await
        .map_err(|e| format!("the order list could not be read: {e}"))?;
    let since = payment.sent_at.unwrap_or(payment.asked_at) - CLOCKS_DIFFER_SECS;
    let (claimed, other_open) = gateway
        .store
        .others_like(payment, since - 3600)
        .await
        .map_err(|e| e.to_string())?;
    let mut undated = false;
    let candidates: Vec<&Order> = orders
        .iter()
        .filter(|o| !claimed.contains(o.record.provider_order_no.as_str()))
        .filter(|o| {
            iccid.is_none()
                || o.iccid.is_empty()
                || o.iccid.as_str() == payment.asked.iccid.as_deref().unwrap_or_default()
        })
        .filter(|o| match o.created_at.at() {
            Some(at) => at.timestamp() >= since,
            None => {
                undated = true;
                false
            }
        })
        .collect();
    Ok(match candidates.as_slice() {
        _ if undated => Listed::Unclear("the order list gives orders no creation time".to_string()),
        [] => Listed::Nothing,
        [_] if other_open => Listed::Unclear(
            "another payment of the same eSIM and plan is still open: its order could be either's".to_string(),
        ),
        [one] => Listed::One(Box::new((*one).clone())),
        many => Listed::Unclear(format!(
            "orders {} could each be it",
            many.iter()
                .map(|o| o.record.provider_order_no.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    })
}

/// The outcome of a payment the order list shows placed: its order, as a placement's answer
/// (so that the agent's key sent again gets it, as any placement).
fn placed_from_list(payment: &Payment, order: Order, why: &str) -> Outcome {
    let charged = order.total_sell_price.unwrap_or(payment.asked.amount);
    let order_no = order.record.provider_order_no.to_string();
    let answer = serde_json::to_string(&Placed {
        order,
        balance_usd: None,
    })
    .ok();
    Outcome {
        stage: Stage::Charged,
        charged: Some(charged),
        status: Some(201),
        answer,
        order_no: Some(order_no),
        note: Some(format!("{why}; the order list shows it placed")),
        key_echoed: None,
    }
}

/// After the first sending of `payment` got an answer that does not tell (`answer`), or none:
/// the order list is asked at once. A refusal the contract documents as debiting nothing (400,
/// 402, 404, 429) that the list confirms releases it; an order of it in the list charges it;
/// anything else leaves it unknown, settled in the background, and the agent is told so.
pub(crate) async fn after_an_error(
    gateway: &Arc<Gateway>,
    payment: Payment,
    answer: Option<Relayed>,
) -> Result<Relayed, Refused> {
    let status = answer.as_ref().map(|a| a.status);
    let why = status.map_or_else(
        || "the API's answer was lost".to_string(),
        |s| format!("the API answered {s} after it was sent"),
    );
    // What the answer was, kept with whatever the order list decides.
    let answered = Outcome {
        status,
        answer: answer.as_ref().map(|a| String::from_utf8_lossy(&a.body).into_owned()),
        key_echoed: answer.as_ref().map(|a| a.key_echoed),
        ..Outcome::default()
    };
    match listed(gateway, &payment).await {
        Ok(Listed::Nothing) if matches!(status, Some(400 | 402 | 404 | 429)) => {
            let outcome = Outcome {
                stage: Stage::Released,
                note: Some(format!("{why}; the order list shows no order of it: not placed")),
                ..answered.clone()
            };
            record(gateway, &payment, outcome).await;
            if let Some(answer) = answer {
                return Ok(answer);
            }
        }
        Ok(Listed::One(order)) => {
            let outcome = placed_from_list(&payment, *order, &why);
            let body = outcome.answer.clone().unwrap_or_default();
            record(gateway, &payment, outcome).await;
            return Ok(Relayed {
                status: 201,
                content_type: Some("application/json".to_string()),
                body: body.into_bytes(),
                retry_after: None,
                key_echoed: false,
                replayed: false,
            });
        }
        Ok(_) | Err(_) => {}
    }
    let held = Outcome {
        stage: Stage::Unknown,
        note: Some(format!(
            "{why}: not known yet whether it was placed; held, being settled"
        )),
        ..answered
    };
    record(gateway, &payment, held).await;
    let id = payment.id.clone();
    let later = gateway.clone();
    tokio::spawn(async move { settle_later(&later, payment).await });
    Err(Refused::new(
        StatusCode::BAD_GATEWAY,
        format!(
            "Not known yet whether this payment was placed ({why}): the gateway is settling it from the order list (journal {id}), and its amount stays held against your cap. Do not pay again; send the same request with the same Idempotency-Key to learn its outcome."
        ),
    ))
}

/// Whether a payment may be resent under its key: the API has shown it honours keys (its last
/// answer to a payment echoed the key), and keeps them still (docs/api-contract.md: 24 hours;
/// an hour to spare).
async fn may_resend(gateway: &Gateway, payment: &Payment) -> Result<(), &'static str> {
    match gateway.store.api_honours_keys().await {
        _ if crate::now() - payment.asked_at > KEY_KEPT_SECS => Err("its key is older than the API keeps keys"),
        Ok(true) => Ok(()),
        Ok(false) => Err("the API has not shown that it honours idempotency keys"),
        Err(_) => Err("the store could not tell whether the API honours keys"),
    }
}

/// One try at settling a payment sent before: the order list first (an order of it there is
/// never sent again); where it shows none, a resend under its key (which the API answers with
/// what it did under that key, never a second charge) where the API honours keys, else the
/// list's word that it was not placed. `true` once settled, or left to a person with why.
async fn settle_once(gateway: &Gateway, payment: &Payment) -> bool {
    match listed(gateway, payment).await {
        Ok(Listed::One(order)) => {
            record(gateway, payment, placed_from_list(payment, *order, "settled")).await;
            true
        }
        Ok(Listed::Unclear(why)) => {
            let outcome = Outcome {
                stage: Stage::Unknown,
                note: Some(format!("{why}: left held for a person to check the order list")),
                ..Outcome::default()
            };
            record(gateway, payment, outcome).await;
            true
        }
        Ok(Listed::Nothing) => match may_resend(gateway, payment).await {
            Ok(()) => match sent(gateway, payment, Send::Again).await {
                Ok((_, stage)) => stage != Stage::Unknown,
                Err(e) => {
                    tracing::warn!(payment = %payment.id, "still not settled: {e}");
                    false
                }
            },
            Err(why) => {
                release(
                    gateway,
                    payment,
                    &format!("the order list shows no order of it (not resent: {why})"),
                    From::Sent,
                )
                .await;
                true
            }
        },
        Err(e) => {
            tracing::warn!(payment = %payment.id, "still not settled: {e}");
            false
        }
    }
}

/// A payment whose answer did not tell, settled in the background; held until then.
async fn settle_later(gateway: &Gateway, payment: Payment) {
    for attempt in 0..TRIES {
        tokio::time::sleep(Duration::from_secs(2u64.pow(attempt))).await;
        if settle_once(gateway, &payment).await {
            return;
        }
    }
}

/// At start, in the background (a replica serves at once): the payments an earlier run left
/// unfinished, as read before serving (so none of this run's). One never sent is released
/// (unless a replica sent it meanwhile); one sent is settled as any unknown one, each still
/// held against its caps until then.
pub(crate) async fn settle_unfinished(gateway: Arc<Gateway>, unfinished: Vec<Payment>) {
    for payment in unfinished {
        if payment.stage == Stage::Asked {
            release(&gateway, &payment, "the gateway stopped before sending it", From::Asked).await;
        } else {
            let gateway = gateway.clone();
            tokio::spawn(async move {
                if !settle_once(&gateway, &payment).await {
                    settle_later(&gateway, payment).await;
                }
            });
        }
    }
}

/// Before a seat pays: its charges past what was held must be confirmed by the order list
/// (one read of the newest orders), else it is refused until they are.
pub(crate) async fn drift_checked(gateway: &Gateway, agent: &str) -> Result<(), Refused> {
    let open = gateway
        .store
        .open_drifts(agent)
        .await
        .map_err(|e| Refused::new(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?;
    if open.is_empty() {
        return Ok(());
    }
    let query = OrderQuery {
        page: Some(1),
        page_size: Some(100),
        ..OrderQuery::default()
    };
    let listed = gateway.upstream.orders(&query).await.map(|p| p.orders);
    let mut disagree = Vec::new();
    for payment in &open {
        let agrees = listed.as_ref().is_ok_and(|orders| {
            orders.iter().any(|o| {
                Some(o.record.provider_order_no.as_str()) == payment.order_no.as_deref()
                    && o.total_sell_price == payment.charged
            })
        });
        if agrees && gateway.store.drift_agreed(&payment.id).await.is_ok() {
            continue;
        }
        disagree.push(payment.id.clone());
    }
    if disagree.is_empty() {
        return Ok(());
    }
    Err(Refused::new(
        StatusCode::CONFLICT,
        format!(
            "Payments of this seat were charged more than the gateway held (journal {}), and the order list does not confirm the charges yet: no payment until it does. Ask the team's admin to check the journal",
            disagree.join(", ")
        ),
    ))
}
