//! Decoding from the spec's field tables and every docs/api-contract.md variant, and from hostile bodies:
//! the right values, or a clear error; never a panic, never a guessed amount.

use esimdash_api::model::{Esim, EsimPage, Order, OrderPage, Profile, parse_plan_list};
use esimdash_domain::status::Status;
use rust_decimal::Decimal;

const PLAN: &str = r#"{"packageCode":"CKH491","slug":"NA-3_1_7","name":"North America 1GB 7Days","price":5.7,
  "currencyCode":"USD","volume":1073741824,"duration":7,"durationUnit":"DAY","locationCode":"!RG",
  "supplierPrice":4.75,"pricing":{"costPrice":4.75,"sellPrice":5.7,"margin":0.95,"marginPct":20.00,
  "ruleScope":"global","ruleType":"percent"}}"#;

#[test]
fn a_plan_from_the_spec_table() {
    let plans = parse_plan_list(format!("[{PLAN}]").as_bytes()).unwrap();
    let p = &plans[0];
    assert_eq!(
        (p.package_code.as_str(), p.slug.as_str(), p.location_code.as_str()),
        ("CKH491", "NA-3_1_7", "!RG")
    );
    assert_eq!(
        (p.volume, p.duration, p.duration_unit.as_str()),
        (Some(1_073_741_824), Some(7), "DAY")
    );
    assert_eq!(p.price, Some(Decimal::new(57, 1)));
    let pricing = p.pricing.as_ref().unwrap();
    assert_eq!(pricing.margin, Some(Decimal::new(95, 2)));
    assert_eq!(pricing.margin_pct, Some(Decimal::new(2000, 2)));
}

#[test]
fn every_catalog_envelope_of_the_contract() {
    for body in [
        format!("[{PLAN}]"),
        format!(r#"{{"data":[{PLAN}]}}"#),
        format!(r#"{{"packageList":[{PLAN}]}}"#),
        format!(r#"{{"data":{{"packageList":[{PLAN}]}}}}"#),
        format!(r#"{{"success":true,"obj":{{"packageList":[{PLAN}]}}}}"#),
        format!("  \n[{PLAN}]"),
    ] {
        let plans = parse_plan_list(body.as_bytes()).unwrap_or_else(|e| panic!("{e}: {body:.60}"));
        assert_eq!(plans.len(), 1);
        assert_eq!(plans[0].slug, "NA-3_1_7");
    }
    for bad in [
        r#"{"plans":[]}"#,
        r#"{"data":5}"#,
        "null",
        r#"{"data":{"data":{"data":[]}}}"#,
    ] {
        let err = parse_plan_list(bad.as_bytes()).unwrap_err();
        assert!(
            err.contains("list of plans") || err.contains("expected"),
            "{bad}: {err}"
        );
    }
}

#[test]
fn an_order_from_the_spec_table_and_money_as_strings_or_numbers() {
    let order: Order = serde_json::from_str(
        r#"{"providerOrderNo":"B23120118131854","slug":"NA-3_1_7",
      "packageCode":"CKH491","packageName":"North America 1GB 7Days","locationCode":"!RG","status":"got_resource",
      "quantity":1,"costPrice":"4.75","sellPrice":"5.70","totalSellPrice":"5.70"}"#,
    )
    .unwrap();
    assert_eq!(order.record.status, Status::GotResource);
    assert_eq!(
        (order.cost_price, order.total_sell_price),
        (Some(Decimal::new(475, 2)), Some(Decimal::new(570, 2)))
    );
    // A server that sends numbers where the spec says strings is read the same way.
    let o: Order =
        serde_json::from_str(r#"{"providerOrderNo":12345,"costPrice":4.75,"quantity":"2","status":"NEW_THING"}"#)
            .unwrap();
    assert_eq!(
        (o.record.provider_order_no.as_str(), o.cost_price, o.record.quantity),
        ("12345", Some(Decimal::new(475, 2)), Some(2))
    );
    assert_eq!(
        o.record.status.as_str(),
        "NEW_THING",
        "an unknown status is kept as it is"
    );
    let page: OrderPage = serde_json::from_str(r#"{"page":1,"pageSize":20,"total":0,"orders":[]}"#).unwrap();
    assert_eq!(page.total, 0);
}

#[test]
fn an_esim_with_raw_order_json_as_object_or_as_string() {
    let raw = r#"{"iccid":"8944100000002080711","qrCodeUrl":"https://x/q.png","smdpStatus":"RELEASED","ac":"LPA:1$a$b","totalVolume":1073741824,"orderUsage":"0","vendorThing":{"x":1}}"#;
    let as_object: Esim = serde_json::from_str(&format!(r#"{{"status":"in_use","rawOrderJson":{raw}}}"#)).unwrap();
    let as_string: Esim = serde_json::from_str(&format!(
        r#"{{"status":"in_use","rawOrderJson":{}}}"#,
        serde_json::to_string(raw).unwrap()
    ))
    .unwrap();
    assert_eq!(as_object, as_string);
    let r = &as_object.raw_order_json;
    assert_eq!(
        (r.iccid.as_str(), r.smdp_status.as_str(), r.ac.as_deref()),
        ("8944100000002080711", "RELEASED", Some("LPA:1$a$b"))
    );
    assert_eq!((r.total_volume, r.order_usage), (Some(1_073_741_824), Some(0)));
    assert!(r.extra.contains_key("vendorThing"), "unknown fields are kept");
    let bare: Esim = serde_json::from_str(r#"{"rawOrderJson":null}"#).unwrap();
    assert_eq!(bare.raw_order_json.iccid, "");
    let page: EsimPage = serde_json::from_str(r#"{"total":"3","page":1,"pageSize":20,"esims":[]}"#).unwrap();
    assert_eq!(page.total, 3);
}

#[test]
fn a_profile_from_the_spec_table() {
    let p: Profile = serde_json::from_str(
        r#"{"name":"Ada","email":"a@b","role":"reseller","companyName":"",
      "country":"","website":"","status":"approved","balanceUsd":"250.00"}"#,
    )
    .unwrap();
    assert_eq!(p.balance_usd, Some(Decimal::new(25000, 2)));
    assert_eq!(p.display_name(), "Ada", "no company: the account holder's name");
}

#[test]
fn hostile_bodies_are_errors_not_panics_and_never_guessed_money() {
    let huge_int = format!("{{\"balanceUsd\":{}}}", "9".repeat(400));
    let deep = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
    let hostile: Vec<&str> = vec![
        r#"{"balanceUsd":"12.5.0"}"#,
        r#"{"balanceUsd":"NaN"}"#,
        r#"{"balanceUsd":true}"#,
        r#"{"balanceUsd":1e400}"#,
        &huge_int,
        r#"{"balanceUsd":"1e"}"#,
        r#"{"name":"#,
        "\u{0}\u{1}",
        &deep,
        r#"{"balanceUsd":{"$n":1}}"#,
    ];
    for body in hostile {
        let result = serde_json::from_str::<Profile>(body);
        assert!(result.is_err(), "{body:.50} must not decode");
    }
    for body in [
        "",
        "[",
        "{\"data\":[{\"price\":\"free\"}]}",
        "{\"data\":[{\"volume\":-5}]}",
        &deep,
    ] {
        assert!(parse_plan_list(body.as_bytes()).is_err(), "{body:.50}");
    }
    // Control characters inside strings decode (JSON allows escapes) but are kept for the view to
    // sanitise, not dropped.
    let p: Profile = serde_json::from_str(r#"{"name":"a\u001b[2Jb","balanceUsd":"1"}"#).unwrap();
    assert_eq!(esimdash_domain::text::sanitize(&p.name), "a\u{FFFD}[2Jb");
}

mod arbitrary_json {
    //! Decoders fed arbitrary JSON, shaped like the API's answers (its field names, nested
    //! envelopes) with values of any type: a value or an error, never a panic, and an amount is
    //! the exact decimal the server wrote or an error, never a guess.

    use esimdash_api::model::{EsimPage, OrderPage, Placed, Profile, parse_plan_list};
    use proptest::prelude::*;
    use rust_decimal::Decimal;
    use serde_json::Value;
    use std::str::FromStr;

    const FIELDS: [&str; 24] = [
        "data",
        "packageList",
        "obj",
        "success",
        "profile",
        "order",
        "orders",
        "esims",
        "total",
        "page",
        "pageSize",
        "balanceUsd",
        "price",
        "sellPrice",
        "pricing",
        "volume",
        "slug",
        "name",
        "status",
        "iccid",
        "rawOrderJson",
        "ac",
        "totalSellPrice",
        "providerOrderNo",
    ];

    fn leaf() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            prop::sample::select(vec![
                "",
                "12.50",
                "-0.00",
                "1e3",
                "NaN",
                "12.5.0",
                "0.000000000000000000000000001",
                "79228162514264337593543950336",
                " 7 ",
                "in_use",
                "LPA:1$a$b",
                "\u{1b}[2J",
            ])
            .prop_map(Value::from),
            any::<String>().prop_map(Value::from),
        ]
    }

    fn json() -> impl Strategy<Value = Value> {
        leaf().prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((prop::sample::select(FIELDS.to_vec()), inner), 0..6)
                    .prop_map(|pairs| Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())),
            ]
        })
    }

    proptest! {
        #![proptest_config(crate::common::property_config())]

        #[test]
        fn every_decoder_takes_any_json_without_panicking(value in json()) {
            let body = serde_json::to_vec(&value).unwrap();
            let _ = parse_plan_list(&body);
            let _ = serde_json::from_slice::<OrderPage>(&body);
            let _ = serde_json::from_slice::<EsimPage>(&body);
            let _ = serde_json::from_slice::<Placed>(&body);
            let _ = serde_json::from_slice::<Profile>(&body);
        }

        #[test]
        fn a_balance_is_the_exact_decimal_written_or_an_error(balance in leaf()) {
            let body = serde_json::json!({ "name": "Ada", "balanceUsd": balance.clone() });
            // Refused, or no amount, is fine; an amount must be exactly what was written.
            if let Ok(Profile { balance_usd: Some(amount), .. }) = serde_json::from_value::<Profile>(body) {
                let written = match &balance {
                    Value::String(s) => s.trim().to_string(),
                    other => other.to_string(),
                };
                let exact = Decimal::from_str(&written).or_else(|_| Decimal::from_scientific(&written));
                prop_assert_eq!(Ok(amount), exact, "{} became {}", written, amount);
            }
        }
    }
}
