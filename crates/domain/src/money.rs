//! Money is `rust_decimal` end to end. JSON carries it as a number (plan prices) or as a decimal
//! string (order prices, balances); both are read from their exact text, never through `f64`.

use rust_decimal::Decimal;
use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _};
use serde_json::value::RawValue;
use std::str::FromStr;

/// Parses a decimal from its text: `12.30`, `-1`, `1.5e3`. Whitespace around it is not allowed.
pub fn parse_decimal(text: &str) -> Result<Decimal, String> {
    let parsed = if text.contains(['e', 'E']) {
        Decimal::from_scientific(text)
    } else {
        Decimal::from_str(text)
    };
    parsed.map_err(|_| format!("{:?} is not a decimal amount", crate::text::excerpt(text, 40)))
}

/// Reads one JSON value (number, string or null) as an optional decimal, from its raw text.
fn from_raw(raw: &RawValue) -> Result<Option<Decimal>, String> {
    let text = raw.get();
    match text.as_bytes().first() {
        Some(b'n') if text == "null" => Ok(None),
        Some(b'"') => {
            let s: String = serde_json::from_str(text).map_err(|e| e.to_string())?;
            if s.is_empty() {
                Ok(None)
            } else {
                parse_decimal(&s).map(Some)
            }
        }
        Some(b'-' | b'0'..=b'9') => parse_decimal(text).map(Some),
        _ => Err(format!(
            "expected an amount (number or decimal string), found {}",
            crate::text::excerpt(text, 40)
        )),
    }
}

/// `deserialize_with` for an amount that may be missing, null or empty (shown as unknown).
pub fn de_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Decimal>, D::Error> {
    let raw: Box<RawValue> = Deserialize::deserialize(d)?;
    from_raw(&raw).map_err(D::Error::custom)
}

/// Writes an amount as a JSON number with its exact digits (`12.30`, not `12.3000000001`).
pub fn ser_number<S: Serializer>(value: &Decimal, s: S) -> Result<S::Ok, S::Error> {
    let raw = RawValue::from_string(value.to_string()).map_err(serde::ser::Error::custom)?;
    raw.serialize(s)
}

/// Writes an optional amount as a JSON number, or null.
pub fn ser_opt_number<S: Serializer>(value: &Option<Decimal>, s: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => ser_number(v, s),
        None => s.serialize_none(),
    }
}

/// Writes an optional amount as a decimal string with at least two decimals, or null.
pub fn ser_opt_string<S: Serializer>(value: &Option<Decimal>, s: S) -> Result<S::Ok, S::Error> {
    match value {
        Some(v) => s.serialize_str(&at_least_cents(*v).to_string()),
        None => s.serialize_none(),
    }
}

/// An optional amount read as a number or a decimal string, written as a JSON number:
/// `#[serde(default, with = "money::opt_number")]`.
pub mod opt_number {
    pub use super::{de_opt as deserialize, ser_opt_number as serialize};
}

/// An optional amount read as a number or a decimal string, written as a decimal string (how
/// the API gives prices): `#[serde(default, with = "money::opt_string")]`.
pub mod opt_string {
    pub use super::{de_opt as deserialize, ser_opt_string as serialize};
}

/// The amount with at least two decimals and never fewer than it has: `5` is `5.00`, `0.125`
/// stays `0.125`. Rounding would be a guess about money, so none is done. The API's decimal
/// strings and everything shown to people take this form.
pub fn at_least_cents(value: Decimal) -> Decimal {
    let mut v = value.normalize();
    if v.scale() < 2 {
        v.rescale(2);
    }
    v
}

/// An amount as text, as the API writes it and as people read it: `5` → `5.00`, `0.125` →
/// `0.125` (at least two decimals, never rounded). The one place an amount becomes text; the
/// wire, the messages and `format::money` all use it.
pub fn format_amount(value: Decimal) -> String {
    at_least_cents(value).to_string()
}

/// Rounds half away from zero to cents, always with two decimals (`20` → `20.00`): how the
/// sandbox prices a percentage rule.
pub fn round_cents(value: Decimal) -> Decimal {
    let mut v = value.round_dp_with_strategy(2, rust_decimal::RoundingStrategy::MidpointAwayFromZero);
    v.rescale(2);
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Deserialize)]
    struct Holder {
        #[serde(default, deserialize_with = "de_opt")]
        amount: Option<Decimal>,
    }

    fn read(json: &str) -> Result<Option<Decimal>, serde_json::Error> {
        serde_json::from_str::<Holder>(json).map(|h| h.amount)
    }

    #[test]
    fn reads_numbers_and_strings_exactly() {
        assert_eq!(read(r#"{"amount":12.30}"#).unwrap(), Some(Decimal::new(1230, 2)));
        assert_eq!(read(r#"{"amount":"12.30"}"#).unwrap(), Some(Decimal::new(1230, 2)));
        // 0.1 + 0.2 style values keep their digits: no binary float in between.
        assert_eq!(
            read(r#"{"amount":0.30000000000000004}"#).unwrap().unwrap().to_string(),
            "0.30000000000000004"
        );
        assert_eq!(read(r#"{"amount":1.5e3}"#).unwrap(), Some(Decimal::new(1500, 0)));
        assert_eq!(read(r#"{"amount":null}"#).unwrap(), None);
        assert_eq!(read(r#"{"amount":""}"#).unwrap(), None);
        assert_eq!(read(r#"{}"#).unwrap(), None);
    }

    #[test]
    fn refuses_what_is_not_an_amount() {
        for bad in [
            r#"{"amount":"abc"}"#,
            r#"{"amount":true}"#,
            r#"{"amount":[1]}"#,
            r#"{"amount":1e400}"#,
            r#"{"amount":123456789012345678901234567890123}"#,
        ] {
            let err = read(bad).unwrap_err().to_string();
            assert!(err.contains("amount") || err.contains("decimal"), "{bad}: {err}");
        }
    }

    #[test]
    fn writes_numbers_with_exact_digits() {
        #[derive(Serialize)]
        struct Out {
            #[serde(serialize_with = "ser_number")]
            a: Decimal,
        }
        let json = serde_json::to_string(&Out {
            a: Decimal::new(2000, 2),
        })
        .unwrap();
        assert_eq!(json, r#"{"a":20.00}"#);
    }
}
