//! `esimdash topup` and `esimdash buy`: money moves once, only for what the API offers. The
//! plan is checked against what is offered, the balance before sending, the user is asked (or
//! `--yes`), the request is sent once, and a lost answer is looked up in the order list.

use super::{CommandError, Output};
use crate::cli::SpendArgs;
use crate::commands::output::outln;
use esimdash_api::model::{Plan, Whereabouts};
use esimdash_api::{ApiError, Client, Delivery, PLACE_ORDER, Payment, TOPUP};
use esimdash_domain::iccid::Iccid;
use esimdash_domain::money::format_amount;
use esimdash_domain::order_no::OrderNo;
use esimdash_domain::purchase::{NOTHING_BOUGHT, NOTHING_TOPPED_UP, Purchase};
use esimdash_front::purchase::{TopupOffer, explain};
use esimdash_front::quote::{self, Quote};
use rust_decimal::Decimal;
use serde_json::json;
use std::collections::HashSet;
use std::io::{BufRead, IsTerminal, Write};

pub async fn topup(
    client: &Client,
    iccid: &Iccid,
    slug: &str,
    seen: Option<Whereabouts>,
    spend_args: &SpendArgs,
    output: &Output,
) -> Result<(), CommandError> {
    let checked = async {
        client.ensure_writable(TOPUP)?;
        let quote = quote::topup(client, iccid, slug, spend_args.qty, seen).await?;
        if let Some(unsure) = &quote.unsure {
            ask_unsure(spend_args, unsure, output.is_json()).await?;
        }
        check_and_ask(client, quote, spend_args).await
    };
    let ready = checked.await.map_err(|e| e.nothing_moved(NOTHING_TOPPED_UP))?;
    pay(client, ready, spend_args, output).await
}

pub async fn buy(client: &Client, slug: &str, spend_args: &SpendArgs, output: &Output) -> Result<(), CommandError> {
    let checked = async {
        client.ensure_writable(PLACE_ORDER)?;
        let quote = quote::order(client, slug, spend_args.qty).await?;
        check_and_ask(client, quote, spend_args).await
    };
    let ready = checked.await.map_err(|e| e.nothing_moved(NOTHING_BOUGHT))?;
    pay(client, ready, spend_args, output).await
}

/// A payment checked, confirmed and ready to send once.
pub(crate) struct Ready {
    plan: Plan,
    qty: u32,
    total: Decimal,
    payment: Payment,
    /// The plan's order numbers before sending, so that a lost answer can be looked up.
    before: HashSet<OrderNo>,
    /// Why the eSIM's state could not be confirmed, when it could not (a top-up).
    unsure: Option<String>,
}

/// The eSIM's state could not be confirmed: asked once more at a terminal; with `--yes` said on
/// stderr (with `--json`, as `"unsure"` in the answer) and paid: the script asked for no
/// questions, and the server offered the plan.
async fn ask_unsure(spend_args: &SpendArgs, unsure: &str, json: bool) -> Result<(), CommandError> {
    if spend_args.yes {
        if !json {
            crate::commands::notices::say(&format!("Note: {unsure}; paying as --yes says."));
        }
        return Ok(());
    }
    confirm(false, &format!("Note: {unsure}.\nGo on to the top-up all the same?")).await
}

/// What may be paid for an eSIM (`quote::offered_for`).
async fn offered_for(client: &Client, iccid: &Iccid, seen: Option<Whereabouts>) -> Result<TopupOffer, CommandError> {
    Ok(esimdash_front::quote::offered_for(client, iccid, seen).await?)
}

/// `topup --iccid I --json`: the top-ups offered for the eSIM (the API's availability answer
/// judged against its record), or why none can be paid.
pub(crate) async fn offer_json(
    client: &Client,
    iccid: &Iccid,
    seen: Option<Whereabouts>,
) -> Result<serde_json::Value, CommandError> {
    Ok(offered_json(iccid, &offered_for(client, iccid, seen).await?))
}

fn offered_json(iccid: &Iccid, offer: &TopupOffer) -> serde_json::Value {
    let mut value = json!({ "iccid": iccid.as_str(), "data": offer.plans() });
    match offer {
        TopupOffer::Refused { class, why } => {
            value["refused"] = json!(why);
            value["state"] = json!(class.map(|c| c.key()));
        }
        TopupOffer::Plans {
            unsure: Some(unsure), ..
        } => value["unsure"] = json!(unsure),
        TopupOffer::Plans { .. } => {}
    }
    value
}

/// `esimdash topup --iccid I` without a slug: the top-ups offered for it, to choose from.
pub async fn offered(
    client: &Client,
    iccid: &Iccid,
    seen: Option<Whereabouts>,
    output: &Output,
) -> Result<(), CommandError> {
    let offer = offered_for(client, iccid, seen).await?;
    let offered = offer.plans();
    if output.is_json() {
        return output.print_json(&offered_json(iccid, &offer));
    }
    if let TopupOffer::Refused { why, .. } = &offer {
        outln!("No top-up can be paid for {iccid}: {why}.");
    } else {
        if let TopupOffer::Plans {
            unsure: Some(unsure), ..
        } = &offer
        {
            outln!("Note: {iccid}: {unsure}.");
        }
        crate::commands::output::out!("{}", super::lists::plan_table(offered));
        outln!("Top up with: esimdash topup --iccid {iccid} --slug SLUG");
    }
    Ok(())
}

/// Asks (or `--yes`), then reads what exists before sending.
async fn check_and_ask(client: &Client, quote: Quote, spend_args: &SpendArgs) -> Result<Ready, CommandError> {
    confirm(spend_args.yes, &quote.summary()).await?;
    let payment = Payment::new(quote.spend.clone(), Some(quote.total));
    let payment = if spend_args.again { payment.again() } else { payment };
    ready(client, quote, payment).await
}

impl Ready {
    /// `payment` of `quote`, with the plan's orders read before it.
    pub(crate) fn new(quote: Quote, payment: Payment, before: HashSet<OrderNo>) -> Ready {
        Ready {
            plan: quote.plan,
            qty: quote.spend.qty,
            total: quote.total,
            payment,
            before,
            unsure: quote.unsure,
        }
    }
}

/// `payment` (of `quote`, confirmed) with what a lost answer is told by: the plan's orders
/// that exist before it is sent, and the balance the person saw.
async fn ready(client: &Client, quote: Quote, payment: Payment) -> Result<Ready, CommandError> {
    let before = client
        .recent_orders_for(&quote.plan.slug, quote.spend.what.iccid())
        .await?
        .into_iter()
        .map(|o| o.record.provider_order_no)
        .collect();
    let payment = payment.with_balance_before(quote.balance).with_orders_before(&before);
    Ok(Ready::new(quote, payment, before))
}

/// Sends the payment once and reports what became of it. The same payment placed minutes
/// ago is sent only after a second confirmation: `--again`, or a second "y" at the terminal.
pub(crate) async fn pay(
    client: &Client,
    ready: Ready,
    spend_args: &SpendArgs,
    output: &Output,
) -> Result<(), CommandError> {
    let what = &ready.payment.spend.what.clone();
    let mut ready = ready;
    let mut answer = client.pay(&ready.payment).await;
    if let Err(ApiError::Repeat { earlier, endpoint }) = &answer {
        if spend_args.yes || !std::io::stdin().is_terminal() {
            // Nobody to ask: refused as a repeat (its own kind for scripts), saying how to pay.
            let repeat = ApiError::Repeat {
                endpoint: *endpoint,
                earlier: earlier.clone(),
            };
            return Err(CommandError::Api(repeat).nothing_moved(what.nothing_done()));
        }
        let question = format!("Not sent yet: {earlier}.\nPay the same again, a second time?");
        confirm(false, &question)
            .await
            .map_err(|e| e.nothing_moved(what.nothing_done()))?;
        // A payment of its own, under a fresh key: the first was refused and is done with.
        let first = &ready.payment;
        let mut again = Payment::new(first.spend.clone(), first.total)
            .with_orders_before(&ready.before)
            .again();
        again.balance_before = first.balance_before;
        ready.payment = again;
        answer = client.pay(&ready.payment).await;
    }
    tell(client, ready, answer, output).await
}

/// What became of a payment sent (`ready`, answered `answer`), told: the order placed, the
/// server's refusal, or a lost answer looked up in the order list.
pub(crate) async fn tell(
    client: &Client,
    ready: Ready,
    answer: Result<esimdash_api::Paid, ApiError>,
    output: &Output,
) -> Result<(), CommandError> {
    let what = &ready.payment.spend.what.clone();
    let Ready {
        plan,
        qty,
        total,
        payment,
        before,
        unsure,
    } = ready;
    match answer {
        Ok(paid) => {
            if output.is_json() {
                output.print_json(&paid_json(&paid, total, unsure.as_ref())?)?;
                return paid
                    .charged_other
                    .map_or(Ok(()), |other| Err(CommandError::ChargedOther(other)));
            }
            tell_delivery(paid.delivery, what, payment.slug());
            let placed = &paid.placed;
            outln!(
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
            paid.charged_other
                .map_or(Ok(()), |other| Err(CommandError::ChargedOther(other)))
        }
        Err(error) if error.outcome_unknown() => look_up(client, &payment, &before, what, &error, output).await,
        // The server answered with a refusal (it debits nothing then), said in those words.
        Err(error @ ApiError::Api { .. }) => {
            Err(CommandError::Refused(explain(&error, what)).nothing_moved(what.nothing_done()))
        }
        // Refused before sending: read-only, the trail or lock not writable, a repeat.
        Err(error) => Err(CommandError::Api(error).nothing_moved(what.nothing_done())),
    }
}

/// A placed payment as `--json` tells it: the order, how it was delivered, the total confirmed
/// and the one charged.
fn paid_json(
    paid: &esimdash_api::Paid,
    total: rust_decimal::Decimal,
    unsure: Option<&String>,
) -> Result<serde_json::Value, CommandError> {
    let delivery = match paid.delivery {
        Delivery::Answered => "answered",
        Delivery::Resent { replayed: true } => "resent_replayed",
        Delivery::Resent { replayed: false } => "resent",
        Delivery::ResentUnconfirmed => "resent_unconfirmed",
    };
    let mut value = serde_json::to_value(&paid.placed).map_err(|e| CommandError::Usage(e.to_string()))?;
    value["delivery"] = json!(delivery);
    value["moneyMoved"] = json!(true);
    value["confirmed"] = json!(format_amount(total));
    value["charged"] = json!(paid.placed.order.total_sell_price.map(format_amount));
    if let Some(unsure) = unsure {
        value["unsure"] = json!(unsure);
    }
    Ok(value)
}

/// How the answer came, when it did not come the first time.
fn tell_delivery(delivery: Delivery, what: &Purchase, slug: &str) {
    match delivery {
        Delivery::Resent { replayed } => outln!(
            "The first answer was lost; the {} was sent once more under the same idempotency key, and the server {}.",
            what.noun(),
            if replayed {
                "answered that it had carried out the first one (nothing was paid twice)"
            } else {
                "carried it out then (the first had not reached it)"
            }
        ),
        Delivery::ResentUnconfirmed => eprintln!(
            "esimdash: the first answer was lost; the {} was sent once more under the same idempotency key, but the server's answer did not echo the key: it may no longer honour keys, so if the first had reached it this is possibly a second order. Check `esimdash orders -q {}`.",
            what.noun(),
            esimdash_domain::text::sanitize(slug)
        ),
        Delivery::Answered => {}
    }
}

/// After a lost answer that was not (or could not be) sent again: the order list tells.
async fn look_up(
    client: &Client,
    payment: &Payment,
    before: &HashSet<OrderNo>,
    what: &Purchase,
    error: &ApiError,
    output: &Output,
) -> Result<(), CommandError> {
    let noun = what.noun();
    let slug = payment.slug();
    let how = if client.honours_keys() {
        "the order list was read (esimdash sends a payment once more under its idempotency key only when the list does not show it)"
    } else {
        "this server has not shown that it honours idempotency keys, so it was not sent again; the order list was read instead"
    };
    match client.look_up_payment(payment, before).await {
        Ok(Some(order)) => {
            if output.is_json() {
                return output.print_json(&json!({ "outcome": "placed", "order": order, "delivery": "looked_up" }));
            }
            outln!(
                "No answer came ({error}); {how}. It shows the {noun} was placed: order {}.",
                order.record.provider_order_no
            );
            Ok(())
        }
        Ok(None) => Err(CommandError::OutcomeUnknown(format!(
            "No answer came ({error}); {how}. It shows no new {noun} for {slug}: it was most likely not placed. Check `esimdash orders -q {slug}` before trying again."
        ))),
        Err(ApiError::Ambiguous { orders, .. }) => Err(CommandError::OutcomeUnknown(format!(
            "No answer came ({error}); {how}. It shows {} new orders for {slug} that could each be this {noun} ({}): esimdash cannot tell which, so it claims none. Check them with `esimdash orders -q {slug}`.",
            orders.len(),
            orders.join(", ")
        ))),
        Err(lookup) => Err(CommandError::OutcomeUnknown(format!(
            "No answer came ({error}); {how}, but it could not be read ({lookup}): the {noun} may or may not have been placed. Check `esimdash orders -q {slug}`."
        ))),
    }
}

/// `--yes`, or a "y" typed at the terminal; without a terminal and without `--yes`, no.
pub(super) async fn confirm(yes: bool, summary: &str) -> Result<(), CommandError> {
    if yes {
        return Ok(());
    }
    if !std::io::stdin().is_terminal() {
        return Err(CommandError::Usage(format!(
            "{summary}\nNot on a terminal: add --yes to confirm"
        )));
    }
    // The summary names the server's plan: shown as text, never obeyed (a name that moved the
    // cursor could redraw the price the user says yes to).
    eprint!("{}\nProceed? [y/N] ", esimdash_domain::text::sanitize_lines(summary));
    let _ = std::io::stderr().flush();
    // Read off the runtime, so that Ctrl-C at the question ends the command at once.
    let answer = tokio::task::spawn_blocking(|| {
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer).map(|_| answer)
    })
    .await
    .map_err(|e| CommandError::Io(std::io::Error::other(e)))??;
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        Ok(())
    } else {
        Err(CommandError::Refused("Not confirmed".to_string()))
    }
}
