//! One order as money: when it was placed, what the wallet paid for it (`totalSellPrice`), what
//! it cost (`costPrice` for each one ordered), and what it is of (plan, country, a top-up or
//! not). A cancelled order was refunded: it is kept (its status may be what a report shows)
//! but moves no money.

use chrono::{DateTime, Utc};
use esimdash_api::model::Order;
use esimdash_domain::status::Status;
use rust_decimal::Decimal;

/// The wallet's currency: the API tells the balance in USD (`balanceUsd`).
pub const WALLET_CURRENCY: &str = "USD";

/// More than an order of eSIM data plans can cost: a figure beyond it is a server's mistake,
/// said rather than summed (two of them would fill any total).
pub const MOST_AN_ORDER_COSTS: Decimal = Decimal::from_parts(1_000_000, 0, 0, false, 0);

#[derive(Debug, Clone, PartialEq)]
pub struct Sale {
    pub order_no: String,
    pub at: DateTime<Utc>,
    /// As the API said it.
    pub status: String,
    pub slug: String,
    pub package: String,
    pub location: String,
    pub quantity: u64,
    /// What the wallet paid: the order's `totalSellPrice` (else `sellPrice` × quantity).
    pub paid: Decimal,
    /// `costPrice` × quantity.
    pub at_cost: Decimal,
    pub topup: bool,
}

impl Sale {
    /// The order as a sale; why not, for one the money view cannot count: without a time
    /// (`createdAt`), which no day can hold, or without its prices or quantity, which would
    /// be counted as nothing (a guess about money), or with figures too large to sum.
    pub fn of(order: &Order) -> Result<Sale, String> {
        let r = &order.record;
        let no = &r.provider_order_no;
        let at = order
            .created_at
            .at()
            .ok_or_else(|| format!("order {no} carries no time (createdAt): spend per day cannot be told"))?;
        let missing = |what: &str| format!("order {no} carries no {what}: its money cannot be counted");
        let quantity = r.quantity.ok_or_else(|| missing("quantity"))?;
        let each = Decimal::from(quantity);
        let too_large = || format!("order {no}: its amounts are too large to count");
        let paid = match (order.total_sell_price, order.sell_price) {
            (Some(total), _) => total,
            (None, Some(price)) => price.checked_mul(each).ok_or_else(too_large)?,
            (None, None) => return Err(missing("price (totalSellPrice)")),
        };
        let cost = order.cost_price.ok_or_else(|| missing("cost (costPrice)"))?;
        let currency = order.currency_code.trim();
        if !currency.is_empty() && !currency.eq_ignore_ascii_case(WALLET_CURRENCY) {
            return Err(format!(
                "order {no} is in {currency}, not in the wallet's {WALLET_CURRENCY}: its money is not summed with the rest"
            ));
        }
        let at_cost = cost.checked_mul(each).ok_or_else(too_large)?;
        for amount in [paid, at_cost] {
            if amount.abs() > MOST_AN_ORDER_COSTS {
                return Err(format!(
                    "order {no}: {amount} USD is more than any order can cost ({MOST_AN_ORDER_COSTS} USD): not summed"
                ));
            }
        }
        Ok(Sale {
            order_no: no.to_string(),
            at,
            status: r.status.as_str().to_string(),
            slug: r.slug.clone(),
            package: r.package_name.clone(),
            location: r.location_code.clone(),
            quantity,
            paid,
            at_cost,
            topup: !order.iccid.is_empty() || r.package_code.starts_with("TOPUP_"),
        })
    }

    /// Whether `other` is this order with the same figures (a refund changes its status only).
    pub fn same_amounts(&self, other: &Sale) -> bool {
        self.paid == other.paid && self.at_cost == other.at_cost && self.quantity == other.quantity
    }

    /// Whether the wallet still pays for it: a cancelled order was refunded.
    pub fn moves_money(&self) -> bool {
        Status::parse(&self.status) != Status::Cancel
    }

    /// What the wallet paid, nothing once refunded.
    pub fn spend(&self) -> Decimal {
        if self.moves_money() { self.paid } else { Decimal::ZERO }
    }

    /// What it cost, nothing once refunded.
    pub fn cost(&self) -> Decimal {
        if self.moves_money() {
            self.at_cost
        } else {
            Decimal::ZERO
        }
    }
}
