//! Money as people read it, in the commands' tables and on every screen: the one place an
//! amount is turned into text (the form the API's decimal strings have too).

use crate::domain::money::at_least_cents;
use rust_decimal::Decimal;

/// `5` → `5.00`, `0.125` → `0.125`: at least two decimals, never rounded.
pub fn format_amount(value: Decimal) -> String {
    at_least_cents(value).to_string()
}

/// `12.50`, or `-` when absent.
pub fn amount(value: Option<Decimal>) -> String {
    value.map_or_else(|| "-".to_string(), format_amount)
}

/// `12.50 USD`, or `-` when absent.
pub fn money(value: Option<Decimal>, currency: &str) -> String {
    money_or(value, currency, "-")
}

/// `12.50 USD`, or `missing` when absent.
pub fn money_or(value: Option<Decimal>, currency: &str, missing: &str) -> String {
    value.map_or_else(|| missing.to_string(), |v| format!("{} {currency}", format_amount(v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_with_two_decimals_at_least() {
        assert_eq!(format_amount(Decimal::new(5, 0)), "5.00");
        assert_eq!(format_amount(Decimal::new(2500, 2)), "25.00");
        assert_eq!(format_amount(Decimal::new(125, 3)), "0.125");
        assert_eq!(format_amount(Decimal::new(12000, 3)), "12.00");
    }

    #[test]
    fn an_absent_amount_says_so() {
        assert_eq!(amount(None), "-");
        assert_eq!(money(Some(Decimal::new(-150, 2)), "USD"), "-1.50 USD");
        assert_eq!(money(None, "USD"), "-");
        assert_eq!(money_or(None, "USD", "unknown"), "unknown");
    }
}
