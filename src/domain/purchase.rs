//! What is bought: a plan (its slug) and how many, as a top-up of an eSIM or as new eSIMs. The
//! dashboard's form, the one-shot commands, the payment sent and a payment settled from the
//! audit trail all say it with these two types; the wire bodies are made from them only as the
//! request leaves (`api::changes`).

use super::iccid::Iccid;

/// Whom it is for: an eSIM (a top-up, by a valid ICCID) or new eSIMs (an order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Purchase {
    Topup { iccid: Iccid },
    Order,
}

impl Purchase {
    pub fn noun(&self) -> &'static str {
        match self {
            Purchase::Topup { .. } => "top-up",
            Purchase::Order => "order",
        }
    }

    /// Said with every failure that happened before the payment went out (or that the server
    /// answered: docs/api-contract.md, a failed request debits nothing), so nobody has to guess.
    pub fn nothing_done(&self) -> &'static str {
        match self {
            Purchase::Topup { .. } => NOTHING_TOPPED_UP,
            Purchase::Order => NOTHING_BOUGHT,
        }
    }

    /// As the audit trail names it.
    pub fn action(&self) -> &'static str {
        match self {
            Purchase::Topup { .. } => "topup",
            Purchase::Order => "order",
        }
    }

    pub fn iccid(&self) -> Option<&Iccid> {
        match self {
            Purchase::Topup { iccid } => Some(iccid),
            Purchase::Order => None,
        }
    }
}

pub const NOTHING_TOPPED_UP: &str = "nothing was topped up";
pub const NOTHING_BOUGHT: &str = "nothing was bought";

/// A plan bought `qty` times, for `what`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spend {
    pub what: Purchase,
    pub slug: String,
    pub qty: u32,
}

impl Spend {
    pub fn topup(iccid: Iccid, slug: impl Into<String>, qty: u32) -> Self {
        Self {
            what: Purchase::Topup { iccid },
            slug: slug.into(),
            qty,
        }
    }

    pub fn order(slug: impl Into<String>, qty: u32) -> Self {
        Self {
            what: Purchase::Order,
            slug: slug.into(),
            qty,
        }
    }
}
