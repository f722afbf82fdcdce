//! A person's decision on a request, the one way for the command line and the dashboard: under
//! the account's request lock, the request read again, a payment its approver left mid-way
//! settled first, the payment checked again at this moment's offer and price and held to the
//! request's digest (else the request is refused, in words the assistant reads), the decision
//! written with an idempotency key, and the payment sent once through the client's payment
//! path (account lock, repeat rule, journal, trail with the request and its proposer). A second
//! approval (at once, from another process, or after a kill) finds it decided and pays nothing.

use super::{Decided, Decision, Request, Requests, RequestsError, Standing, decided_already};
use crate::quote::{Quote, QuoteError};
use chrono::Utc;
use esimdash_api::{ApiError, Client, PLACE_ORDER, Paid, Payment, Proposed, TOPUP};
use esimdash_domain::order_no::OrderNo;
use std::collections::HashSet;

/// An approval that reached the payment: what was paid for and what the client answered (a
/// lost answer is for the caller to look up with `before`).
pub struct Approval {
    pub request: Request,
    pub quote: Quote,
    pub payment: Payment,
    pub before: HashSet<OrderNo>,
    pub answer: Result<Paid, ApiError>,
}

/// Why nothing was paid.
#[derive(Debug, thiserror::Error)]
pub enum ApproveError {
    #[error(transparent)]
    Requests(#[from] RequestsError),
    #[error(transparent)]
    Api(#[from] ApiError),
    /// The payment could not be checked now (the network, the API): the request still waits.
    #[error(transparent)]
    Quote(QuoteError),
    /// Decided already, expired, or no longer what was proposed (refused now): in words.
    #[error("{0}")]
    Refused(String),
}

/// A request as the dashboard lists it: where it stands, and its eSIM's state in words where
/// it was read.
#[derive(Debug, Clone, PartialEq)]
pub struct Listed {
    pub request: Request,
    pub standing: Standing,
    pub esim: Option<String>,
}

/// The waiting top-ups whose eSIM is read for the list (one request each): a person deciding
/// sees its state; the rest say so when chosen on the command line.
const MOST_LOOKED_UP: usize = 10;

/// The account's requests, waiting ones first, each waiting top-up with its eSIM's state in
/// words (`verdict`: "in use, 82 % used…"), read now.
pub async fn listed(client: &Client, place: &Place) -> Result<Vec<Listed>, ApproveError> {
    let mut rows: Vec<Listed> = standings(client, place)
        .await?
        .into_iter()
        .map(|(request, standing)| Listed {
            request,
            standing,
            esim: None,
        })
        .collect();
    rows.sort_by_key(|r| r.standing != Standing::Pending);
    let now = Utc::now();
    for row in rows
        .iter_mut()
        .filter(|r| r.standing == Standing::Pending)
        .take(MOST_LOOKED_UP)
    {
        let Some(Ok(iccid)) = row.request.iccid.as_deref().map(esimdash_domain::iccid::Iccid::parse) else {
            continue;
        };
        row.esim = Some(match client.find_esim_at(&iccid, None).await {
            Ok(esimdash_api::Found::Esim(esim)) => {
                let verdict = crate::format::verdict::of(&esim, now);
                format!("{}: {}", verdict.label, verdict.summary)
            }
            Ok(_) => "not found in this account now".to_string(),
            Err(e) => format!("its state could not be read ({e})"),
        });
    }
    Ok(rows)
}

/// Where the account's requests are kept: this machine's state folder, or (for a seat at a team
/// gateway) the gateway, so that another seat decides them.
#[derive(Debug, Clone)]
pub enum Place {
    Here(Requests),
    Gateway,
}

/// Where the client's account keeps its requests: at the gateway when the session is a
/// gateway's seat (its answers say so: one is read if none came yet), else in the state folder.
pub async fn place_of(client: &Client) -> Result<Place, ApproveError> {
    let at_gateway = match client.at_gateway() {
        Some(known) => known,
        None => {
            client.profile().await?;
            client.seat().is_some()
        }
    };
    if at_gateway {
        return Ok(Place::Gateway);
    }
    store_of(client).map(Place::Here)
}

/// The account's requests and where each stands, newest first.
pub async fn standings(client: &Client, place: &Place) -> Result<Vec<(Request, Standing)>, ApproveError> {
    let store = match place {
        Place::Gateway => {
            let kept = client.kept_requests(None).await?;
            return Ok(kept.into_iter().map(|k| (k.request, k.standing)).collect());
        }
        Place::Here(store) => store,
    };
    let records = records(client)?;
    let now = Utc::now();
    Ok(store
        .list()?
        .into_iter()
        .map(|r| {
            let standing = r.standing(&records, now);
            (r, standing)
        })
        .collect())
}

fn records(client: &Client) -> Result<Vec<esimdash_api::audit::PaymentRecord>, ApproveError> {
    client.payment_records().map_err(ApproveError::Refused)
}

/// How long a decision waits for another process deciding one of the account's requests: as
/// long as its payment may take.
fn patience(client: &Client) -> std::time::Duration {
    client.request_timeout() * 3 + std::time::Duration::from_secs(10)
}

/// Request `id` and where it stands now.
pub async fn read(client: &Client, place: &Place, id: &str) -> Result<(Request, Standing), ApproveError> {
    match place {
        Place::Here(store) => {
            let request = store.read(id)?;
            let standing = request.standing(&records(client)?, Utc::now());
            Ok((request, standing))
        }
        Place::Gateway => {
            let kept = client.kept_requests(Some(id)).await.map_err(|e| match e.status() {
                Some(404) => ApproveError::Requests(RequestsError::NotFound(
                    esimdash_domain::text::sanitize(id).into_owned(),
                )),
                _ => ApproveError::Api(e),
            })?;
            let kept = kept
                .into_iter()
                .find(|k| k.request.id == id)
                .ok_or_else(|| RequestsError::NotFound(esimdash_domain::text::sanitize(id).into_owned()))?;
            Ok((kept.request, kept.standing))
        }
    }
}

/// Approves request `id` as `approver` and pays it once (see the module's text); `again`: the
/// person confirmed paying the same as a payment minutes ago. At a gateway, the gateway checks
/// and decides: the payment names the request, and the gateway pays it as the proposing seat.
pub async fn approve(
    client: &Client,
    place: &Place,
    id: &str,
    approver: &str,
    again: bool,
) -> Result<Approval, ApproveError> {
    let store = match place {
        Place::Here(store) => store,
        Place::Gateway => return approve_at_gateway(client, id, again).await,
    };
    let held = store.hold(patience(client)).await?;
    let request = store.read(id)?;
    let spend = request.spend().map_err(ApproveError::Refused)?;
    client.ensure_writable(if spend.what.iccid().is_some() {
        TOPUP
    } else {
        PLACE_ORDER
    })?;
    // A payment sent and not settled (its approver was stopped mid-payment) is settled first,
    // under the account's lock: the trail then tells whether it was placed.
    let mut standing = request.standing(&records(client)?, Utc::now());
    if standing == Standing::Paying {
        client.settle_earlier().await;
        standing = request.standing(&records(client)?, Utc::now());
    }
    let resumed = match (&standing, &request.decision) {
        (Standing::Pending, _) => None,
        (
            Standing::ApprovedNotSent,
            Some(Decision {
                kind: Decided::Approved { key },
                ..
            }),
        ) => Some(key.clone()),
        _ => return Err(ApproveError::Refused(decided_already(&request, &standing))),
    };
    let quote = match checked_again(client, store, &request, &spend).await {
        Ok(quote) => quote,
        Err(Again::Changed(why)) => {
            // Re-priced or no longer offered: this request can never be paid; said to the
            // assistant too (`request_status`).
            let decision = Decision {
                by: "esimdash".to_string(),
                at: Utc::now(),
                kind: Decided::Refused { why: why.clone() },
            };
            store.decide(&held, &request, decision)?;
            return Err(ApproveError::Refused(format!(
                "request {}: {why}; it must be proposed again",
                request.id
            )));
        }
        Err(Again::Failed(e)) => return Err(e),
    };
    let key = match resumed {
        Some(key) => key,
        None => {
            let key = esimdash_api::fresh_key();
            let decision = Decision {
                by: approver.to_string(),
                at: Utc::now(),
                kind: Decided::Approved { key: key.clone() },
            };
            store.decide(&held, &request, decision)?;
            key
        }
    };
    let approval = pay(client, request, quote, (key, false), again).await;
    drop(held);
    approval
}

/// Pays an approved request once, under `key` (`at_gateway`: the payment names the request to
/// the team's gateway), after reading the plan's orders before it (a lost answer is looked up
/// among the new ones).
async fn pay(
    client: &Client,
    request: Request,
    quote: Quote,
    (key, at_gateway): (String, bool),
    again: bool,
) -> Result<Approval, ApproveError> {
    let spend = quote.spend.clone();
    let before: HashSet<OrderNo> = client
        .recent_orders_for(&quote.plan.slug, spend.what.iccid())
        .await?
        .into_iter()
        .map(|o| o.record.provider_order_no)
        .collect();
    let payment = Payment::with_key(spend, Some(quote.total), key)
        .proposed(Proposed {
            id: request.id.clone(),
            by: request.proposed_by.clone(),
            at_gateway,
        })
        .with_balance_before(quote.balance)
        .with_orders_before(&before);
    let payment = if again { payment.again() } else { payment };
    let answer = client.pay(&payment).await;
    Ok(Approval {
        request,
        quote,
        payment,
        before,
        answer,
    })
}

/// A request kept at the gateway, approved: checked here as far as the person is told (the
/// offer, the price), then paid naming the request; the gateway holds it to its digest.
async fn approve_at_gateway(client: &Client, id: &str, again: bool) -> Result<Approval, ApproveError> {
    let (request, standing) = read(client, &Place::Gateway, id).await?;
    if !matches!(standing, Standing::Pending | Standing::ApprovedNotSent) {
        return Err(ApproveError::Refused(decided_already(&request, &standing)));
    }
    let spend = request.spend().map_err(ApproveError::Refused)?;
    let quote = crate::quote::of(client, &spend).await.map_err(|e| match e {
        QuoteError::Api(e) => ApproveError::Quote(QuoteError::Api(e)),
        other => ApproveError::Refused(format!("request {id}: {other}: nothing was paid")),
    })?;
    pay(client, request, quote, (esimdash_api::fresh_key(), true), again).await
}

/// Refuses request `id` as `by`, saying `why`.
pub async fn refuse(client: &Client, place: &Place, id: &str, by: &str, why: &str) -> Result<Request, ApproveError> {
    let store = match place {
        Place::Here(store) => store,
        Place::Gateway => {
            let kept = client
                .refuse_kept(id, why)
                .await
                .map_err(|e| match (e.status(), e.server_message()) {
                    (Some(404 | 409 | 403), Some(words)) => ApproveError::Refused(words.to_string()),
                    _ => ApproveError::Api(e),
                })?;
            return Ok(kept.request);
        }
    };
    let held = store.hold(patience(client)).await?;
    let request = store.read(id)?;
    let standing = request.standing(&records(client)?, Utc::now());
    if standing != Standing::Pending {
        return Err(ApproveError::Refused(decided_already(&request, &standing)));
    }
    let decision = Decision {
        by: by.to_string(),
        at: Utc::now(),
        kind: Decided::Refused {
            why: esimdash_domain::text::sanitize(why).into_owned(),
        },
    };
    Ok(store.decide(&held, &request, decision)?)
}

enum Again {
    /// The payment is not what was proposed any more: said in words.
    Changed(String),
    Failed(ApproveError),
}

/// The request's payment checked as it would be paid now, and held to its digest.
async fn checked_again(
    client: &Client,
    store: &Requests,
    request: &Request,
    spend: &esimdash_domain::purchase::Spend,
) -> Result<Quote, Again> {
    if request.standing(&[], Utc::now()) == Standing::Expired {
        return Err(Again::Failed(ApproveError::Refused(decided_already(
            request,
            &Standing::Expired,
        ))));
    }
    let quote = crate::quote::of(client, spend).await.map_err(|e| match e {
        QuoteError::Api(e) => Again::Failed(ApproveError::Quote(QuoteError::Api(e))),
        other => Again::Changed(other.to_string()),
    })?;
    if super::digest(store.account(), &quote.spend, quote.total) != request.digest {
        let now = esimdash_domain::money::format_amount(quote.total);
        let then = esimdash_domain::money::format_amount(request.total);
        return Err(Again::Changed(if now == then {
            "it is not what was proposed (the request's digest does not match)".to_string()
        } else {
            format!("the price changed since it was proposed: {then} USD then, {now} USD now")
        }));
    }
    Ok(quote)
}

/// What a decision came to, in words for the dashboard.
#[derive(Debug, Clone, PartialEq)]
pub struct Told {
    pub text: String,
    /// Done as asked (refused, or approved and paid); `false`: nothing was paid, or the
    /// outcome is not known.
    pub ok: bool,
    /// Money moved: the balance the answer gave, if it did.
    pub paid: Option<Option<rust_decimal::Decimal>>,
}

impl Told {
    fn not(text: String) -> Told {
        Told {
            text,
            ok: false,
            paid: None,
        }
    }
}

/// The requests of the client's account as the dashboard lists them (`listed`).
pub async fn listed_of(client: &Client) -> Result<Vec<Listed>, ApproveError> {
    listed(client, &place_of(client).await?).await
}

/// The client's account's requests, where the session keeps a state folder.
pub fn store_of(client: &Client) -> Result<Requests, ApproveError> {
    Requests::of(client).ok_or_else(|| {
        ApproveError::Refused("requests are kept in the state folder, and this session has none".to_string())
    })
}

/// Approves (and pays) or refuses request `id` as this machine's user, told in words as the
/// dashboard shows it: the order placed, a lost answer looked up, or why nothing was paid.
pub async fn decide(client: &Client, id: &str, approve: bool) -> Told {
    let place = match place_of(client).await {
        Ok(place) => place,
        Err(e) => return Told::not(e.to_string()),
    };
    let user = esimdash_api::audit::local_user();
    if !approve {
        return match refuse(client, &place, id, &user, "refused by a person in the dashboard").await {
            Ok(request) => Told {
                text: format!("Refused {}: nothing was paid.", request.id),
                ok: true,
                paid: None,
            },
            Err(e) => Told::not(e.to_string()),
        };
    }
    let approved = match self::approve(client, &place, id, &user, false).await {
        Ok(approved) => approved,
        Err(ApproveError::Refused(why)) => return Told::not(why),
        Err(e) => return Told::not(format!("{e}: nothing was paid")),
    };
    told(client, approved).await
}

/// What became of an approval's payment, in words.
async fn told(client: &Client, approved: Approval) -> Told {
    let id = &approved.request.id;
    match approved.answer {
        Ok(paid) => Told {
            text: format!(
                "Approved and paid {id}: order {} ({} USD).{}",
                paid.placed.order.record.provider_order_no,
                esimdash_domain::money::format_amount(approved.quote.total),
                paid.charged_other
                    .as_ref()
                    .map_or_else(String::new, |o| format!(" {}", o.sentence()))
            ),
            ok: paid.charged_other.is_none(),
            paid: Some(paid.placed.balance_usd),
        },
        Err(error) if error.outcome_unknown() => {
            match client.look_up_payment(&approved.payment, &approved.before).await {
                Ok(Some(order)) => Told {
                    text: format!(
                        "Approved {id}: no answer came, and the order list shows it placed: order {}.",
                        order.record.provider_order_no
                    ),
                    ok: true,
                    paid: Some(None),
                },
                Ok(None) => Told::not(format!(
                    "Approved {id}: no answer came ({error}), and the order list shows no such order: most likely not placed. Check Orders before proposing it again."
                )),
                Err(lookup) => Told::not(format!(
                    "Approved {id}: no answer came ({error}) and the order list could not be read ({lookup}): it may or may not have been placed. Check Orders."
                )),
            }
        }
        Err(error @ ApiError::Repeat { .. }) => Told::not(format!(
            "Not paid: {error}. If it is meant, pay it a second time with `esimdash approve {id} --again`."
        )),
        Err(error @ ApiError::Api { .. }) => Told::not(crate::purchase::explain(&error, &approved.payment.spend.what)),
        Err(error) => Told::not(format!("{error}: nothing was paid")),
    }
}
