//! Requests kept for the team: an assistant working through a seat proposes a payment, any
//! seat reads it, and another seat that may pay approves it (never the proposing one). The
//! approval is a payment sent with the request's id (`REQUEST_HEADER`): checked against the
//! request and its digest at this moment's price, the decision written over the request as it
//! was read (of two at once, one wins), then paid through `payments::pay` as the *proposing*
//! seat, so its role and daily cap hold, under a key of the request's own: approved again,
//! resent or settled, the request is one payment in the journal. No HTTP here.

use crate::agents::Agent;
use crate::payments::{self, Asking};
use crate::refused::Refused;
use crate::sending::Kind;
use crate::state::Gateway;
use crate::store::{KeptRequest, Stage, Times};
use chrono::{DateTime, Utc};
use esimdash_api::relay::Relayed;
use esimdash_api::requests::{
    self, Decided, Decision, Kept, MOST_PENDING, MOST_REASON, Proposal, Request, Standing, decided_already,
};
use esimdash_domain::iccid::Iccid;
use esimdash_domain::money::format_amount;
use esimdash_domain::purchase::Spend;
use http::StatusCode;
use std::sync::Arc;

/// The most requests a listing gives (the newest).
const MOST_LISTED: usize = 500;

/// The journal key a request's payment is sent under, whoever approves it and however often.
fn payment_key(id: &str) -> String {
    format!("esimdash-request-{id}")
}

fn kind_of(action: &str) -> Result<Kind, Refused> {
    match action {
        "topup" => Ok(Kind::Topup),
        "order" => Ok(Kind::Order),
        _ => Err(Refused::bad_request("action must be topup or order")),
    }
}

/// `POST /gateway/requests`: a seat that may pay proposes a payment; the gateway prices it,
/// holds it to what is left of the seat's cap and keeps it for another seat to decide.
pub(crate) async fn propose(gateway: &Gateway, agent: &Agent, body: &[u8]) -> Result<Kept, Refused> {
    let asking: requests::Asking =
        serde_json::from_slice(body).map_err(|e| Refused::bad_request(format!("not a request to keep: {e}")))?;
    let kind = kind_of(&asking.action)?;
    if let Some(refused) = payments::role_refusal(gateway, agent, kind) {
        return Err(refused);
    }
    if !(1..=10).contains(&asking.quantity) {
        return Err(Refused::bad_request("quantity must be a whole number from 1 to 10"));
    }
    if asking.reason.trim().is_empty() {
        return Err(Refused::bad_request(
            "say why (reason): a person reads it before approving",
        ));
    }
    let spend = match (kind, asking.iccid.as_deref()) {
        (Kind::Topup, Some(iccid)) => Spend::topup(
            Iccid::parse(iccid).map_err(|_| Refused::new(StatusCode::NOT_FOUND, "eSIM not found"))?,
            &asking.slug,
            asking.quantity,
        ),
        (Kind::Order, None) => Spend::order(&asking.slug, asking.quantity),
        _ => return Err(Refused::bad_request("a top-up names an eSIM (iccid), an order none")),
    };
    let unit = payments::price(gateway, spend.what.iccid(), &spend.slug).await?;
    let total = unit * rust_decimal::Decimal::from(asking.quantity);
    if let Some(left) = gateway.seat(agent).await.and_then(|s| s.left)
        && total > left
    {
        return Err(Refused::new(
            StatusCode::FORBIDDEN,
            format!(
                "{} USD is more than the {} USD left of seat {}'s daily cap today: not proposed",
                format_amount(total),
                format_amount(left),
                agent.name
            ),
        ));
    }
    let now = Utc::now();
    let by = format!(
        "{} (seat {})",
        asking.proposed_by.chars().take(MOST_REASON).collect::<String>(),
        agent.name
    );
    let request = Proposal {
        account: &gateway.settings.account,
        spend: &spend,
        plan_name: &asking.plan_name.chars().take(MOST_REASON).collect::<String>(),
        unit_price: unit,
        total,
        reason: &asking.reason,
        proposed_by: &by,
        unsure: asking.unsure.as_deref(),
    }
    .request(now);
    let kept = KeptRequest {
        seat: agent.name.clone(),
        body: text(&request)?,
    };
    let times = Times {
        now: now.timestamp(),
        expires_at: request.expires_at.timestamp(),
    };
    match gateway.store.keep_request(&request.id, kept, times, MOST_PENDING).await {
        Err(e) => Err(Refused::store(&e)),
        // A conflict with the requests waiting, not a rate: 429 would read as "wait and retry".
        Ok(Err(_)) => Err(Refused::new(
            StatusCode::CONFLICT,
            format!("{MOST_PENDING} requests wait for a person already: approve or refuse them first"),
        )),
        Ok(Ok(())) => Ok(Kept {
            request,
            standing: Standing::Pending,
            seat: agent.name.clone(),
        }),
    }
}

fn text(request: &Request) -> Result<String, Refused> {
    serde_json::to_string(request).map_err(|e| Refused::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()))
}

/// A kept request read back; one the gateway cannot read is refused, never paid.
fn parsed(kept: &KeptRequest) -> Result<Request, Refused> {
    serde_json::from_str(&kept.body).map_err(|_| {
        Refused::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "A request in the gateway's store is not one it wrote: nothing was paid",
        )
    })
}

/// Where a request stands: its decision, and its payment as the journal tells it.
async fn standing(gateway: &Gateway, seat: &str, request: &Request, now: DateTime<Utc>) -> Result<Standing, Refused> {
    let Some(Decision {
        kind: Decided::Approved { .. },
        ..
    }) = &request.decision
    else {
        return Ok(request.standing(&[], now));
    };
    let payment = gateway
        .store
        .payment_by_key(seat, &payment_key(&request.id))
        .await
        .map_err(|e| Refused::store(&e))?;
    Ok(match payment {
        None => Standing::ApprovedNotSent,
        Some(p) => match p.stage {
            Stage::Asked | Stage::Sent => Standing::Paying,
            Stage::Charged => Standing::Paid {
                order_no: p.order_no.unwrap_or_default(),
            },
            Stage::Released => Standing::NotPlaced,
            Stage::Unknown => Standing::Unknown {
                why: format!(
                    "its answer was lost; the gateway settles it from the order list (journal {})",
                    p.id
                ),
            },
        },
    })
}

async fn kept(gateway: &Gateway, kept: KeptRequest, now: DateTime<Utc>) -> Result<Kept, Refused> {
    let request = parsed(&kept)?;
    let standing = standing(gateway, &kept.seat, &request, now).await?;
    Ok(Kept {
        request,
        standing,
        seat: kept.seat,
    })
}

async fn read(gateway: &Gateway, id: &str) -> Result<KeptRequest, Refused> {
    if !requests::is_id(id) {
        return Err(no_request());
    }
    gateway
        .store
        .request(id)
        .await
        .map_err(|e| Refused::store(&e))?
        .ok_or_else(no_request)
}

fn no_request() -> Refused {
    Refused::new(StatusCode::NOT_FOUND, "No such request at this gateway")
}

/// `GET /gateway/requests`: the team's requests, newest first.
pub(crate) async fn list(gateway: &Gateway) -> Result<Vec<Kept>, Refused> {
    let now = Utc::now();
    let mut listed = Vec::new();
    for row in gateway
        .store
        .requests(MOST_LISTED)
        .await
        .map_err(|e| Refused::store(&e))?
    {
        match kept(gateway, row, now).await {
            Ok(k) => listed.push(k),
            Err(e) if e.status == StatusCode::INTERNAL_SERVER_ERROR => tracing::warn!("a request skipped"),
            Err(e) => return Err(e),
        }
    }
    Ok(listed)
}

/// `GET /gateway/requests/{id}`.
pub(crate) async fn one(gateway: &Gateway, id: &str) -> Result<Kept, Refused> {
    kept(gateway, read(gateway, id).await?, Utc::now()).await
}

/// `POST /gateway/requests/{id}/refuse`: by a seat that may pay for it, or the proposing seat
/// withdrawing it.
pub(crate) async fn refuse(gateway: &Gateway, agent: &Agent, id: &str, why: &str) -> Result<Kept, Refused> {
    let row = read(gateway, id).await?;
    let request = parsed(&row)?;
    let kind = kind_of(&request.action)?;
    if row.seat != agent.name
        && let Some(refused) = payments::role_refusal(gateway, agent, kind)
    {
        return Err(refused);
    }
    let now = Utc::now();
    let standing = standing(gateway, &row.seat, &request, now).await?;
    if standing != Standing::Pending {
        return Err(Refused::new(StatusCode::CONFLICT, decided_already(&request, &standing)));
    }
    let why = esimdash_domain::text::sanitize(why)
        .chars()
        .take(MOST_REASON)
        .collect::<String>();
    write_decision(gateway, &row, &request, agent, Decided::Refused { why }).await?;
    one(gateway, id).await
}

/// Writes `decided` over the request as it was read; another seat's decision written first
/// is said in words.
async fn write_decision(
    gateway: &Gateway,
    row: &KeptRequest,
    request: &Request,
    by: &Agent,
    decided: Decided,
) -> Result<(), Refused> {
    let decision = Decision {
        by: format!("seat {}", by.name),
        at: Utc::now(),
        kind: decided,
    };
    let after = Request {
        decision: Some(decision),
        ..request.clone()
    };
    let written = gateway
        .store
        .decide_request(&request.id, &row.body, text(&after)?)
        .await
        .map_err(|e| Refused::store(&e))?;
    if written {
        return Ok(());
    }
    let now = one(gateway, &request.id).await?;
    Err(Refused::new(
        StatusCode::CONFLICT,
        decided_already(&now.request, &now.standing),
    ))
}

/// A payment that names a request (`REQUEST_HEADER`): the approving seat's, checked against
/// the request, then paid as the proposing seat (see the module's text).
pub(crate) async fn approve(
    gateway: &Arc<Gateway>,
    approver: &Agent,
    id: &str,
    asking: Asking<'_>,
) -> Result<Relayed, Refused> {
    let row = read(gateway, id).await?;
    let request = parsed(&row)?;
    if row.seat == approver.name {
        return Err(Refused::new(
            StatusCode::FORBIDDEN,
            format!(
                "seat {} proposed request {id} and cannot approve it: another seat that may pay does. Nothing was paid",
                approver.name
            ),
        ));
    }
    if let Some(refused) = payments::role_refusal(gateway, approver, asking.kind) {
        return Err(refused);
    }
    let asked = payments::Request::read(asking.kind, asking.body)?;
    let spend = request.spend().map_err(Refused::bad_request)?;
    if asking.kind.name() != request.action
        || asked.iccid.as_ref() != spend.what.iccid()
        || asked.slug != request.slug
        || asked.qty != request.quantity
    {
        return Err(Refused::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("this payment is not what request {id} proposed: nothing was paid"),
        ));
    }
    // Paid as the proposing seat: one revoked since pays nothing, and nothing is decided.
    let proposer = gateway
        .store
        .agent_by_name(&row.seat)
        .await
        .map_err(|e| Refused::store(&e))?
        .filter(|a| !a.is_revoked())
        .ok_or_else(|| {
            Refused::new(
                StatusCode::FORBIDDEN,
                format!(
                    "the seat that proposed request {id} ({}) is revoked: nothing was paid",
                    row.seat
                ),
            )
        })?;
    let now = Utc::now();
    let standing = standing(gateway, &row.seat, &request, now).await?;
    let resumed = matches!(
        &request.decision,
        Some(Decision { by, kind: Decided::Approved { .. }, .. }) if *by == format!("seat {}", approver.name)
    ) && matches!(standing, Standing::ApprovedNotSent | Standing::Paying);
    if !resumed {
        if standing != Standing::Pending {
            return Err(Refused::new(StatusCode::CONFLICT, decided_already(&request, &standing)));
        }
        let unit = payments::price(gateway, spend.what.iccid(), &spend.slug).await?;
        let total = unit * rust_decimal::Decimal::from(request.quantity);
        if requests::digest(&gateway.settings.account, &spend, total) != request.digest {
            let why = format!(
                "the price changed since it was proposed: {} USD then, {} USD now",
                format_amount(request.total),
                format_amount(total)
            );
            write_decision(gateway, &row, &request, approver, Decided::Refused { why: why.clone() }).await?;
            return Err(Refused::new(
                StatusCode::CONFLICT,
                format!("request {id}: {why}; it must be proposed again. Nothing was paid"),
            ));
        }
        let key = payment_key(id);
        write_decision(gateway, &row, &request, approver, Decided::Approved { key }).await?;
    }
    let key = payment_key(id);
    let paying = Asking {
        key: Some(&key),
        approved_price: Some(request.unit_price),
        ..asking
    };
    payments::pay(gateway, &proposer, paying).await
}
