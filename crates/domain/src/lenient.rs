//! Tolerant readers for fields whose JSON type a real server might vary where the spec is
//! silent: an identifier sent as a number, a count sent as a string, a null for "unset".

use serde::de::{self, Deserializer, Visitor};
use std::fmt;

/// A string field that also accepts a number or a boolean (kept as its text) and null (empty).
pub fn string<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    struct V;
    impl Visitor<'_> for V {
        type Value = String;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a string")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_string<E: de::Error>(self, v: String) -> Result<String, E> {
            Ok(v)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_unit<E: de::Error>(self) -> Result<String, E> {
            Ok(String::new())
        }
        fn visit_none<E: de::Error>(self) -> Result<String, E> {
            Ok(String::new())
        }
    }
    d.deserialize_any(V)
}

/// A whole number that may come as a number (`7`, `7.0`) or a string (`"7"`); null is unknown.
pub fn opt_u64<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    struct V;
    impl Visitor<'_> for V {
        type Value = Option<u64>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a whole number")
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Ok(Some(v))
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
            u64::try_from(v)
                .map(Some)
                .map_err(|_| E::custom(format!("{v} is negative")))
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
            // Counts and volumes, not money: a float that is whole is accepted.
            if v.fract() == 0.0 && (0.0..=u64::MAX as f64).contains(&v) {
                Ok(Some(v as u64))
            } else {
                Err(E::custom(format!("{v} is not a whole number")))
            }
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            if v.trim().is_empty() {
                return Ok(None);
            }
            v.trim()
                .parse()
                .map(Some)
                .map_err(|_| E::custom(format!("{:?} is not a whole number", crate::text::excerpt(v, 30))))
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
    }
    d.deserialize_any(V)
}

/// Like `opt_u64`, with 0 for a missing or null value (page numbers, totals).
pub fn u64_or_zero<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    opt_u64(d).map(Option::unwrap_or_default)
}

/// An ICCID, read as text as tolerantly as `string`, and decoded once.
pub fn iccid<'de, D: Deserializer<'de>>(d: D) -> Result<crate::iccid::EsimIccid, D::Error> {
    string(d).map(|text| crate::iccid::EsimIccid::parse(&text))
}

/// An order number, read as text as tolerantly as `string`.
pub fn order_no<'de, D: Deserializer<'de>>(d: D) -> Result<crate::order_no::OrderNo, D::Error> {
    string(d).map(crate::order_no::OrderNo::from)
}
