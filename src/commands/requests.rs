//! Payments an assistant proposes and a person decides: `propose` (the MCP seat's write
//! tools), `esimdash requests`, `esimdash approve ID`, `esimdash refuse ID`. A proposal checks
//! what a payment checks and writes a pending request (`esimdash_front::requests`); nothing
//! an assistant sends approves one. An approval checks the payment again, at this moment's
//! offer and price (another digest than the request's: refused, propose again), asks the
//! person (or `--yes`), writes the decision with an idempotency key and pays through the one
//! payment path, all under the account's request lock: approved twice at once, from two
//! processes, or again after a kill, it pays once.

use super::buying::{Quote, quote_order, quote_topup};
use super::{CommandError, Output};
use crate::cli::SpendArgs;
use crate::commands::output::outln;
use chrono::Utc;
use esimdash_api::{Client, PLACE_ORDER, Payment, Proposed, TOPUP};
use esimdash_domain::iccid::Iccid;
use esimdash_domain::purchase::{Purchase, Spend};
use esimdash_front::requests::{Decided, Decision, Proposal, Request, Requests, RequestsError, Standing};
use serde_json::json;

/// What an assistant asks to pay: a top-up for an eSIM, or new eSIMs of a plan.
pub(crate) struct Asked<'a> {
    pub iccid: Option<&'a Iccid>,
    pub slug: &'a str,
    pub qty: u32,
    pub reason: &'a str,
    pub by: &'a str,
}

/// The most eSIMs or top-ups one request may ask (as `topup --qty`).
pub(crate) const MOST_QTY: u32 = 10;

impl From<RequestsError> for CommandError {
    fn from(e: RequestsError) -> Self {
        match e {
            RequestsError::NotFound(_) => CommandError::NotFound(e.to_string()),
            RequestsError::Io { .. } => CommandError::Io(std::io::Error::other(e.to_string())),
            _ => CommandError::Refused(e.to_string()),
        }
    }
}

fn store(client: &Client) -> Result<Requests, CommandError> {
    Requests::of(client).ok_or_else(|| {
        CommandError::Usage(
            "requests are kept in the state folder, and this session has none (--demo keeps none either)".into(),
        )
    })
}

/// An assistant's proposal: checked as the payment would be (offered, priced, within the
/// balance and the seat's cap, not a repeat of one just paid), then written as a pending
/// request. What it answers: the request as a person will see it.
pub(crate) async fn propose(client: &Client, asked: &Asked<'_>) -> Result<serde_json::Value, CommandError> {
    client.ensure_writable(if asked.iccid.is_some() { TOPUP } else { PLACE_ORDER })?;
    if !(1..=MOST_QTY).contains(&asked.qty) {
        return Err(CommandError::Usage(format!(
            "a quantity is 1 to {MOST_QTY}, not {}",
            asked.qty
        )));
    }
    if asked.reason.trim().is_empty() {
        return Err(CommandError::Usage(
            "say why (reason): a person reads it before approving".into(),
        ));
    }
    let store = store(client)?;
    let quote = match asked.iccid {
        Some(iccid) => {
            let seen = None;
            quote_topup(client, iccid, asked.slug, asked.qty, seen).await?
        }
        None => quote_order(client, asked.slug, asked.qty).await?,
    };
    check_guards(client, &quote)?;
    let account = account(client)?;
    let now = Utc::now();
    let request = Proposal {
        account: &account,
        spend: &quote.spend,
        plan_name: &quote.plan.name,
        unit_price: quote.unit,
        total: quote.total,
        reason: asked.reason,
        proposed_by: asked.by,
    }
    .request(now);
    store.propose(&request, now)?;
    let mut value = request.json(&Standing::Pending);
    value["toApprove"] = json!(format!(
        "a person approves it with `esimdash approve {}` (or in the dashboard) before {}; nothing is paid until then",
        request.id,
        request.expires_at.to_rfc3339()
    ));
    if let Some(unsure) = quote.unsure {
        value["unsure"] = json!(unsure);
    }
    Ok(value)
}

/// The guards a payment meets after it is asked, met before a person is: the seat's cap at a
/// gateway, and the rule against paying the same twice within minutes.
fn check_guards(client: &Client, quote: &Quote) -> Result<(), CommandError> {
    if let Some(left) = client.seat().and_then(|s| s.left_today())
        && quote.total > left
    {
        return Err(CommandError::Refused(format!(
            "{} USD is more than the {} USD left of this seat's daily cap",
            esimdash_domain::money::format_amount(quote.total),
            esimdash_domain::money::format_amount(left)
        )));
    }
    if let Some(earlier) = client.would_repeat(&quote.spend) {
        return Err(CommandError::Refused(format!(
            "{earlier}: paying it again needs a person's explicit second confirmation, so it is not proposed"
        )));
    }
    Ok(())
}

/// The account's id, as the requests and the trail know it.
fn account(client: &Client) -> Result<String, CommandError> {
    client
        .state_place()
        .map(|(_, account)| account)
        .ok_or_else(|| CommandError::Usage("this session keeps no state folder".into()))
}

/// The request `id` where it stands now, as scripts and assistants read it.
pub(crate) fn status_json(client: &Client, id: &str) -> Result<serde_json::Value, CommandError> {
    let request = store(client)?.read(id)?;
    let records = records(client)?;
    Ok(request.json(&request.standing(&records, Utc::now())))
}

fn records(client: &Client) -> Result<Vec<esimdash_api::audit::PaymentRecord>, CommandError> {
    client.payment_records().map_err(CommandError::Refused)
}

/// `esimdash requests`, `approve ID` and `refuse ID`.
pub async fn run(command: &crate::cli::Command, client: &Client, output: &Output) -> Result<(), CommandError> {
    use crate::cli::Command;
    match command {
        Command::Approve { id, yes, again } => {
            let spend = SpendArgs {
                qty: 1,
                yes: *yes,
                again: *again,
            };
            approve(client, id, &spend, output).await
        }
        Command::Refuse { id, why } => refuse(client, id, why.as_deref(), output).await,
        Command::Requests { all } => list(client, *all, output).await,
        _ => Err(CommandError::Usage("not a request's command".into())),
    }
}

/// `esimdash requests`: the account's requests, waiting ones first (`--all`: decided and
/// expired ones too).
async fn list(client: &Client, all: bool, output: &Output) -> Result<(), CommandError> {
    let requests = store(client)?.list()?;
    let records = records(client)?;
    let now = Utc::now();
    let mut shown: Vec<(Request, Standing)> = requests
        .into_iter()
        .map(|r| {
            let standing = r.standing(&records, now);
            (r, standing)
        })
        .filter(|(_, s)| all || *s == Standing::Pending)
        .collect();
    shown.sort_by_key(|(_, s)| *s != Standing::Pending);
    if output.is_json() {
        let items: Vec<serde_json::Value> = shown.iter().map(|(r, s)| r.json(s)).collect();
        return output.print_json(&json!({ "requests": items }));
    }
    if shown.is_empty() {
        outln!(
            "No request {}.",
            if all { "kept" } else { "waits (--all: decided ones too)" }
        );
        return Ok(());
    }
    for (request, standing) in &shown {
        outln!(
            "{}  {}  until {}\n{}\n",
            request.id,
            standing.key(),
            request.expires_at.with_timezone(&chrono::Local).format("%H:%M"),
            request.summary()
        );
    }
    outln!("Approve with: esimdash approve ID   Refuse with: esimdash refuse ID");
    Ok(())
}

/// `esimdash refuse ID`: a pending request refused by this person, with why.
async fn refuse(client: &Client, id: &str, why: Option<&str>, output: &Output) -> Result<(), CommandError> {
    let store = store(client)?;
    let held = store.hold(patience(client)).await?;
    let request = store.read(id)?;
    let standing = request.standing(&records(client)?, Utc::now());
    if standing != Standing::Pending {
        return Err(decided_already(&request, &standing));
    }
    let decision = Decision {
        by: esimdash_api::audit::local_user(),
        at: Utc::now(),
        kind: Decided::Refused {
            why: why.map_or_else(
                || "refused by a person".to_string(),
                |w| esimdash_domain::text::sanitize(w).into_owned(),
            ),
        },
    };
    let decided = store.decide(&held, &request, decision)?;
    let standing = decided.standing(&[], Utc::now());
    if output.is_json() {
        return output.print_json(&decided.json(&standing));
    }
    outln!("Refused {}: nothing was paid.", decided.id);
    Ok(())
}

/// `esimdash approve ID`: checked again, asked, decided and paid once (see the module's text).
async fn approve(client: &Client, id: &str, spend_args: &SpendArgs, output: &Output) -> Result<(), CommandError> {
    let store = store(client)?;
    let nothing = |e: CommandError| e.nothing_moved("nothing was paid");
    let held = store.hold(patience(client)).await.map_err(|e| nothing(e.into()))?;
    let request = store.read(id).map_err(|e| nothing(e.into()))?;
    let spend = request.spend().map_err(|e| nothing(CommandError::Refused(e)))?;
    client
        .ensure_writable(if spend.what.iccid().is_some() {
            TOPUP
        } else {
            PLACE_ORDER
        })
        .map_err(|e| nothing(e.into()))?;
    // A payment sent and not settled (its approver was stopped mid-payment) is settled first,
    // under the account's lock: the trail then tells whether it was placed.
    let mut standing = request.standing(&records(client)?, Utc::now());
    if standing == Standing::Paying {
        client.settle_earlier().await;
        standing = request.standing(&records(client)?, Utc::now());
    }
    let key = match (&standing, &request.decision) {
        (Standing::Pending, _) => None,
        (
            Standing::ApprovedNotSent,
            Some(Decision {
                kind: Decided::Approved { key },
                ..
            }),
        ) => Some(key.clone()),
        _ => return Err(decided_already(&request, &standing)),
    };
    let quote = checked_again(client, &request, &spend).await;
    let quote = match quote {
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
            return Err(nothing(CommandError::Refused(format!(
                "request {}: {why}; it must be proposed again",
                request.id
            ))));
        }
        Err(Again::Failed(e)) => return Err(nothing(e)),
    };
    let question = format!("{}\n{}", request.summary(), quote.summary());
    super::buying::confirm(spend_args.yes, &question)
        .await
        .map_err(nothing)?;
    let resumed = key.is_some();
    let key = key.unwrap_or_else(|| Payment::new(spend.clone(), None).key);
    if !resumed {
        let decision = Decision {
            by: esimdash_api::audit::local_user(),
            at: Utc::now(),
            kind: Decided::Approved { key: key.clone() },
        };
        store.decide(&held, &request, decision)?;
    }
    let payment = Payment::with_key(spend, Some(quote.total), key).proposed(Proposed {
        id: request.id.clone(),
        by: request.proposed_by.clone(),
    });
    let payment = if spend_args.again { payment.again() } else { payment };
    let ready = super::buying::ready(client, quote, payment).await.map_err(nothing)?;
    // Confirmed above: the payment path asks nothing more (a repeat is refused in words, and
    // `approve ID --again` pays it).
    let confirmed = SpendArgs {
        qty: request.quantity,
        yes: true,
        again: spend_args.again,
    };
    let paid = super::buying::pay(client, ready, &confirmed, output).await;
    drop(held);
    paid
}

enum Again {
    /// The payment is not what was proposed any more: said in words.
    Changed(String),
    Failed(CommandError),
}

/// The request's payment checked as it would be paid now, and held to its digest.
async fn checked_again(client: &Client, request: &Request, spend: &Spend) -> Result<Quote, Again> {
    if request.standing(&[], Utc::now()) == Standing::Expired {
        return Err(Again::Failed(CommandError::Refused(format!(
            "request {} expired at {}: it must be proposed again",
            request.id,
            request.expires_at.with_timezone(&chrono::Local).format("%H:%M")
        ))));
    }
    let quote = match &spend.what {
        Purchase::Topup { iccid } => quote_topup(client, iccid, &spend.slug, spend.qty, None).await,
        Purchase::Order => quote_order(client, &spend.slug, spend.qty).await,
    };
    let quote = quote.map_err(|e| match e {
        CommandError::Usage(why) | CommandError::Refused(why) => Again::Changed(why),
        CommandError::CannotTakeData { message, .. } => Again::Changed(message),
        other => Again::Failed(other),
    })?;
    let account = account(client).map_err(Again::Failed)?;
    if esimdash_front::requests::digest(&account, &quote.spend, quote.total) != request.digest {
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

/// A request decided already (or expired): what became of it, refused as a second decision.
fn decided_already(request: &Request, standing: &Standing) -> CommandError {
    let by = request
        .decision
        .as_ref()
        .map(|d| format!(" by {} at {}", d.by, d.at.with_timezone(&chrono::Local).format("%H:%M")))
        .unwrap_or_default();
    let what = match standing {
        Standing::Expired => format!(
            "expired at {}",
            request.expires_at.with_timezone(&chrono::Local).format("%H:%M")
        ),
        Standing::Refused { why } => format!("was refused{by}: {why}"),
        Standing::Paid { order_no } => format!("was approved{by} and paid: order {order_no}"),
        Standing::NotPlaced => format!("was approved{by}, and the API refused its payment"),
        Standing::Paying => format!("was approved{by} and its payment has no answer yet"),
        Standing::Unknown { why } => format!("was approved{by}: {why}"),
        Standing::Pending | Standing::ApprovedNotSent => "waits".to_string(),
    };
    CommandError::Refused(format!("request {} {what}: nothing was paid now", request.id))
}

/// How long a decision waits for another process deciding one of the account's requests: as
/// long as its payment may take.
fn patience(client: &Client) -> std::time::Duration {
    client.request_timeout() * 3 + std::time::Duration::from_secs(10)
}
