//! How each record reads to a person: the labels, their order and the formats, in one place for
//! the one-shot commands' tables and the dashboard's detail views. Values are returned as they
//! are; whoever draws them sanitises (the tables and the views both do).

use super::money::{amount, money};
use super::volume::format_bytes;
use esimdash_api::model::{Esim, Order, Plan, Profile};
use esimdash_domain::location::{GLOBAL, REGIONAL, area};
use esimdash_domain::status::Status;

/// Label and value rows of a record.
pub type Fields = Vec<(&'static str, String)>;

/// `30 days`, `1 day`.
pub fn validity(plan: &Plan) -> String {
    match (plan.duration, plan.duration_unit.as_str()) {
        (Some(1), "DAY") => "1 day".to_string(),
        (Some(d), "DAY" | "") => format!("{d} days"),
        (Some(d), unit) => format!("{d} {unit}"),
        (None, _) => "-".to_string(),
    }
}

/// `Japan`, `Region`, `Global`, where no plan name is at hand (`area` says more with one);
/// an unknown code as it is.
pub fn location(code: &str) -> String {
    area(code, "")
}

/// `Japan (JP)`, `Region (Europe)`, `Global`: the code beside a country only, where people
/// search by it; `!RG` and `!GL` mean nothing to them.
pub fn location_with_code(code: &str, plan_name: &str) -> String {
    let words = area(code, plan_name);
    match code.trim() {
        REGIONAL | GLOBAL => words,
        c if c == words => words,
        c => format!("{words} ({c})"),
    }
}

/// `1.2 GB of 3 GB`, or `-`.
pub fn usage(used: Option<u64>, total: Option<u64>) -> String {
    match (used, total) {
        (Some(u), Some(t)) => format!("{} of {}", format_bytes(u), format_bytes(t)),
        _ => "-".to_string(),
    }
}

pub fn plan_fields(p: &Plan) -> Fields {
    let pricing = p.pricing.as_ref();
    let currency = p.currency_code.as_str();
    vec![
        ("Plan", p.name.clone()),
        ("Slug", p.slug.clone()),
        ("Package code", p.package_code.clone()),
        ("Location", location_with_code(&p.location_code, &p.name)),
        ("Data", p.volume.map(format_bytes).unwrap_or_default()),
        ("Validity", validity(p)),
        ("Cost price", money(pricing.and_then(|x| x.cost_price), currency)),
        ("Sell price", money(p.sell_price(), currency)),
        ("Margin", money(pricing.and_then(|x| x.margin), currency)),
        ("Margin %", amount(pricing.and_then(|x| x.margin_pct))),
        (
            "Pricing rule",
            pricing
                .map(|x| format!("{} / {}", x.rule_scope, x.rule_type))
                .unwrap_or_default(),
        ),
        ("Supplier price", money(p.supplier_price, currency)),
    ]
}

pub fn order_fields(o: &Order) -> Fields {
    let r = &o.record;
    let mut rows = vec![
        ("Order number", r.provider_order_no.to_string()),
        ("Created", o.created_at.short()),
        ("Status", in_words(&r.status)),
        ("Package", r.package_name.clone()),
        ("Package code", r.package_code.clone()),
        ("Slug", r.slug.clone()),
        ("Location", location_with_code(&r.location_code, &r.package_name)),
        ("Quantity", r.quantity.map(|q| q.to_string()).unwrap_or_default()),
        ("Cost price", money(o.cost_price, "USD")),
        ("Sell price", money(o.sell_price, "USD")),
        ("Total", money(o.total_sell_price, "USD")),
    ];
    if !o.iccid.is_empty() {
        rows.push(("Tops up eSIM", o.iccid.to_string()));
    }
    rows
}

pub fn esim_fields(e: &Esim) -> Fields {
    let raw = &e.raw_order_json;
    vec![
        ("ICCID", raw.iccid.to_string()),
        ("Status", super::verdict::state_in_full(e)),
        ("EID", raw.eid.clone()),
        ("Package", e.record.package_name.clone()),
        ("Order number", e.record.provider_order_no.to_string()),
        (
            "Location",
            location_with_code(&e.record.location_code, &e.record.package_name),
        ),
        ("Data used", usage(raw.order_usage, raw.total_volume)),
        ("Installed", raw.installation_time.short()),
        ("Activated", raw.activate_time.short()),
        ("Expires", raw.expired_time.short()),
        ("APN", raw.apn.clone()),
    ]
    .into_iter()
    .filter(|(_, value)| !value.is_empty())
    .collect()
}

/// `expired unused (unused_expired)`: the words, and the value as the API sends it.
pub fn in_words(status: &Status) -> String {
    match super::verdict::status_words(status) {
        words if words == status.as_str() => words.to_string(),
        words => format!("{words} ({status})"),
    }
}

pub fn profile_fields(p: &Profile) -> Fields {
    let unset = |v: &str| {
        if v.is_empty() {
            "(not set)".to_string()
        } else {
            v.to_string()
        }
    };
    vec![
        ("Name", p.name.clone()),
        ("E-mail", p.email.clone()),
        ("Role", p.role.clone()),
        ("Account status", p.status.clone()),
        ("Company", unset(&p.company_name)),
        ("Country", unset(&p.country)),
        ("Website", unset(&p.website)),
        ("Balance", money(p.balance_usd, "USD")),
    ]
}
