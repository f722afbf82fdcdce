//! Sending a journalled payment under its own key, and what the answer tells of it: a
//! placement, a refusal of a resend, or nothing (the order list is then asked, `settling`).

use crate::state::Gateway;
use crate::store::{From, Outcome, Payment, Stage};
use esimdash_api::model::Placed;
use esimdash_api::relay::Relayed;
use esimdash_api::{ApiError, Endpoint, PLACE_ORDER, TOPUP};
use esimdash_domain::money::format_amount;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Topup,
    Order,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Topup => "topup",
            Kind::Order => "order",
        }
    }

    fn endpoint(kind: &str) -> Endpoint {
        if kind == "order" { PLACE_ORDER } else { TOPUP }
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
        record(gateway, payment, outcome).await;
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

/// Records what became of a payment, and says a charge past what was held.
pub(crate) async fn record(gateway: &Gateway, payment: &Payment, mut outcome: Outcome) {
    if outcome.over_held(payment) {
        let charged = outcome.charged.unwrap_or_default();
        let said = format!(
            "charged {} USD, {} more than the {} held (the price read before paying): the seat pays nothing more until the order list confirms the charge",
            format_amount(charged),
            format_amount(charged - payment.asked.amount),
            format_amount(payment.asked.amount)
        );
        tracing::warn!(payment = %payment.id, agent = %payment.asked.agent, "{said}");
        gateway.counters.over_held(&payment.asked.agent);
        outcome.note = Some(match outcome.note.take() {
            Some(note) => format!("{note}; {said}"),
            None => said,
        });
    }
    match gateway.store.settle(payment, outcome, crate::now(), From::Sent).await {
        Ok(true) => {}
        Ok(false) => tracing::info!(payment = %payment.id, "settled meanwhile (another replica): left as it is"),
        Err(e) => tracing::error!(payment = %payment.id, "the outcome of a payment was not journalled: {e}"),
    }
}

pub(crate) async fn release(gateway: &Gateway, payment: &Payment, why: &str, from: From) {
    let outcome = Outcome {
        stage: Stage::Released,
        note: Some(why.to_string()),
        ..Outcome::default()
    };
    if let Err(e) = gateway.store.settle(payment, outcome, crate::now(), from).await {
        tracing::error!(payment = %payment.id, "a payment's release was not journalled: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Asked;
    use rust_decimal::Decimal;

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
