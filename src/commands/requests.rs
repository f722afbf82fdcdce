//! Payments an assistant proposes and a person decides: `propose` (the MCP seat's write
//! tools), `esimdash requests`, `esimdash approve ID`, `esimdash refuse ID`. A proposal checks
//! what a payment checks and writes a pending request (`esimdash_front::requests`); nothing
//! an assistant sends approves one. A decision is made by `requests::approval`, as the
//! dashboard makes it: here the person is asked first, and what became of the payment is told.

use super::{CommandError, Output};
use crate::commands::output::outln;
use chrono::Utc;
use esimdash_api::{Client, PLACE_ORDER, TOPUP};
use esimdash_domain::iccid::Iccid;
use esimdash_domain::purchase::Purchase;
use esimdash_front::quote::{self, Quote};
use esimdash_front::requests::approval::{self, ApproveError, Place};
use esimdash_front::requests::{Proposal, Request, Requests, RequestsError, Standing};
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

impl From<ApproveError> for CommandError {
    fn from(e: ApproveError) -> Self {
        match e {
            ApproveError::Requests(e) => e.into(),
            ApproveError::Api(e) => CommandError::Api(e),
            ApproveError::Quote(e) => e.into(),
            ApproveError::Refused(why) => CommandError::Refused(why),
        }
    }
}

/// Where the account's requests are kept (the state folder, or the team's gateway).
async fn place(client: &Client) -> Result<Place, CommandError> {
    approval::place_of(client).await.map_err(|e| match e {
        ApproveError::Refused(why) => CommandError::Usage(why),
        other => other.into(),
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
    let place = place(client).await?;
    let quote = match asked.iccid {
        Some(iccid) => quote::topup(client, iccid, asked.slug, asked.qty, None).await?,
        None => quote::order(client, asked.slug, asked.qty).await?,
    };
    check_guards(client, &quote)?;
    let (request, kept_at) = match &place {
        Place::Here(store) => (keep_here(store, &quote, asked)?, "this machine's state folder"),
        Place::Gateway => {
            let asking = esimdash_front::requests::Asking {
                action: quote.spend.what.action().to_string(),
                iccid: quote.spend.what.iccid().map(|i| i.as_str().to_string()),
                slug: quote.spend.slug.clone(),
                plan_name: quote.plan.name.clone(),
                quantity: quote.spend.qty,
                reason: asked.reason.to_string(),
                proposed_by: asked.by.to_string(),
                unsure: quote.unsure.clone(),
            };
            let kept = client.keep_request(&asking).await?;
            (kept.request, "the team's gateway (another seat approves it)")
        }
    };
    let mut value = request.json(&Standing::Pending);
    value["keptAt"] = json!(kept_at);
    value["toApprove"] = json!(format!(
        "a person approves it with `esimdash approve {}` (or in the dashboard) before {}; nothing is paid until then",
        request.id,
        request.expires_at.to_rfc3339()
    ));
    Ok(value)
}

/// A proposal written as a pending request in this machine's state folder.
fn keep_here(store: &Requests, quote: &Quote, asked: &Asked<'_>) -> Result<Request, CommandError> {
    let now = Utc::now();
    let request = Proposal {
        account: store.account(),
        spend: &quote.spend,
        plan_name: &quote.plan.name,
        unit_price: quote.unit,
        total: quote.total,
        reason: asked.reason,
        proposed_by: asked.by,
        unsure: quote.unsure.as_deref(),
    }
    .request(now);
    store.propose(&request, now)?;
    Ok(request)
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

/// The request `id` where it stands now, as scripts and assistants read it.
pub(crate) async fn status_json(client: &Client, id: &str) -> Result<serde_json::Value, CommandError> {
    let (request, standing) = approval::read(client, &place(client).await?, id).await?;
    Ok(request.json(&standing))
}

/// `esimdash requests`, `approve ID` and `refuse ID`.
pub async fn run(command: &crate::cli::Command, client: &Client, output: &Output) -> Result<(), CommandError> {
    use crate::cli::Command;
    match command {
        Command::Approve { id, yes, again } => approve(client, id, (*yes, *again), output).await,
        Command::Refuse { id, why } => refuse(client, id, why.as_deref(), output).await,
        Command::Requests { all } => list(client, *all, output).await,
        _ => Err(CommandError::Usage("not a request's command".into())),
    }
}

/// `esimdash requests`: the account's requests, waiting ones first (`--all`: decided and
/// expired ones too).
async fn list(client: &Client, all: bool, output: &Output) -> Result<(), CommandError> {
    let mut shown = approval::standings(client, &place(client).await?).await?;
    shown.retain(|(_, s)| all || *s == Standing::Pending);
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
    let why = why.unwrap_or("refused by a person");
    let user = esimdash_api::audit::local_user();
    let decided = approval::refuse(client, &place(client).await?, id, &user, why).await?;
    if output.is_json() {
        return output.print_json(&decided.json(&decided.standing(&[], Utc::now())));
    }
    outln!("Refused {}: nothing was paid.", decided.id);
    Ok(())
}

/// `esimdash approve ID`: the person asked (or `--yes`), then decided and paid once by
/// `approval::approve`, and what became of it told as `topup` tells it.
async fn approve(client: &Client, id: &str, (yes, again): (bool, bool), output: &Output) -> Result<(), CommandError> {
    let place = place(client).await?;
    let nothing = |e: CommandError| e.nothing_moved("nothing was paid");
    let (request, _) = approval::read(client, &place, id)
        .await
        .map_err(|e| nothing(e.into()))?;
    let question = format!(
        "{}\nIt is checked again at this moment's offer and price before anything is paid.",
        request.summary()
    );
    super::buying::confirm(yes, &question).await.map_err(nothing)?;
    let user = esimdash_api::audit::local_user();
    let approved = approval::approve(client, &place, id, &user, again)
        .await
        .map_err(|e| nothing(e.into()))?;
    let what = approved.payment.spend.what.clone();
    let ready = super::buying::Ready::new(approved.quote, approved.payment, approved.before);
    match approved.answer {
        // Refused by the repeat rule: the person can say it is meant.
        Err(e @ esimdash_api::ApiError::Repeat { .. }) => Err(CommandError::Refused(format!(
            "{e}; approve it with --again to pay the same a second time"
        ))
        .nothing_moved(match what {
            Purchase::Topup { .. } => esimdash_domain::purchase::NOTHING_TOPPED_UP,
            Purchase::Order => esimdash_domain::purchase::NOTHING_BOUGHT,
        })),
        answer => super::buying::tell(client, ready, answer, output).await,
    }
}
