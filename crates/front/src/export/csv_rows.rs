//! The CSV columns of each record. Money is the API's exact decimal, a time the API's own text,
//! a volume in bytes: what a spreadsheet or a script can compute with.
//!
//! Text from the API is written so that a spreadsheet shows it as text (OWASP's advice on CSV
//! injection): a cell that starts with `=`, `+`, `-`, `@`, a tab or a carriage return, which
//! Excel, LibreOffice and Google Sheets would run as a formula, gets a `'` in front; control and
//! bidirectional characters become U+FFFD, as on the screen. Numeric columns are written by us
//! from exact decimals and integers, never from the API's text, so `-1.50` stays `-1.50`.

use esimdash_api::model::{Esim, Order, OrderRecord, Plan};
use esimdash_domain::text::sanitize;
use rust_decimal::Decimal;
use std::io::Write;

fn decimal(d: Option<Decimal>) -> String {
    d.map(|d| d.to_string()).unwrap_or_default()
}

fn number(n: Option<u64>) -> String {
    n.map(|n| n.to_string()).unwrap_or_default()
}

/// What makes a spreadsheet read a cell as a formula (OWASP, "CSV Injection").
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// A text cell as a spreadsheet must show it: as text, with nothing invisible in it.
pub fn text(s: &str) -> String {
    let clean = sanitize(s);
    if s.starts_with(FORMULA_STARTS) {
        format!("'{clean}")
    } else {
        clean.into_owned()
    }
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
        text(&p.slug),
        text(&p.name),
        text(&p.package_code),
        text(&p.location_code),
        number(p.volume),
        number(p.duration),
        text(&p.duration_unit),
        text(&p.currency_code),
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

/// The plan a record is of: `packageName`, `slug`, `packageCode`, `locationCode`, in the
/// order both orders and eSIMs list them.
fn plan_cells(r: &OrderRecord) -> [String; 4] {
    [&r.package_name, &r.slug, &r.package_code, &r.location_code].map(|t| text(t))
}

pub fn order(o: &Order) -> Vec<String> {
    let r = &o.record;
    let mut row = vec![
        text(&r.provider_order_no),
        text(o.created_at.text()),
        text(&r.status.to_string()),
    ];
    row.extend(plan_cells(r));
    row.extend([
        number(r.quantity),
        decimal(o.cost_price),
        decimal(o.sell_price),
        decimal(o.total_sell_price),
        text(o.iccid.as_str()),
    ]);
    row
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
    "state",
];

pub fn esim(e: &Esim) -> Vec<String> {
    let (r, raw) = (&e.record, &e.raw_order_json);
    let mut row = vec![
        text(raw.iccid.as_str()),
        text(&r.status.to_string()),
        text(&raw.smdp_status),
    ];
    row.extend(plan_cells(r));
    row.extend([
        text(&r.provider_order_no),
        number(raw.order_usage),
        number(raw.total_volume),
        text(raw.expired_time.text()),
        text(e.facts().classify().key()),
    ]);
    row
}

/// A CSV writer with RFC 4180's line ends, its header row written.
pub fn writer<W: Write>(out: W, header: &[&str]) -> csv::Result<csv::Writer<W>> {
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .from_writer(out);
    w.write_record(header)?;
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows as a CSV reader (and so a spreadsheet's import) reads them back.
    fn written(header: &[&str], rows: &[Vec<String>]) -> Vec<Vec<String>> {
        let mut w = writer(Vec::new(), header).unwrap();
        for row in rows {
            w.write_record(row).unwrap();
        }
        let bytes = w.into_inner().unwrap();
        assert!(
            !bytes.iter().any(|&b| b < 0x20 && b != b'\r' && b != b'\n' || b == 0x7f),
            "no control character but the line ends"
        );
        let text = String::from_utf8(bytes).unwrap();
        assert!(!text.contains('\u{9b}') && !text.contains('\u{202e}'));
        assert_eq!(text.matches("\r\n").count(), rows.len() + 1, "one line a record");
        csv::Reader::from_reader(text.as_bytes())
            .records()
            .map(|r| r.unwrap().iter().map(str::to_string).collect())
            .collect()
    }

    #[test]
    fn a_cell_a_spreadsheet_would_run_shows_as_text() {
        for (raw, cell) in [
            (
                "=HYPERLINK(\"http://evil.example\",\"Click\")",
                "'=HYPERLINK(\"http://evil.example\",\"Click\")",
            ),
            ("+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1:A9)", "'@SUM(A1:A9)"),
            ("\t=1+1", "'\u{FFFD}=1+1"),
            ("\r=1+1", "'\u{FFFD}=1+1"),
            // Not at the start, or after a character that stops the formula: as it is.
            ("Europe = 30 countries", "Europe = 30 countries"),
            (" =1+1", " =1+1"),
            ("", ""),
            ("Türkiye 5 GB", "Türkiye 5 GB"),
        ] {
            assert_eq!(text(raw), cell, "{raw:?}");
        }
    }

    #[test]
    fn control_characters_never_reach_a_cell() {
        for (raw, cell) in [
            ("Bad\u{1b}]0;owned\u{7}Name", "Bad\u{FFFD}]0;owned\u{FFFD}Name"),
            ("two\nlines", "two\u{FFFD}lines"),
            ("nul\0", "nul\u{FFFD}"),
            ("del\u{7f} csi\u{9b}", "del\u{FFFD} csi\u{FFFD}"),
            ("\u{202e}gpj.exe", "\u{FFFD}gpj.exe"),
            ("\n=1+1", "\u{FFFD}=1+1"),
        ] {
            assert_eq!(text(raw), cell, "{raw:?}");
        }
    }

    #[test]
    fn numeric_columns_stay_exact_even_negative_and_text_columns_are_safe() {
        let p: Plan = serde_json::from_value(serde_json::json!({
            "slug": "=cmd|'/C calc'!A0",
            "name": "-10% promo\r\nEurope",
            "packageCode": "@EU",
            "locationCode": "+FR",
            "volume": 5368709120u64,
            "duration": 30,
            "durationUnit": "DAY",
            "currencyCode": "USD",
            "price": "-0.10",
            "pricing": {"costPrice": "12.3456", "margin": "-1.50", "marginPct": "-10.000000001"}
        }))
        .unwrap();
        let rows = written(PLAN_HEADER, &[plan(&p)]);
        assert_eq!(
            rows[0],
            [
                "'=cmd|'/C calc'!A0",
                "'-10% promo\u{FFFD}\u{FFFD}Europe",
                "'@EU",
                "'+FR",
                "5368709120",
                "30",
                "DAY",
                "USD",
                "12.3456",
                "-0.10",
                "-1.50",
                "-10.000000001"
            ]
        );
        let o: Order = serde_json::from_value(serde_json::json!({
            "providerOrderNo": "-ORD-1",
            "packageName": "=1+1",
            "status": "got_resource",
            "quantity": 2,
            "costPrice": "-3.20",
            "sellPrice": "0.000001",
            "totalSellPrice": "-6.40",
            "createdAt": "2026-11-20T12:00:00Z",
            "iccid": "8944500000000000014"
        }))
        .unwrap();
        let rows = written(ORDER_HEADER, &[order(&o)]);
        assert_eq!(rows[0][0], "'-ORD-1");
        assert_eq!(rows[0][3], "'=1+1");
        assert_eq!(rows[0][7..11], ["2", "-3.20", "0.000001", "-6.40"]);
        assert_eq!(rows[0][11], "8944500000000000014");
        let e: Esim = serde_json::from_value(serde_json::json!({
            "providerOrderNo": "ORD-2",
            "packageName": "Japan\u{1b}[2J 3 GB",
            "status": "in_use",
            "rawOrderJson": {"iccid": "=8944", "smdpStatus": "@enabled", "orderUsage": 1, "totalVolume": 2,
                             "expiredTime": "-"}
        }))
        .unwrap();
        let rows = written(ESIM_HEADER, &[esim(&e)]);
        assert_eq!(rows[0][0], "'=8944");
        assert_eq!(rows[0][2], "'@enabled");
        assert_eq!(rows[0][3], "Japan\u{FFFD}[2J 3 GB");
        assert_eq!(
            rows[0][8..],
            ["1", "2", "'-", "unknown"],
            "a combination the provider does not document"
        );
    }
}
