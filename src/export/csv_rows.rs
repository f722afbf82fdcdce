//! The CSV columns of each record. Money is the API's exact decimal, a time the API's own text,
//! a volume in bytes: what a spreadsheet or a script can compute with.

use crate::api::model::{Esim, Order, Plan};
use rust_decimal::Decimal;
use std::io::Write;

fn decimal(d: Option<Decimal>) -> String {
    d.map(|d| d.to_string()).unwrap_or_default()
}

fn number(n: Option<u64>) -> String {
    n.map(|n| n.to_string()).unwrap_or_default()
}

pub const PLAN_HEADER: &[&str] = &[
    "slug",
    "name",
    "packageCode",
    "locationCode",
    "volumeBytes",
    "duration",
    "durationUnit",
    "currency",
    "costPrice",
    "sellPrice",
    "margin",
    "marginPct",
];

pub fn plan(p: &Plan) -> Vec<String> {
    let pricing = p.pricing.as_ref();
    vec![
        p.slug.clone(),
        p.name.clone(),
        p.package_code.clone(),
        p.location_code.clone(),
        number(p.volume),
        number(p.duration),
        p.duration_unit.clone(),
        p.currency_code.clone(),
        decimal(pricing.and_then(|x| x.cost_price)),
        decimal(p.sell_price()),
        decimal(pricing.and_then(|x| x.margin)),
        decimal(pricing.and_then(|x| x.margin_pct)),
    ]
}

pub const ORDER_HEADER: &[&str] = &[
    "orderNo",
    "createdAt",
    "status",
    "packageName",
    "slug",
    "packageCode",
    "locationCode",
    "quantity",
    "costPrice",
    "sellPrice",
    "totalSellPrice",
    "iccid",
];

pub fn order(o: &Order) -> Vec<String> {
    let r = &o.record;
    vec![
        r.provider_order_no.clone(),
        o.created_at.clone(),
        r.status.to_string(),
        r.package_name.clone(),
        r.slug.clone(),
        r.package_code.clone(),
        r.location_code.clone(),
        number(r.quantity),
        decimal(o.cost_price),
        decimal(o.sell_price),
        decimal(o.total_sell_price),
        o.iccid.clone(),
    ]
}

pub const ESIM_HEADER: &[&str] = &[
    "iccid",
    "status",
    "smdpStatus",
    "packageName",
    "slug",
    "packageCode",
    "locationCode",
    "orderNo",
    "usedBytes",
    "totalBytes",
    "expiredTime",
];

pub fn esim(e: &Esim) -> Vec<String> {
    let (r, raw) = (&e.record, &e.raw_order_json);
    vec![
        raw.iccid.clone(),
        r.status.to_string(),
        raw.smdp_status.clone(),
        r.package_name.clone(),
        r.slug.clone(),
        r.package_code.clone(),
        r.location_code.clone(),
        r.provider_order_no.clone(),
        number(raw.order_usage),
        number(raw.total_volume),
        raw.expired_time.clone(),
    ]
}

/// A CSV writer with RFC 4180's line ends, its header row written.
pub fn writer<W: Write>(out: W, header: &[&str]) -> csv::Result<csv::Writer<W>> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .from_writer(out);
    w.write_record(header)?;
    Ok(w)
}
