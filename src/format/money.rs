//! Money as people read it, in the commands' tables and on every screen: an amount absent or
//! with its currency. The amount's own text is `esimdash_domain::money::format_amount`, the one place an
//! amount becomes text (the form the API's decimal strings have too).

use esimdash_domain::money::format_amount;
use rust_decimal::Decimal;

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
