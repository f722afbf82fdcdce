//! The API's resources as serde types. Reading is tolerant (docs/api-contract.md): missing fields are
//! empty or unknown, unknown statuses are kept, identifiers may come as numbers; money is read
//! exactly or refused. Writing (for `--json`) mirrors the API: plan prices as numbers, order
//! prices and balances as decimal strings.

use crate::iccid::{EsimIccid, Iccid};
use crate::lenient;
use crate::money;
use crate::order_no::OrderNo;
use crate::status::{Status, StatusFilter};
use crate::timestamp::Timestamp;
use rust_decimal::Decimal;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;

/// A plan of the catalog, or a top-up plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    #[serde(default, deserialize_with = "lenient::string")]
    pub package_code: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub slug: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub name: String,
    #[serde(default, with = "money::opt_number")]
    pub price: Option<Decimal>,
    #[serde(default, deserialize_with = "lenient::string")]
    pub currency_code: String,
    /// Bytes (upstream).
    #[serde(default, deserialize_with = "lenient::opt_u64")]
    pub volume: Option<u64>,
    #[serde(default, deserialize_with = "lenient::opt_u64")]
    pub duration: Option<u64>,
    #[serde(default, deserialize_with = "lenient::string")]
    pub duration_unit: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub location_code: String,
    #[serde(default, with = "money::opt_number")]
    pub supplier_price: Option<Decimal>,
    #[serde(default)]
    pub pricing: Option<Pricing>,
}

impl Plan {
    /// The price the reseller sells at: `price`, or `pricing.sellPrice` when `price` is absent.
    pub fn sell_price(&self) -> Option<Decimal> {
        self.price.or_else(|| self.pricing.as_ref().and_then(|p| p.sell_price))
    }

    pub fn is_topup(&self) -> bool {
        self.package_code.starts_with("TOPUP_")
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pricing {
    #[serde(default, with = "money::opt_number")]
    pub cost_price: Option<Decimal>,
    #[serde(default, with = "money::opt_number")]
    pub sell_price: Option<Decimal>,
    #[serde(default, with = "money::opt_number")]
    pub margin: Option<Decimal>,
    #[serde(default, with = "money::opt_number")]
    pub margin_pct: Option<Decimal>,
    #[serde(default, deserialize_with = "lenient::string")]
    pub rule_scope: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub rule_type: String,
}

/// The fields of a stored order record, which both an order and an eSIM item carry (spec: the
/// eSIM list "is built from the same stored order records as Order").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderRecord {
    #[serde(default, deserialize_with = "lenient::order_no")]
    pub provider_order_no: OrderNo,
    #[serde(default, deserialize_with = "lenient::string")]
    pub slug: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub package_code: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub package_name: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub location_code: String,
    #[serde(default = "unknown_status")]
    pub status: Status,
    #[serde(default, deserialize_with = "lenient::opt_u64")]
    pub quantity: Option<u64>,
}

fn unknown_status() -> Status {
    Status::Other(String::new())
}

/// An order of the order list.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Order {
    #[serde(flatten)]
    pub record: OrderRecord,
    #[serde(default, with = "money::opt_string")]
    pub cost_price: Option<Decimal>,
    #[serde(default, with = "money::opt_string")]
    pub sell_price: Option<Decimal>,
    #[serde(default, with = "money::opt_string")]
    pub total_sell_price: Option<Decimal>,
    /// Not in the spec for an order (the wallet is in USD): where a server names another
    /// currency, its amounts are not the wallet's.
    #[serde(
        default,
        deserialize_with = "lenient::string",
        skip_serializing_if = "String::is_empty"
    )]
    pub currency_code: String,
    /// RFC 3339; not in the spec, served by the sandbox (ours).
    #[serde(default, skip_serializing_if = "Timestamp::is_empty")]
    pub created_at: Timestamp,
    /// For a top-up, the eSIM it tops up; not in the spec, served by the sandbox (ours).
    #[serde(
        default,
        deserialize_with = "lenient::iccid",
        skip_serializing_if = "EsimIccid::is_empty"
    )]
    pub iccid: EsimIccid,
}

/// An eSIM of the inventory: the order record plus the provider's data. Decoded by hand
/// (`Deserialize` below): a derived `#[serde(flatten)]` buffers every field of every eSIM of
/// every page before decoding it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Esim {
    #[serde(flatten)]
    pub record: OrderRecord,
    pub raw_order_json: RawOrder,
}

/// An eSIM's object decoded in one pass: its fields go straight to the order record, but for
/// `rawOrderJson`, which is taken aside on the way (`RawOrderAside`) into the provider's data.
impl<'de> Deserialize<'de> for Esim {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct EsimObject;

        impl<'de> serde::de::Visitor<'de> for EsimObject {
            type Value = Esim;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an eSIM object")
            }

            fn visit_map<M: serde::de::MapAccess<'de>>(self, map: M) -> Result<Esim, M::Error> {
                let mut raw = None;
                let aside = RawOrderAside { map, raw: &mut raw };
                let record = OrderRecord::deserialize(serde::de::value::MapAccessDeserializer::new(aside))?;
                Ok(Esim {
                    record,
                    raw_order_json: raw.unwrap_or_default(),
                })
            }
        }

        d.deserialize_map(EsimObject)
    }
}

/// An eSIM object's fields as the order record's, `rawOrderJson` taken out into `raw`.
struct RawOrderAside<'a, M> {
    map: M,
    raw: &'a mut Option<RawOrder>,
}

impl<'de, M: serde::de::MapAccess<'de>> serde::de::MapAccess<'de> for RawOrderAside<'_, M> {
    type Error = M::Error;

    fn next_key_seed<K: serde::de::DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>, M::Error> {
        use serde::de::IntoDeserializer;
        while let Some(KeyText(key)) = self.map.next_key::<KeyText<'de>>()? {
            if key == "rawOrderJson" {
                *self.raw = Some(self.map.next_value_seed(RawOrderSeed)?);
                continue;
            }
            let key: serde::de::value::CowStrDeserializer<'de, M::Error> = key.into_deserializer();
            return seed.deserialize(key).map(Some);
        }
        Ok(None)
    }

    fn next_value_seed<V: serde::de::DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, M::Error> {
        self.map.next_value_seed(seed)
    }
}

/// A key as the input holds it: borrowed where it can be (no allocation for each field of each
/// eSIM), owned where it had to be unescaped.
struct KeyText<'de>(std::borrow::Cow<'de, str>);

impl<'de> Deserialize<'de> for KeyText<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Text;

        impl<'de> serde::de::Visitor<'de> for Text {
            type Value = KeyText<'de>;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a field name")
            }

            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<KeyText<'de>, E> {
                Ok(KeyText(std::borrow::Cow::Borrowed(v)))
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<KeyText<'de>, E> {
                Ok(KeyText(std::borrow::Cow::Owned(v.to_string())))
            }
        }

        d.deserialize_str(Text)
    }
}

/// `raw_order` as a seed, for a value taken from a map.
struct RawOrderSeed;

impl<'de> serde::de::DeserializeSeed<'de> for RawOrderSeed {
    type Value = RawOrder;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<RawOrder, D::Error> {
        raw_order(d)
    }
}

/// What the attention rule reads of an eSIM: its status, its data used and its expiry.
impl crate::attention::Judged for Esim {
    fn class(&self) -> crate::esim_state::Class {
        self.facts().classify()
    }

    fn limits(&self) -> crate::attention::Limits {
        let raw = &self.raw_order_json;
        crate::attention::Limits::new(raw.order_usage, raw.total_volume, raw.expired_time.at())
    }
}

impl Esim {
    /// What its state is read from (`domain::esim_state`).
    pub fn facts(&self) -> crate::esim_state::Facts<'_> {
        let raw = &self.raw_order_json;
        let days = raw.duration_unit.is_empty() || raw.duration_unit.eq_ignore_ascii_case("DAY");
        crate::esim_state::Facts {
            status: Some(&self.record.status),
            smdp: &raw.smdp_status,
            eid: &raw.eid,
            active_type: raw.active_type,
            installed: raw.installation_time.at(),
            activated: raw.activate_time.at(),
            expires: raw.expired_time.at(),
            used: raw.order_usage,
            total: raw.total_volume,
            days: raw.total_duration.filter(|_| days),
            apn: &raw.apn,
        }
    }
}

/// `rawOrderJson`: at least `iccid`, `qrCodeUrl`, `smdpStatus` (spec); the rest as upstream.
/// Fields this version does not know are kept in `extra`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RawOrder {
    #[serde(default, deserialize_with = "lenient::iccid")]
    pub iccid: EsimIccid,
    #[serde(default, deserialize_with = "lenient::string")]
    pub qr_code_url: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub smdp_status: String,
    /// The LPA activation code; some records have only `qrCodeUrl`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ac: Option<String>,
    #[serde(
        default,
        deserialize_with = "lenient::string",
        skip_serializing_if = "String::is_empty"
    )]
    pub esim_tran_no: String,
    #[serde(
        default,
        deserialize_with = "lenient::string",
        skip_serializing_if = "String::is_empty"
    )]
    pub esim_status: String,
    #[serde(
        default,
        deserialize_with = "lenient::opt_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub total_volume: Option<u64>,
    #[serde(
        default,
        deserialize_with = "lenient::opt_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub order_usage: Option<u64>,
    #[serde(default, skip_serializing_if = "Timestamp::is_empty")]
    pub expired_time: Timestamp,
    /// The device's eUICC id, once the profile has been downloaded.
    #[serde(
        default,
        deserialize_with = "lenient::string",
        skip_serializing_if = "String::is_empty"
    )]
    pub eid: String,
    /// 1: validity starts at installation; 2: at the first connection.
    #[serde(
        default,
        deserialize_with = "lenient::opt_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub active_type: Option<u64>,
    /// 1: one volume; 2–4: daily volumes.
    #[serde(
        default,
        deserialize_with = "lenient::opt_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub data_type: Option<u64>,
    #[serde(default, skip_serializing_if = "Timestamp::is_empty")]
    pub installation_time: Timestamp,
    #[serde(default, skip_serializing_if = "Timestamp::is_empty")]
    pub activate_time: Timestamp,
    #[serde(
        default,
        deserialize_with = "lenient::opt_u64",
        skip_serializing_if = "Option::is_none"
    )]
    pub total_duration: Option<u64>,
    #[serde(
        default,
        deserialize_with = "lenient::string",
        skip_serializing_if = "String::is_empty"
    )]
    pub duration_unit: String,
    #[serde(
        default,
        deserialize_with = "lenient::string",
        skip_serializing_if = "String::is_empty"
    )]
    pub apn: String,
    /// Where the traffic leaves the network.
    #[serde(
        default,
        deserialize_with = "lenient::string",
        skip_serializing_if = "String::is_empty"
    )]
    pub ip_export: String,
    #[serde(
        default,
        deserialize_with = "lenient::string",
        skip_serializing_if = "String::is_empty"
    )]
    pub short_url: String,
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

/// `rawOrderJson` as an object, or as a string that holds the object's JSON (as upstream
/// sometimes stores it), or null: decoded straight into `RawOrder`, never through a `Value`
/// (a page of 100 eSIMs is decoded on every read of the list).
fn raw_order<'de, D: Deserializer<'de>>(d: D) -> Result<RawOrder, D::Error> {
    struct RawOrderForm;

    impl<'de> serde::de::Visitor<'de> for RawOrderForm {
        type Value = RawOrder;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an object, a string holding one, or null")
        }

        fn visit_unit<E: serde::de::Error>(self) -> Result<RawOrder, E> {
            Ok(RawOrder::default())
        }

        fn visit_none<E: serde::de::Error>(self) -> Result<RawOrder, E> {
            Ok(RawOrder::default())
        }

        fn visit_some<D2: Deserializer<'de>>(self, d: D2) -> Result<RawOrder, D2::Error> {
            d.deserialize_any(self)
        }

        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<RawOrder, E> {
            serde_json::from_str(text).map_err(E::custom)
        }

        fn visit_map<M: serde::de::MapAccess<'de>>(self, map: M) -> Result<RawOrder, M::Error> {
            RawOrder::deserialize(serde::de::value::MapAccessDeserializer::new(map))
        }
    }

    d.deserialize_any(RawOrderForm)
}

/// The reseller's account and company profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Profile {
    #[serde(default, deserialize_with = "lenient::string")]
    pub name: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub email: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub role: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub company_name: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub country: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub website: String,
    #[serde(default, deserialize_with = "lenient::string")]
    pub status: String,
    #[serde(default, with = "money::opt_string")]
    pub balance_usd: Option<Decimal>,
}

impl Profile {
    /// What the header shows: the company, or the account holder when no company is set.
    pub fn display_name(&self) -> &str {
        if self.company_name.trim().is_empty() {
            &self.name
        } else {
            &self.company_name
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderPage {
    #[serde(default, deserialize_with = "lenient::u64_or_zero")]
    pub page: u64,
    #[serde(default, deserialize_with = "lenient::u64_or_zero")]
    pub page_size: u64,
    #[serde(default, deserialize_with = "lenient::u64_or_zero")]
    pub total: u64,
    pub orders: Vec<Order>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EsimPage {
    #[serde(default, deserialize_with = "lenient::u64_or_zero")]
    pub total: u64,
    #[serde(default, deserialize_with = "lenient::u64_or_zero")]
    pub page: u64,
    #[serde(default, deserialize_with = "lenient::u64_or_zero")]
    pub page_size: u64,
    pub esims: Vec<Esim>,
}

/// Where a page of the whole eSIM list sits: its number and size, and the list's total then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PagePlace {
    pub page: u64,
    pub size: u64,
    pub total: u64,
}

impl PagePlace {
    /// Where `answer`, page `page` asked at `size` a page, sits: at the size the server says it
    /// used, where it says one.
    pub fn of(answer: &EsimPage, page: u64, size: u64) -> Self {
        PagePlace {
            page,
            size: if answer.page_size > 0 { answer.page_size } else { size },
            total: answer.total,
        }
    }

    /// The place (0: the newest) of the page's first item.
    pub fn first_place(&self) -> u64 {
        self.page.saturating_sub(1).saturating_mul(self.size)
    }
}

/// Where an index last saw an eSIM: its place counted from the oldest eSIM, and the list's
/// total then. Its place now is `total now - 1 - from_end`, whatever was added since.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Whereabouts {
    pub from_end: u64,
    pub total: u64,
}

impl Whereabouts {
    /// Its place in a list of `total` eSIMs.
    pub fn place_in(&self, total: u64) -> Option<u64> {
        total.checked_sub(self.from_end + 1)
    }
}

/// The answer to a top-up or a new order: the stored order and the wallet after the debit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Placed {
    pub order: Order,
    #[serde(default, with = "money::opt_string")]
    pub balance_usd: Option<Decimal>,
}

/// Query of `GET /reseller/orders`; `None` leaves the server's default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OrderQuery {
    pub page: Option<u64>,
    pub page_size: Option<u64>,
    pub status: StatusFilter,
    pub q: Option<String>,
    /// Only the orders of this eSIM (docs/api-contract.md; a server may ignore it).
    pub iccid: Option<Iccid>,
}

/// Query of `GET /reseller/esims`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EsimQuery {
    pub page: Option<u64>,
    pub page_size: Option<u64>,
    pub status: StatusFilter,
    /// Only this eSIM (docs/api-contract.md; a server may ignore it: check what comes back).
    pub iccid: Option<Iccid>,
}

/// Body of `PATCH /reseller/profile`: only the fields that are set are sent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileUpdate {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub company_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub country: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub website: Option<String>,
}

/// Body of `POST /portal/topups`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TopupRequest {
    pub iccid: Iccid,
    pub slug: String,
    pub qty: u32,
}

/// Body of `POST /portal/orders`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OrderRequest {
    pub slug: String,
    pub qty: u32,
}

/// Reads a plan list in any envelope of docs/api-contract.md: a bare array, `{"data":[…]}`,
/// `{"packageList":[…]}`, `{"data":{"packageList":[…]}}` or `{"obj":{"packageList":[…]}}`.
pub fn parse_plan_list(body: &[u8]) -> Result<Vec<Plan>, String> {
    let raw: &RawValue = serde_json::from_slice(body).map_err(|e| e.to_string())?;
    plans_in(raw, 0)
}

fn plans_in(raw: &RawValue, depth: u8) -> Result<Vec<Plan>, String> {
    #[derive(Deserialize)]
    struct Envelope<'a> {
        #[serde(borrow, default, rename = "packageList")]
        package_list: Option<&'a RawValue>,
        #[serde(borrow, default)]
        data: Option<&'a RawValue>,
        #[serde(borrow, default)]
        obj: Option<&'a RawValue>,
    }
    let text = raw.get().trim_start();
    if text.starts_with('[') {
        return serde_json::from_str(text).map_err(|e| e.to_string());
    }
    if text.starts_with('{') && depth < 2 {
        let env: Envelope = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if let Some(inner) = env.package_list.or(env.data).or(env.obj) {
            return plans_in(inner, depth + 1);
        }
    }
    Err("expected a list of plans (an array, or one inside data, packageList or obj)".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rawOrderJson` in each form a server sends: an object, a string holding one, null, or
    /// missing; the same record from the first two, unknown fields kept; anything else refused.
    #[test]
    fn raw_order_in_every_form() {
        let record = r#""orderNo":"B1","status":"in_use","packageName":"P","slug":"s","locationCode":"FR""#;
        let object = r#"{"iccid":"8944100000000000001","smdpStatus":"ENABLED","orderUsage":5,"newField":[1]}"#;
        let as_object: Esim = serde_json::from_str(&format!("{{{record},\"rawOrderJson\":{object}}}")).unwrap();
        let quoted = serde_json::to_string(object).unwrap();
        let as_string: Esim = serde_json::from_str(&format!("{{{record},\"rawOrderJson\":{quoted}}}")).unwrap();
        assert_eq!(as_object, as_string);
        assert_eq!(as_object.raw_order_json.order_usage, Some(5));
        assert_eq!(as_object.raw_order_json.smdp_status, "ENABLED");
        assert_eq!(as_object.raw_order_json.extra["newField"], serde_json::json!([1]));
        for none in [format!("{{{record},\"rawOrderJson\":null}}"), format!("{{{record}}}")] {
            let esim: Esim = serde_json::from_str(&none).unwrap();
            assert_eq!(esim.raw_order_json, RawOrder::default(), "{none}");
        }
        // The record's fields around it, one of them escaped, one unknown, in any order.
        let around = format!(
            r#"{{"newTopLevel":{{"a":[1]}},"rawOrderJson":{object},"package\u004eame":"P2","status":"in_use"}}"#
        );
        let esim: Esim = serde_json::from_str(&around).unwrap();
        assert_eq!(esim.record.package_name, "P2");
        assert_eq!(esim.raw_order_json, as_object.raw_order_json);
        for bad in ["5", "[1]", "\"not json\""] {
            let text = format!("{{{record},\"rawOrderJson\":{bad}}}");
            assert!(serde_json::from_str::<Esim>(&text).is_err(), "{text}");
        }
    }
}
