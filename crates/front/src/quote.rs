//! A payment as it would be paid now, nobody asked yet: the plan offered (for a top-up, among
//! those the API offers for the eSIM, judged against its record), priced, and within the
//! balance. What `topup`, `buy`, an assistant's proposal and a person's approval (on the
//! command line or in the dashboard) each check first, here once.

use crate::purchase::{TopupOffer, balance_after, line_total, shortfall_message, topup_offer};
use esimdash_api::model::{Plan, Whereabouts};
use esimdash_api::{ApiError, Client};
use esimdash_domain::iccid::Iccid;
use esimdash_domain::money::format_amount;
use esimdash_domain::purchase::Spend;
use rust_decimal::Decimal;

/// A payment priced and checked against the balance.
#[derive(Debug, Clone, PartialEq)]
pub struct Quote {
    pub plan: Plan,
    pub spend: Spend,
    pub unit: Decimal,
    pub total: Decimal,
    pub balance: Decimal,
    pub after: Decimal,
    /// Why the eSIM's state could not be confirmed, when it could not (a top-up).
    pub unsure: Option<String>,
}

/// Why a payment cannot be quoted: each kind its own, so that a command can give it its exit
/// code and a proposal or approval can tell "not any more" from "not now".
#[derive(Debug, thiserror::Error)]
pub enum QuoteError {
    #[error(transparent)]
    Api(#[from] ApiError),
    /// No such eSIM in this account, or no such plan.
    #[error("{0}")]
    NotFound(String),
    /// The eSIM's state cannot take data; `state`: its class's key.
    #[error("{message}")]
    CannotTakeData {
        message: String,
        state: Option<&'static str>,
    },
    /// Not offered now, no price, or the balance is short.
    #[error("{0}")]
    Refused(String),
    /// A slug that is not offered for this eSIM, or a top-up plan asked as an order.
    #[error("{0}")]
    Wrong(String),
}

impl Quote {
    /// What a person says yes to.
    pub fn summary(&self) -> String {
        let iccid = self.spend.what.iccid();
        let target = iccid.map_or_else(String::new, |i| format!(" for eSIM {i}"));
        format!(
            "{} {} × {} ({}){target}: {} USD each, {} USD in all. Balance {} USD → {} USD.",
            if iccid.is_some() { "Top up" } else { "Buy" },
            self.spend.qty,
            self.plan.name,
            self.plan.slug,
            format_amount(self.unit),
            format_amount(self.total),
            format_amount(self.balance),
            format_amount(self.after)
        )
    }
}

/// What may be paid for an eSIM (`purchase::topup_offer`), a 404 said as "not in this account".
pub async fn offered_for(client: &Client, iccid: &Iccid, seen: Option<Whereabouts>) -> Result<TopupOffer, QuoteError> {
    topup_offer(client, iccid, seen).await.map_err(|e| match e.status() {
        Some(404) => QuoteError::NotFound(format!("no eSIM with ICCID {iccid} in this account")),
        _ => QuoteError::Api(e),
    })
}

/// A top-up of `slug` for the eSIM as it would be paid now.
pub async fn topup(
    client: &Client,
    iccid: &Iccid,
    slug: &str,
    qty: u32,
    seen: Option<Whereabouts>,
) -> Result<Quote, QuoteError> {
    let offer = offered_for(client, iccid, seen).await?;
    let dead = offer.cannot_take_data();
    let (plans, unsure) = match offer {
        TopupOffer::Plans { plans, unsure } => (plans, unsure),
        TopupOffer::Refused { why, .. } if dead.is_some() => {
            return Err(QuoteError::CannotTakeData {
                message: format!("no top-up for {iccid}: {why}"),
                state: dead.map(|c| c.key()),
            });
        }
        // Offered nothing now, by an eSIM that can take data (or whose state is not known).
        TopupOffer::Refused { why, .. } => {
            return Err(QuoteError::Refused(format!("no top-up for {iccid}: {why}")));
        }
    };
    let Some(plan) = plans.iter().find(|p| p.slug == slug).cloned() else {
        let slugs: Vec<&str> = plans.iter().map(|p| p.slug.as_str()).collect();
        return Err(QuoteError::Wrong(format!(
            "{slug:?} is not offered for {iccid}; offered: {}",
            slugs.join(", ")
        )));
    };
    let quote = priced(client, plan, Spend::topup(iccid.clone(), slug, qty)).await?;
    Ok(Quote { unsure, ..quote })
}

/// An order of a catalog plan as it would be paid now.
pub async fn order(client: &Client, slug: &str, qty: u32) -> Result<Quote, QuoteError> {
    let plan = client.plan(slug).await.map_err(|e| match e.status() {
        Some(404) => QuoteError::NotFound(format!("no plan {slug:?} in the catalog")),
        _ => QuoteError::Api(e),
    })?;
    if plan.is_topup() {
        return Err(QuoteError::Wrong(format!(
            "{slug:?} is a top-up plan: use esimdash topup --iccid …"
        )));
    }
    priced(client, plan, Spend::order(slug, qty)).await
}

/// `spend` as it would be paid now, whichever it is.
pub async fn of(client: &Client, spend: &Spend) -> Result<Quote, QuoteError> {
    match spend.what.iccid() {
        Some(iccid) => topup(client, iccid, &spend.slug, spend.qty, None).await,
        None => order(client, &spend.slug, spend.qty).await,
    }
}

/// Prices `spend` at the plan's price and checks it against the balance.
async fn priced(client: &Client, plan: Plan, spend: Spend) -> Result<Quote, QuoteError> {
    let unit = plan
        .sell_price()
        .ok_or_else(|| QuoteError::Refused(format!("the plan {} has no price", plan.slug)))?;
    let total = line_total(unit, spend.qty).map_err(QuoteError::Refused)?;
    let balance = client.balance().await?;
    if let Some(message) = shortfall_message(balance, total) {
        return Err(QuoteError::Refused(message));
    }
    let after = balance_after(balance, total).map_err(QuoteError::Refused)?;
    Ok(Quote {
        plan,
        spend,
        unit,
        total,
        balance,
        after,
        unsure: None,
    })
}
