//! Amounts no server should send (a price of 1e28 bought ten times, a balance at the bottom of
//! what a decimal holds, a negative price): the binary refuses in words before any payment,
//! and never panics.

use crate::common::*;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

const ICCID: &str = "8944100000000000018";

#[derive(Clone)]
struct Hostile {
    price: &'static str,
    balance: &'static str,
    posts: Arc<AtomicU64>,
    /// What a payment is answered with.
    placed: &'static str,
}

async fn answer(State(h): State<Hostile>, request: Request) -> Response {
    if request.method() != Method::GET {
        h.posts.fetch_add(1, Ordering::SeqCst);
        return (StatusCode::CREATED, h.placed).into_response();
    }
    let plan = format!(
        r#"{{"slug":"x-1gb","name":"X 1GB","packageCode":"TOPUP_X","locationCode":"FR","price":{},"currencyCode":"USD","volume":1073741824,"duration":7,"durationUnit":"DAY"}}"#,
        h.price
    );
    let body = match request.uri().path() {
        "/api/v1/portal/plans" if request.uri().query().is_some_and(|q| q.contains("type=topup")) => {
            format!(r#"{{"iccid":"{ICCID}","data":[{plan}]}}"#)
        }
        "/api/v1/portal/plans" => format!(r#"{{"data":{}}}"#, plan.replace("TOPUP_X", "X")),
        "/api/v1/reseller/balance" => format!(r#"{{"balanceUsd":"{}"}}"#, h.balance),
        "/api/v1/reseller/orders" => r#"{"page":1,"pageSize":100,"total":0,"orders":[]}"#.to_string(),
        _ => return StatusCode::NOT_FOUND.into_response(),
    };
    (StatusCode::OK, body).into_response()
}

async fn hostile(price: &'static str, balance: &'static str) -> (String, Arc<AtomicU64>) {
    charging(price, balance, "{}").await
}

/// A server quoting `price` whose payments are answered `placed`.
async fn charging(price: &'static str, balance: &'static str, placed: &'static str) -> (String, Arc<AtomicU64>) {
    let posts = Arc::new(AtomicU64::new(0));
    let state = Hostile {
        price,
        balance,
        posts: posts.clone(),
        placed,
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, Router::new().fallback(answer).with_state(state)).await });
    (format!("http://{addr}/api/v1"), posts)
}

#[tokio::test(flavor = "multi_thread")]
async fn absurd_amounts_are_refused_in_words_before_any_payment() {
    let cases: [(&str, &str, &[&str], &str); 7] = [
        (
            "1e28",
            "250.00",
            &["buy", "--slug", "x-1gb", "--qty", "10"],
            "too large to compute exactly",
        ),
        (
            "79228162514264337593543950335",
            "250.00",
            &["topup", "--iccid", ICCID, "--slug", "x-1gb", "--qty", "2"],
            "too large",
        ),
        (
            "5.00",
            "-79228162514264337593543950335",
            &["topup", "--iccid", ICCID, "--slug", "x-1gb"],
            "short of",
        ),
        ("-0.01", "250.00", &["buy", "--slug", "x-1gb"], "negative price"),
        (
            "0",
            "250.00",
            &["buy", "--slug", "x-1gb"],
            "at 0 USD, a price of nothing",
        ),
        (
            "\"-0.00\"",
            "250.00",
            &["topup", "--iccid", ICCID, "--slug", "x-1gb"],
            "at 0.00 USD, a price of nothing",
        ),
        (
            "1e-28",
            "250.00",
            &["buy", "--slug", "x-1gb"],
            "at 0.0000000000000000000000000001 USD, a price below a cent",
        ),
    ];
    for (price, balance, args, words) in cases {
        let (base, posts) = hostile(price, balance).await;
        let home = tempfile::tempdir().unwrap();
        for json in [false, true] {
            let mut cmd = esimdash(&home);
            acme_at(&mut cmd, &base).args(args).arg("--yes");
            if json {
                cmd.arg("--json");
            }
            let out = run(cmd).await;
            assert_eq!(out.status.code(), Some(1), "{price} / {balance}: {}", stderr(&out));
            let said = stderr(&out);
            assert!(
                said.contains(words) && said.contains("nothing was"),
                "{price} / {balance}: {said}"
            );
            assert!(!said.contains("panicked"), "{said}");
            if json {
                let error: serde_json::Value = serde_json::from_str(said.trim()).unwrap();
                assert_eq!(error["error"]["moneyMoved"], false, "{error}");
            }
        }
        assert_eq!(posts.load(Ordering::SeqCst), 0, "{price} / {balance}: nothing was sent");
    }
}

/// Prices, balances and quantities drawn at and around `rust_decimal`'s edges, through the
/// binary: it never panics, and a payment is sent only when its total could be computed
/// exactly, is not negative, and the balance covers it.
#[test]
fn any_amount_at_the_edges_is_paid_only_when_it_can_be_computed_and_covered() {
    use proptest::prelude::*;
    use rust_decimal::Decimal;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let edge = prop_oneof![
        Just(Decimal::MAX),
        Just(Decimal::MIN),
        Just(Decimal::ZERO),
        Just(Decimal::new(1, 28)),
        Just(Decimal::new(-1, 2)),
        (any::<i64>(), 0u32..=28).prop_map(|(m, scale)| Decimal::new(m, scale)),
        (0i64..100_000, 0u32..=2).prop_map(|(m, scale)| Decimal::new(m, scale)),
    ];
    let config = ProptestConfig {
        // Each case runs the binary: a few dozen, whatever PROPTEST_CASES says elsewhere.
        cases: 48,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(price in edge.clone(), balance in edge, qty in 1u32..=10)| {
        // As a JSON string: the exact decimal, as docs/api-contract.md allows for prices.
        let price_text: &'static str = Box::leak(format!("\"{price}\"").into_boxed_str());
        let balance_text: &'static str = Box::leak(balance.to_string().into_boxed_str());
        let (base, posts) = runtime.block_on(hostile(price_text, balance_text));
        let home = tempfile::tempdir().unwrap();
        let mut cmd = esimdash(&home);
        acme_at(&mut cmd, &base).args(["topup", "--iccid", ICCID, "--slug", "x-1gb", "--qty", &qty.to_string(), "--yes", "--timeout", "2"]);
        let out = cmd.output().unwrap();
        let said = stderr(&out);
        prop_assert!(!said.contains("panicked") && out.status.code().is_some_and(|c| c != 101), "{said}");
        let payable = price
            .checked_mul(Decimal::from(qty))
            .filter(|_| price >= esimdash_front::purchase::SMALLEST_PRICE)
            .filter(|t| balance >= *t);
        if posts.load(Ordering::SeqCst) > 0 {
            prop_assert!(payable.is_some(), "{price} × {qty} from {balance} was sent: {said}");
        } else {
            prop_assert!(payable.is_none(), "{price} × {qty} from {balance} was not sent: {said}");
        }
    });
}

/// The server quotes 6.60 USD and charges 13.20: the order is told, and so is the difference,
/// loudly (stderr, exit 7, `charged` and `confirmed` in `--json`, the trail's answered line).
#[tokio::test(flavor = "multi_thread")]
async fn a_payment_charged_other_than_confirmed_is_told_loudly() {
    let placed = r#"{"ok":true,"order":{"providerOrderNo":"B1","slug":"x-1gb","packageName":"X 1GB","status":"GOT_RESOURCE","quantity":1,"totalSellPrice":"13.20"},"balanceUsd":"236.80"}"#;
    let (base, posts) = charging("6.60", "250.00", placed).await;
    let home = tempfile::tempdir().unwrap();
    let buy = ["buy", "--slug", "x-1gb", "--yes"];
    let out = run_acme_at(&home, &base, buy).await;
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("Placed: order B1"), "{}", stdout(&out));
    assert_stderr_has(
        &out,
        "Charged 13.20 USD, not the 6.60 USD confirmed (the balance went down by 13.20 USD)",
    );
    let mut cmd = esimdash(&home);
    acme_at(&mut cmd, &base).args(buy).args(["--again", "--json"]);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let placed = stdout_json(&out);
    assert_eq!(
        (&placed["charged"], &placed["confirmed"]),
        (&"13.20".into(), &"6.60".into()),
        "{placed}"
    );
    let error: serde_json::Value = serde_json::from_str(stderr(&out).trim()).unwrap();
    assert_eq!(error["error"]["kind"], "charged_other", "{error}");
    assert_eq!(error["error"]["moneyMoved"], true, "{error}");
    let answered: Vec<_> = trail(&home).into_iter().filter(|e| e["stage"] == "answered").collect();
    assert_eq!(answered.len(), 2);
    assert!(
        answered.iter().all(|e| e["charged"] == "13.20" && e["total"] == "6.60"),
        "{answered:?}"
    );
    assert_eq!(posts.load(Ordering::SeqCst), 2);
}

/// Server text is text: an order number with escape codes and a line break, placed and
/// printed, reaches neither stdout nor stderr raw (the sentence and the error alike).
#[tokio::test(flavor = "multi_thread")]
async fn an_order_number_with_escape_codes_is_printed_as_text() {
    let placed = r#"{"ok":true,"order":{"providerOrderNo":"B1\u001b]0;owned\u0007\u001b[2J\nX","slug":"x-1gb","totalSellPrice":"9.99"},"balanceUsd":"240.01"}"#;
    let (base, posts) = charging("6.60", "250.00", placed).await;
    let home = tempfile::tempdir().unwrap();
    let out = run_acme_at(&home, &base, ["buy", "--slug", "x-1gb", "--yes"]).await;
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    assert_eq!(posts.load(Ordering::SeqCst), 1);
    for (name, text) in [("stdout", stdout(&out)), ("stderr", stderr(&out))] {
        assert!(
            !text.chars().any(|c| c != '\n' && esimdash_domain::text::is_unsafe(c)),
            "{name}: {text:?}"
        );
    }
    assert_stdout_has(&out, "B1\u{FFFD}]0;owned");
}
