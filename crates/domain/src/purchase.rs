//! What is bought: a plan (its slug) and how many, as a top-up of an eSIM or as new eSIMs. The
//! dashboard's form, the one-shot commands, the payment sent and a payment settled from the
//! audit trail all say it with these two types; the wire bodies are made from them only as the
//! request leaves (`esimdash_api`'s `payment`).

use super::iccid::Iccid;
use super::money::format_amount;
use rust_decimal::Decimal;

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

/// A payment placed for another total than the one confirmed: what the order says it cost (or,
/// without that, what the balance moved) against what the user said yes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChargedOther {
    pub charged: Decimal,
    pub confirmed: Decimal,
    /// How much the balance went down, when the balance before was known.
    pub balance_moved: Option<Decimal>,
}

impl ChargedOther {
    /// "Charged 13.20 USD, not the 0.50 USD confirmed (the balance went down by 13.20 USD)".
    pub fn sentence(&self) -> String {
        let moved = self.balance_moved.map_or_else(String::new, |m| {
            format!(" (the balance went down by {} USD)", format_amount(m))
        });
        format!(
            "Charged {} USD, not the {} USD confirmed{moved}: check the order with your provider",
            format_amount(self.charged),
            format_amount(self.confirmed)
        )
    }
}

/// Whether a placed payment cost what was confirmed: what the order says it cost
/// (`totalSellPrice`), or, without that, what the balance moved (`balance`: before, and as the
/// answer gives it). The balance alone never overrules the order: other payments (another
/// seat, the portal, an earlier payment settled first) move it too.
pub fn charged_other(
    confirmed: Option<Decimal>,
    order_total: Option<Decimal>,
    balance: (Option<Decimal>, Option<Decimal>),
) -> Option<ChargedOther> {
    let confirmed = confirmed?;
    let moved = balance
        .0
        .zip(balance.1)
        .and_then(|(before, after)| before.checked_sub(after));
    let charged = order_total.or(moved)?;
    (charged != confirmed).then_some(ChargedOther {
        charged,
        confirmed,
        balance_moved: moved,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usd(s: &str) -> Option<Decimal> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn a_payment_charged_other_than_confirmed_is_told_by_the_order_or_the_balance() {
        let confirmed = usd("6.60");
        assert_eq!(charged_other(confirmed, usd("6.60"), (usd("250"), usd("243.40"))), None);
        assert_eq!(charged_other(confirmed, usd("6.6"), (None, None)), None, "6.6 is 6.60");
        let order = charged_other(usd("0.00"), usd("13.20"), (usd("250"), usd("236.80"))).unwrap();
        assert_eq!(
            (order.charged, order.balance_moved),
            (usd("13.20").unwrap(), usd("13.20"))
        );
        assert!(
            order
                .sentence()
                .starts_with("Charged 13.20 USD, not the 0.00 USD confirmed"),
            "{}",
            order.sentence()
        );
        // The order says what was confirmed and the balance moved more: other payments move
        // it too, so the order's word stands.
        assert!(charged_other(confirmed, usd("6.60"), (usd("250"), usd("200"))).is_none());
        // No order total: the balance moved tells.
        assert!(charged_other(confirmed, None, (usd("250"), usd("243.40"))).is_none());
        assert_eq!(
            charged_other(confirmed, None, (usd("250"), usd("240")))
                .unwrap()
                .charged,
            usd("10").unwrap()
        );
        assert!(
            charged_other(confirmed, None, (None, None)).is_none(),
            "nothing to compare"
        );
    }
}
