//! The money view against order lists in shapes the spec does not picture: out of order, with
//! a total that lies, that never end, with amounts no order can have, in another currency, one
//! number with two amounts, a week with a large refund. Each gives the true figure (read
//! another way) or says why it gives none; none is summed as if it were whole. Counted at the
//! server, and through the real binary where a monitoring plugin reads it.

use super::common::*;
use axum::Router;
use axum::extract::Query;
use axum::http::Uri;
use chrono::{DateTime, Duration, Utc};
use esimdash_ledger::Ledger;
use esimdash_ledger::sums;
use rust_decimal::Decimal;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How a listing bends the true list.
#[derive(Clone, Default)]
struct Bent {
    /// The most orders a page gives, whatever is asked (0: as asked).
    cap: usize,
    /// The total it claims (`None`: the true one).
    total: Option<u64>,
    /// Past the true list, pages of new orders for ever (all an hour old).
    endless: bool,
}

/// A server of `orders` (in the order given) bent as `bent`, with a balance of 250.00.
struct Listing {
    base_url: String,
    hits: Arc<AtomicUsize>,
    _task: tokio::task::JoinHandle<()>,
}

async fn listing(orders: Vec<Value>, bent: Bent) -> Listing {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let orders = Arc::new(orders);
    let app = Router::new().fallback(move |uri: Uri, Query(q): Query<HashMap<String, String>>| {
        let (orders, bent) = (orders.clone(), bent.clone());
        counter.fetch_add(1, Ordering::SeqCst);
        async move {
            if uri.path().ends_with("/balance") {
                return axum::Json(json!({"balanceUsd": "250.00"}));
            }
            let number = |k: &str, d: usize| q.get(k).and_then(|v| v.parse().ok()).unwrap_or(d);
            let (page, asked) = (number("page", 1).max(1), number("pageSize", 20));
            let size = if bent.cap > 0 { asked.min(bent.cap) } else { asked };
            let from = (page - 1) * size;
            let page_orders: Vec<Value> = if bent.endless && from + size > orders.len() {
                (from..from + size)
                    .map(|i| order(&format!("E{i}"), Utc::now() - Duration::hours(1), "5.00"))
                    .collect()
            } else {
                orders.iter().skip(from).take(size).cloned().collect()
            };
            let total = bent.total.unwrap_or(orders.len() as u64);
            axum::Json(json!({"page": page, "pageSize": size, "total": total, "orders": page_orders}))
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    Listing {
        base_url: format!("http://{addr}/api/v1"),
        hits,
        _task: task,
    }
}

/// A list that never ends, its total claiming a billion orders.
async fn endless_with_a_billion() -> Listing {
    let bent = Bent {
        total: Some(1_000_000_000),
        endless: true,
        ..Bent::default()
    };
    listing(Vec::new(), bent).await
}

fn order(no: &str, at: DateTime<Utc>, paid: &str) -> Value {
    json!({"providerOrderNo": no, "slug": format!("plan-{}", no.as_bytes()[no.len() - 1] % 3), "packageCode": "P", "packageName": "Plan",
        "locationCode": "JP", "status": "in_use", "quantity": 1, "costPrice": "1.00", "sellPrice": paid,
        "totalSellPrice": paid, "createdAt": at.to_rfc3339()})
}

/// 236 orders over 40 days, newest first: a few a day, amounts that differ.
fn true_list() -> Vec<Value> {
    let now = Utc::now();
    (0..236)
        .map(|i| {
            order(
                &format!("A{i:03}"),
                now - Duration::hours(4 * i),
                &format!("{}.{:02}", 3 + i % 7, i % 100),
            )
        })
        .collect()
}

/// The true spend from `since`, summed here by hand.
fn spent_since(orders: &[Value], since: DateTime<Utc>) -> Decimal {
    orders
        .iter()
        .filter(|o| DateTime::parse_from_rfc3339(o["createdAt"].as_str().unwrap()).unwrap() >= since)
        .map(|o| o["totalSellPrice"].as_str().unwrap().parse::<Decimal>().unwrap())
        .sum()
}

async fn month_of(l: &Listing, ledger: &mut Ledger) -> Result<Decimal, String> {
    let since = Utc::now() - Duration::days(30);
    let client = client_for(&l.base_url, esimdash_api::Credentials::pair("ak", "sk"), quick());
    ledger.refresh(&client, since).await.map_err(|e| e.to_string())?;
    Ok(ledger.since(since).iter().map(|s| s.spend()).sum())
}

#[tokio::test]
async fn a_list_out_of_order_is_read_whole_and_never_kept() {
    let truth = true_list();
    let month = spent_since(&truth, Utc::now() - Duration::days(30));
    // One old order on page 1; and the whole list sorted by plan.
    let mut one_old = truth.clone();
    let old = one_old.remove(230);
    one_old.insert(5, old);
    let mut by_plan = truth.clone();
    by_plan.sort_by_key(|o| o["slug"].as_str().unwrap().to_string());
    let dir = tempfile::tempdir().unwrap();
    for (name, list) in [("one old order on page 1", one_old), ("sorted by plan", by_plan)] {
        let bent = listing(list, Bent::default()).await;
        let mut ledger = Ledger::kept_in(dir.path(), "acme");
        let got = month_of(&bent, &mut ledger).await;
        assert_eq!(got, Ok(month), "{name}");
        assert_eq!(
            bent.hits.load(Ordering::SeqCst),
            1 + 3,
            "{name}: a page, then the list whole"
        );
    }
    // Nothing learnt from those lists was kept: against an honest server the figure is true.
    let honest = listing(truth, Bent::default()).await;
    let mut ledger = Ledger::kept_in(dir.path(), "acme");
    assert_eq!(month_of(&honest, &mut ledger).await, Ok(month));
}

#[tokio::test]
async fn a_total_that_lies_or_a_list_that_never_ends_gives_no_figure() {
    let truth = true_list();
    let cases = [
        (
            "a total of 50 with pages of 50",
            Bent {
                cap: 50,
                total: Some(50),
                endless: false,
            },
            "total",
        ),
        (
            "a total of 300 it does not hold",
            Bent {
                cap: 0,
                total: Some(300),
                endless: false,
            },
            "its total says 300",
        ),
        (
            "an endless list",
            Bent {
                cap: 0,
                total: None,
                endless: true,
            },
            "total",
        ),
    ];
    for (name, bent, said) in cases {
        // A list that ends within the period, so that its end is what is read.
        let list = if bent.cap == 0 {
            truth.iter().take(120).cloned().collect()
        } else {
            truth.clone()
        };
        let server = listing(list, bent).await;
        let error = month_of(&server, &mut Ledger::in_memory()).await.unwrap_err();
        assert!(error.contains(said), "{name}: {error}");
        assert!(server.hits.load(Ordering::SeqCst) <= 8, "{name}: bounded");
    }
    // Endless, its total claiming a billion: the look's time ends it, said.
    let server = endless_with_a_billion().await;
    let client = client_for(
        &server.base_url,
        esimdash_api::Credentials::pair("ak", "sk"),
        esimdash_api::ClientOptions {
            request_timeout: std::time::Duration::from_secs(2),
            ..quick()
        },
    );
    let error = Ledger::in_memory()
        .refresh(&client, Utc::now() - Duration::days(30))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("still being read after 2 s"), "{error}");
}

#[tokio::test]
async fn amounts_no_order_can_have_are_said_never_summed() {
    let now = Utc::now();
    let mut huge = order("H1", now, "70000000000000000000000000000");
    huge["sellPrice"] = json!("1.00");
    let mut euro = order("E1", now, "5.00");
    euro["currencyCode"] = json!("EUR");
    let twice = vec![
        order("T1", now, "5.00"),
        order("T2", now - Duration::hours(1), "6.00"),
        order("T1", now - Duration::hours(2), "9.00"),
    ];
    for (list, said) in [
        (
            vec![
                huge,
                order("H2", now - Duration::hours(1), "70000000000000000000000000000"),
            ],
            "more than any order can cost",
        ),
        (vec![euro], "is in EUR"),
        (twice, "listed twice with different amounts"),
    ] {
        let server = listing(list, Bent::default()).await;
        let error = month_of(&server, &mut Ledger::in_memory()).await.unwrap_err();
        assert!(error.contains(said), "{error}");
    }
}

#[tokio::test]
async fn a_large_refund_never_makes_a_week_of_sales_nothing_spent() {
    let now = Utc::now();
    let mut list: Vec<Value> = (0..56)
        .map(|i| order(&format!("W{i}"), now - Duration::hours(2 * i + 1), "10.00"))
        .collect();
    list.insert(
        3,
        order("R1", now - Duration::hours(6) - Duration::minutes(30), "-900.00"),
    );
    let server = listing(list, Bent::default()).await;
    let mut ledger = Ledger::in_memory();
    month_of(&server, &mut ledger).await.unwrap();
    let pace = sums::pace(ledger.since(now - Duration::days(7)), now);
    assert_eq!(pace, Decimal::from(560) / Decimal::from(7), "the paid orders' pace");
}

/// A monitoring plugin on an endless list: UNKNOWN, within its timeout.
#[tokio::test(flavor = "multi_thread")]
async fn check_balance_on_an_endless_list_is_unknown_within_its_timeout() {
    let server = endless_with_a_billion().await;
    let home = tempfile::tempdir().unwrap();
    let base = server.base_url.clone();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_esimdash"))
            .env_clear()
            .env("HOME", home.path())
            .env("XDG_STATE_HOME", home.path().join("state"))
            .env("XDG_CACHE_HOME", home.path().join("cache"))
            .env("ESIMDASH_BASE_URL", &base)
            .env("ESIMDASH_ACCESS_CODE", "ak")
            .env("ESIMDASH_SECRET_KEY", "sk")
            .args([
                "--timeout",
                "3",
                "check",
                "balance",
                "--runway-warning",
                "30",
                "--runway-critical",
                "7",
            ])
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "UNKNOWN: {stdout}");
    assert!(stdout.contains("still being read after 3 s"), "{stdout}");
}
