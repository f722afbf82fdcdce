//! The JSON the sandbox sends, field by field as the spec and docs/api-contract.md name them. Plan money is
//! a JSON number with exact digits; order money and balances are decimal strings.

use super::lifecycle;
use super::records::{EsimRecord, OrderRecord, PlanRecord, Reseller};
use chrono::{DateTime, SecondsFormat, Utc};
use esimdash_domain::money;
use esimdash_domain::money::format_amount;
use esimdash_domain::status::Status;
use rust_decimal::Decimal;
use serde::Serialize;

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanJson<'a> {
    package_code: &'a str,
    slug: &'a str,
    name: &'a str,
    #[serde(serialize_with = "money::ser_number")]
    price: Decimal,
    currency_code: &'static str,
    volume: u64,
    duration: u32,
    duration_unit: &'static str,
    location_code: &'a str,
    #[serde(serialize_with = "money::ser_number")]
    supplier_price: Decimal,
    pricing: PricingJson,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PricingJson {
    #[serde(serialize_with = "money::ser_number")]
    cost_price: Decimal,
    #[serde(serialize_with = "money::ser_number")]
    sell_price: Decimal,
    #[serde(serialize_with = "money::ser_number")]
    margin: Decimal,
    #[serde(serialize_with = "money::ser_number")]
    margin_pct: Decimal,
    rule_scope: &'static str,
    rule_type: &'static str,
}

pub fn plan(p: &PlanRecord, markup_pct: Decimal) -> PlanJson<'_> {
    let priced = p.priced(markup_pct);
    PlanJson {
        package_code: &p.package_code,
        slug: &p.slug,
        name: &p.name,
        price: priced.sell,
        currency_code: "USD",
        volume: p.volume,
        duration: p.duration,
        duration_unit: "DAY",
        location_code: &p.location_code,
        supplier_price: p.supplier_price,
        pricing: PricingJson {
            cost_price: priced.cost,
            sell_price: priced.sell,
            margin: priced.margin,
            margin_pct: priced.margin_pct,
            rule_scope: "global",
            rule_type: "percent",
        },
    }
}

/// The stored order record's fields, shared by an order and an eSIM item.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RecordJson<'a> {
    provider_order_no: String,
    slug: &'a str,
    package_code: &'a str,
    package_name: &'a str,
    location_code: &'a str,
    status: &'a str,
    quantity: u32,
}

fn record(o: &OrderRecord) -> RecordJson<'_> {
    RecordJson {
        provider_order_no: o.provider_order_no(),
        slug: &o.plan.slug,
        package_code: &o.plan.package_code,
        package_name: &o.plan.name,
        location_code: &o.plan.location_code,
        status: o.status.as_str(),
        quantity: o.quantity,
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderJson<'a> {
    #[serde(flatten)]
    record: RecordJson<'a>,
    cost_price: String,
    sell_price: String,
    total_sell_price: String,
    created_at: String,
    /// For a top-up, the eSIM it tops up (ours: lets a client find a top-up whose answer was lost).
    #[serde(skip_serializing_if = "Option::is_none")]
    iccid: Option<&'a str>,
}

pub fn order(o: &OrderRecord) -> OrderJson<'_> {
    OrderJson {
        record: record(o),
        cost_price: format_amount(o.cost_price()),
        sell_price: format_amount(o.sell_price),
        total_sell_price: format_amount(o.total_sell_price()),
        created_at: o.created_at.to_rfc3339_opts(SecondsFormat::Secs, true),
        iccid: o.topup_of.as_deref(),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EsimJson<'a> {
    #[serde(flatten)]
    record: RecordJson<'a>,
    raw_order_json: RawOrderJson<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RawOrderJson<'a> {
    iccid: String,
    qr_code_url: String,
    smdp_status: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    ac: Option<String>,
    esim_tran_no: String,
    esim_status: String,
    eid: String,
    active_type: u8,
    data_type: u8,
    installation_time: String,
    activate_time: String,
    total_volume: u64,
    order_usage: u64,
    total_duration: u32,
    duration_unit: &'static str,
    expired_time: String,
    apn: &'a str,
    ip_export: &'a str,
    short_url: String,
}

/// RFC 3339, or empty when there is no such time (upstream's way).
fn time_or_empty(t: Option<DateTime<Utc>>) -> String {
    t.map(|t| t.to_rfc3339_opts(SecondsFormat::Secs, true))
        .unwrap_or_default()
}

/// `origin` is the sandbox's own `http://host:port`, where it serves the QR images.
pub fn esim<'a>(o: &'a OrderRecord, e: &'a EsimRecord, origin: &str) -> EsimJson<'a> {
    EsimJson {
        record: record(o),
        raw_order_json: RawOrderJson {
            iccid: e.iccid(),
            qr_code_url: format!("{origin}/qr/{}.png", e.qr_name()),
            smdp_status: e.state.smdp_status.as_str(),
            ac: e.publish_ac.then(|| e.activation_code()),
            esim_tran_no: e.esim_tran_no(),
            esim_status: esim_status(&o.status),
            eid: e.state.eid().map(|eid| format!("{eid:032}")).unwrap_or_default(),
            active_type: e.state.active_type,
            data_type: e.state.data_type,
            installation_time: time_or_empty(e.state.installation_time),
            activate_time: time_or_empty(e.state.activate_time),
            total_volume: e.state.total_volume,
            order_usage: e.state.order_usage,
            total_duration: e.state.duration_days,
            duration_unit: "DAY",
            expired_time: time_or_empty(Some(e.state.expired_time)),
            apn: lifecycle::APN,
            ip_export: e.state.ip_export(),
            short_url: format!("{origin}/qr/{}.png", e.qr_name()),
        },
    }
}

/// The provider's `esimStatus`: the order status in upper case, `REVOKE` for `revoked`.
fn esim_status(status: &Status) -> String {
    match status {
        Status::Revoked => "REVOKE".to_string(),
        s => s.as_str().to_ascii_uppercase(),
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProfileJson<'a> {
    name: &'a str,
    email: &'a str,
    role: &'static str,
    company_name: &'a str,
    country: &'a str,
    website: &'a str,
    status: &'a str,
    balance_usd: String,
}

pub fn profile(r: &Reseller) -> ProfileJson<'_> {
    let company = r.profile.as_ref();
    ProfileJson {
        name: &r.name,
        email: &r.email,
        role: "reseller",
        company_name: company.map_or("", |c| c.company_name.as_str()),
        country: company.map_or("", |c| c.country.as_str()),
        website: company.map_or("", |c| c.website.as_str()),
        status: &r.status,
        balance_usd: format_amount(r.balance),
    }
}

/// `{"data": …}`: a plan, or the catalog.
#[derive(Serialize)]
pub struct DataEnvelope<T> {
    pub data: T,
}

/// Top-up availability: `{"iccid": …, "data": [Plan, …]}`.
#[derive(Serialize)]
pub struct Availability<'a, T> {
    pub iccid: &'a str,
    pub data: T,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OrdersPage<'a> {
    pub page: u64,
    pub page_size: u64,
    pub total: u64,
    pub orders: Vec<OrderJson<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EsimsPage<'a> {
    pub total: u64,
    pub page: u64,
    pub page_size: u64,
    pub esims: Vec<EsimJson<'a>>,
}

/// `{"profile": …}`, with `"ok": true` after an update.
#[derive(Serialize)]
pub struct ProfileEnvelope<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    pub profile: ProfileJson<'a>,
}

/// The answer to a top-up or an order: `{"ok": true, "order": …, "balanceUsd": "…"}`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Placed<'a> {
    pub ok: bool,
    pub order: OrderJson<'a>,
    pub balance_usd: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Balance {
    pub balance_usd: String,
}
