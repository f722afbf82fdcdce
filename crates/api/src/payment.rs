//! A payment as the client is asked for it: what is bought, the total the user confirmed, and
//! the idempotency key made once for it, with the request it becomes.

use super::error::Endpoint;
use super::model::{OrderRequest, Placed, TopupRequest};
use esimdash_domain::iccid::Iccid;
use esimdash_domain::order_no::OrderNo;
use rust_decimal::Decimal;
use std::collections::HashSet;

pub const TOPUP: Endpoint = Endpoint::new("POST", "/portal/topups");
pub const PLACE_ORDER: Endpoint = Endpoint::new("POST", "/portal/orders");

use esimdash_domain::purchase::Spend;
use esimdash_domain::purchase::{ChargedOther, Purchase, charged_other};

/// A payment asked of the client: what, its total as the user confirmed it (for the audit
/// trail), and its idempotency key, made once and kept for any resend and lookup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payment {
    pub spend: Spend,
    pub total: Option<Decimal>,
    pub key: String,
    /// The user confirmed a second time that the same payment, placed minutes ago, is wanted
    /// again (`--again`, or the dashboard's second question).
    pub again: bool,
    /// The plan's order numbers read before paying: kept in the trail, so that whichever
    /// session settles a lost answer can tell this payment's order apart.
    pub orders_before: Option<Vec<String>>,
    /// The balance the user saw when confirming, when it was read: the balance moved is
    /// compared with the total confirmed.
    pub balance_before: Option<Decimal>,
    /// The request a person approved, when an assistant proposed it: its id and proposer go
    /// into the trail with the payment (its approver is the trail's user).
    pub request: Option<Proposed>,
}

/// A proposed payment's id and who proposed it (`esimdash mcp`'s `propose_*`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proposed {
    pub id: String,
    pub by: String,
    /// Kept at the team's gateway: the payment names the request to it (`REQUEST_HEADER`).
    pub at_gateway: bool,
}

impl Payment {
    pub fn new(spend: Spend, total: Option<Decimal>) -> Self {
        Self::with_key(spend, total, fresh_key())
    }

    /// A payment under a key it already has (settling one from the trail).
    pub fn with_key(spend: Spend, total: Option<Decimal>, key: String) -> Self {
        Self {
            spend,
            total,
            key,
            again: false,
            orders_before: None,
            balance_before: None,
            request: None,
        }
    }

    /// With the order numbers of its plan that existed before it.
    pub fn with_orders_before(mut self, before: &HashSet<OrderNo>) -> Self {
        let mut numbers: Vec<String> = before.iter().map(|no| no.as_str().to_string()).collect();
        numbers.sort();
        self.orders_before = Some(numbers);
        self
    }

    /// With the balance the user saw when confirming.
    pub fn with_balance_before(mut self, balance: Decimal) -> Self {
        self.balance_before = Some(balance);
        self
    }

    /// Approved from a request (see `request`).
    pub fn proposed(mut self, request: Proposed) -> Self {
        self.request = Some(request);
        self
    }

    /// Whether its placing cost other than the total confirmed (see `ChargedOther`).
    pub fn charged_other(&self, placed: &Placed) -> Option<ChargedOther> {
        charged_other(
            self.total,
            placed.order.total_sell_price,
            (self.balance_before, placed.balance_usd),
        )
    }

    /// Confirmed a second time (see `again`).
    pub fn again(mut self) -> Self {
        self.again = true;
        self
    }

    pub fn slug(&self) -> &str {
        &self.spend.slug
    }

    pub fn iccid(&self) -> Option<&Iccid> {
        self.spend.what.iccid()
    }

    pub fn qty(&self) -> u32 {
        self.spend.qty
    }

    pub fn action(&self) -> &'static str {
        self.spend.what.action()
    }

    pub fn endpoint(&self) -> Endpoint {
        match self.spend.what {
            Purchase::Topup { .. } => TOPUP,
            Purchase::Order => PLACE_ORDER,
        }
    }

    /// The request's body, as the API reads it: made here, as it leaves.
    pub(crate) fn body(&self) -> Result<Vec<u8>, serde_json::Error> {
        let Spend { what, slug, qty } = &self.spend;
        match what {
            Purchase::Topup { iccid } => serde_json::to_vec(&TopupRequest {
                iccid: iccid.clone(),
                slug: slug.clone(),
                qty: *qty,
            }),
            Purchase::Order => serde_json::to_vec(&OrderRequest {
                slug: slug.clone(),
                qty: *qty,
            }),
        }
    }
}

/// Unique per payment: the time in nanoseconds, the process, and 64 random bits.
pub fn fresh_key() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("esimdash-{nanos:x}-{:x}-{:016x}", std::process::id(), fastrand::u64(..))
}
