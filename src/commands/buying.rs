//! `esimdash topup` and `esimdash buy`: money moves once, only for what the API offers. The
//! plan is checked against what is offered, the balance before sending, the user is asked (or
//! `--yes`), the request is sent once, and a lost answer is looked up in the order list.

use super::{CommandError, print_json};
use crate::api::Client;
use crate::api::model::{OrderRequest, Placed, Plan, TopupRequest};
use crate::cli::SpendArgs;
use crate::esim::iccid::Iccid;
use crate::esim::money::format_amount;
use crate::purchase::{Purchase, explain, shortfall_message};
use rust_decimal::Decimal;
use serde_json::json;
use std::collections::HashSet;
use std::io::{BufRead, IsTerminal, Write};

pub async fn topup(
    client: &Client,
    iccid: &str,
    slug: &str,
    spend_args: &SpendArgs,
    as_json: bool,
) -> Result<(), CommandError> {
    let SpendArgs { qty, yes } = *spend_args;
    let iccid = Iccid::parse(iccid).map_err(|e| CommandError::Usage(format!("{iccid:?} is not an ICCID: {e}")))?;
    let what = Purchase::Topup { iccid: iccid.clone() };
    let offered = client.topup_plans(iccid.as_str()).await.map_err(|e| match e.status() {
        Some(404) => CommandError::NotFound(format!("no eSIM with ICCID {iccid} in this account")),
        _ => CommandError::Api(e),
    })?;
    if offered.is_empty() {
        return Err(CommandError::Refused(format!(
            "no top-up is offered for {iccid} now (expired, cancelled or revoked eSIMs cannot be topped up)"
        )));
    }
    let Some(plan) = offered.iter().find(|p| p.slug == slug) else {
        let slugs: Vec<&str> = offered.iter().map(|p| p.slug.as_str()).collect();
        return Err(CommandError::Usage(format!(
            "{slug:?} is not offered for {iccid}; offered: {}",
            slugs.join(", ")
        )));
    };
    let request = TopupRequest {
        iccid: iccid.to_string(),
        slug: slug.to_string(),
        qty,
    };
    let iccid_text = iccid.to_string();
    spend(client, plan, qty, yes, as_json, &what, Some(&iccid_text), || {
        client.topup(&request)
    })
    .await
}

pub async fn buy(client: &Client, slug: &str, spend_args: &SpendArgs, as_json: bool) -> Result<(), CommandError> {
    let SpendArgs { qty, yes } = *spend_args;
    let plan = client.plan(slug).await.map_err(|e| match e.status() {
        Some(404) => CommandError::NotFound(format!("no plan {slug:?} in the catalog")),
        _ => CommandError::Api(e),
    })?;
    if plan.is_topup() {
        return Err(CommandError::Usage(format!(
            "{slug:?} is a top-up plan: use esimdash topup --iccid …"
        )));
    }
    let request = OrderRequest {
        slug: slug.to_string(),
        qty,
    };
    spend(client, &plan, qty, yes, as_json, &Purchase::Order, None, || {
        client.place_order(&request)
    })
    .await
}

/// Checks, asks, sends once, reports.
#[allow(clippy::too_many_arguments)]
async fn spend<F, Fut>(
    client: &Client,
    plan: &Plan,
    qty: u32,
    yes: bool,
    as_json: bool,
    what: &Purchase,
    iccid: Option<&str>,
    send: F,
) -> Result<(), CommandError>
where
    F: FnOnce() -> Fut,
    Fut: std::future::Future<Output = Result<Placed, crate::api::ApiError>>,
{
    let unit = plan
        .sell_price()
        .ok_or_else(|| CommandError::Refused(format!("the plan {} has no price", plan.slug)))?;
    let total = unit * Decimal::from(qty);
    let balance = client.balance().await?;
    if let Some(message) = shortfall_message(balance, total) {
        return Err(CommandError::Refused(message));
    }
    let target = iccid.map_or_else(String::new, |i| format!(" for eSIM {i}"));
    let summary = format!(
        "{} {qty} × {} ({}){target}: {} USD each, {} USD in all. Balance {} USD → {} USD.",
        if iccid.is_some() { "Top up" } else { "Buy" },
        plan.name,
        plan.slug,
        format_amount(unit),
        format_amount(total),
        format_amount(balance),
        format_amount(balance - total)
    );
    confirm(yes, &summary)?;
    // What exists before sending, so that a lost answer can be looked up without resending.
    let before: HashSet<String> = client
        .recent_orders_for(&plan.slug, iccid)
        .await?
        .into_iter()
        .map(|o| o.record.provider_order_no)
        .collect();
    match send().await {
        Ok(placed) => {
            if as_json {
                return print_json(&placed);
            }
            println!(
                "Placed: order {} ({} × {}, {} USD). Balance: {} USD.",
                placed.order.record.provider_order_no,
                qty,
                plan.name,
                placed
                    .order
                    .total_sell_price
                    .map_or_else(|| format_amount(total), format_amount),
                placed.balance_usd.map_or_else(|| "unknown".to_string(), format_amount)
            );
            Ok(())
        }
        Err(error) if error.outcome_unknown() => {
            let noun = what.noun();
            match client.find_new_order(&plan.slug, iccid, &before).await {
                Ok(Some(order)) => {
                    if as_json {
                        return print_json(&json!({ "outcome": "placed", "order": order }));
                    }
                    println!(
                        "No answer came ({error}), but the order list shows the {noun} was placed: order {}.",
                        order.record.provider_order_no
                    );
                    Ok(())
                }
                Ok(None) => Err(CommandError::OutcomeUnknown(format!(
                    "No answer came ({error}), and the order list shows no new {noun} for {}: it was most likely not placed. Nothing was sent again; check `esimdash orders -q {}` before trying again.",
                    plan.slug, plan.slug
                ))),
                Err(lookup) => Err(CommandError::OutcomeUnknown(format!(
                    "No answer came ({error}), and the order list could not be read ({lookup}): the {noun} may or may not have been placed. Nothing was sent again; check `esimdash orders -q {}`.",
                    plan.slug
                ))),
            }
        }
        Err(error) => Err(CommandError::Refused(explain(&error, what))),
    }
}

/// `--yes`, or a "y" typed at the terminal; without a terminal and without `--yes`, no.
fn confirm(yes: bool, summary: &str) -> Result<(), CommandError> {
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        return Err(CommandError::Usage(format!(
            "{summary}\nNot on a terminal: add --yes to confirm. Nothing was sent."
        )));
    }
    eprint!("{summary}\nProceed? [y/N] ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        Ok(())
    } else {
        Err(CommandError::Refused("Not confirmed; nothing was sent.".to_string()))
    }
}
