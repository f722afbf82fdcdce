//! The money view's reads over real HTTP: its figures against the order list summed here by
//! hand, what its looks cost at the server (first and second, at 100 000 orders), a longer
//! period read on from the kept orders, a server whose history changed, and servers whose
//! orders cannot be told by day.

use super::common::*;
use chrono::{DateTime, Duration, Local, NaiveDate, Utc};
use esimdash_ledger::Ledger;
use esimdash_ledger::overview::Overview;
use esimdash_ledger::period::Period;
use esimdash_ledger::sums::{self, By, Runway};
use esimdash_sandbox::SandboxConfig;
use rust_decimal::Decimal;
use std::collections::BTreeMap;
use std::str::FromStr;

/// Every order of Acme's list, read page by page as raw JSON: (time, spend, cost, status).
async fn every_order(sb: &esimdash_sandbox::RunningSandbox) -> Vec<(DateTime<Utc>, Decimal, Decimal, String)> {
    let mut all = Vec::new();
    for page in 1.. {
        let raw = acme_get(sb, &format!("/reseller/orders?page={page}&pageSize=100")).await;
        let orders = raw.body["orders"].as_array().unwrap().clone();
        for o in &orders {
            let money = |field: &str| Decimal::from_str(o[field].as_str().unwrap()).unwrap();
            let quantity = Decimal::from(o["quantity"].as_u64().unwrap());
            all.push((
                DateTime::parse_from_rfc3339(o["createdAt"].as_str().unwrap())
                    .unwrap()
                    .to_utc(),
                money("totalSellPrice"),
                money("costPrice") * quantity,
                o["status"].as_str().unwrap().to_string(),
            ));
        }
        if orders.len() < 100 {
            break;
        }
    }
    all
}

/// The list summed by day (this machine's), refunded orders left out: (orders, spend, cost).
fn by_day(orders: &[(DateTime<Utc>, Decimal, Decimal, String)]) -> BTreeMap<NaiveDate, (u64, Decimal, Decimal)> {
    let mut days = BTreeMap::new();
    for (at, spend, cost, status) in orders.iter().filter(|o| o.3 != "cancel") {
        let _ = status;
        let day: &mut (u64, Decimal, Decimal) = days.entry(at.with_timezone(&Local).date_naive()).or_default();
        day.0 += 1;
        day.1 += spend;
        day.2 += cost;
    }
    days
}

#[tokio::test]
async fn the_charts_days_and_the_runway_are_the_order_list_summed_by_hand() {
    let (sb, client) = sandbox_and_acme().await;
    let mut ledger = Ledger::in_memory();
    let now = Utc::now();
    ledger.refresh(&client, Overview::since(now, &Local)).await.unwrap();
    let overview = Overview::of(&ledger, now, &Local);
    let orders = every_order(&sb).await;
    let by_hand = by_day(&orders);
    assert_eq!(overview.days.len(), 30);
    let mut with_sales = 0;
    for row in &overview.days {
        let day = NaiveDate::parse_from_str(&row.key, "%Y-%m-%d").unwrap();
        let (n, spend, cost) = by_hand.get(&day).copied().unwrap_or_default();
        assert_eq!(
            (row.totals.orders, row.totals.spend, row.totals.cost),
            (n, spend, cost),
            "{day}"
        );
        with_sales += usize::from(n > 0);
    }
    assert!(with_sales >= 20, "the demo sells on most days: {with_sales}");
    // The runway: the balance over the mean spend of the last seven days.
    let week: Decimal = orders
        .iter()
        .filter(|o| o.0 > now - Duration::days(7) && o.3 != "cancel")
        .map(|o| o.1)
        .sum();
    assert_eq!(overview.per_day, week / Decimal::from(7));
    let balance = client.balance().await.unwrap();
    let runway = Runway::of(balance, overview.per_day, now, &Local);
    assert_eq!(runway.days, Some((balance / (week / Decimal::from(7))).round_dp(1)));
}

/// 100 000 orders, about 140 a day at the end: the first look at 30 days reads at most 45
/// pages; a second (another session, from the kept file) reads one while fewer than a page
/// of orders are new, and then sees them.
#[tokio::test]
async fn thirty_days_of_100_000_orders_cost_45_requests_then_one() {
    let sb = sandbox_of(100_000).await;
    let client = acme(&sb);
    let dir = tempfile::tempdir().unwrap();
    let since = Overview::since(Utc::now(), &Local);
    let before = sb.api_requests_received();
    let mut first = Ledger::kept_in(dir.path(), "acme");
    let read = first.refresh(&client, since).await.unwrap();
    let first_look = sb.api_requests_received() - before;
    assert_eq!(read.pages, first_look);
    assert!(first_look <= 45, "{first_look} requests the first time");
    assert!(read.new > 3_000, "{} orders in 30 days", read.new);

    let spend_before = Overview::of(&first, Utc::now(), &Local).total.spend;
    let placed = acme_send(&sb, "POST", "/portal/orders", r#"{"slug":"jp-3gb-15d","qty":1}"#).await;
    assert_eq!(placed.status, 201);
    let paid = Decimal::from_str(placed.body["order"]["totalSellPrice"].as_str().unwrap()).unwrap();

    let before = sb.api_requests_received();
    let mut second = Ledger::kept_in(dir.path(), "acme");
    let read = second.refresh(&client, since).await.unwrap();
    let second_look = sb.api_requests_received() - before;
    assert_eq!(
        (second_look, read.new),
        (1, 1),
        "a second look reads one page and finds the new order"
    );
    eprintln!("30 days of 100 000 orders: {first_look} requests the first time, {second_look} the second");
    assert_eq!(
        Overview::of(&second, Utc::now(), &Local).total.spend,
        spend_before + paid
    );
}

/// Seven days kept (a `balance`), then 30 asked (`report`): the top is read until a kept order,
/// then the list from where the kept ones end, not the kept pages again; the result is a fresh
/// read's.
#[tokio::test]
async fn a_longer_period_reads_on_from_where_the_kept_orders_end() {
    let sb = sandbox_of(20_000).await;
    let client = acme(&sb);
    let now = Utc::now();
    let mut ledger = Ledger::in_memory();
    let week = ledger.refresh(&client, now - Duration::days(7)).await.unwrap();
    let month = Period::last_days(30, now.with_timezone(&Local).date_naive());
    let more = ledger.refresh(&client, month.start(&Local)).await.unwrap();
    let mut fresh = Ledger::in_memory();
    let whole = fresh.refresh(&client, month.start(&Local)).await.unwrap();
    // The top page, the page where the kept orders end, and on: one or two pages more than a
    // fresh read of what the week did not hold.
    assert!(
        more.pages <= whole.pages - week.pages + 2,
        "{} pages on top of {}; a fresh read takes {}",
        more.pages,
        week.pages,
        whole.pages
    );
    let rows = |l: &Ledger| sums::rows(l.since(month.start(&Local)), By::Day, &month, &Local);
    assert_eq!(rows(&ledger), rows(&fresh));
}

/// The kept orders of one history, and the server's list is another (the same numbers at
/// other times: a sandbox started again): what was kept goes, and the figures are the new list's.
#[tokio::test]
async fn kept_orders_of_another_history_are_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let since = Utc::now() - Duration::days(10);
    for epoch_days in [0, 3] {
        let sb = sandbox_with(SandboxConfig {
            epoch: Some(Utc::now() - Duration::days(epoch_days)),
            ..unpaced()
        })
        .await;
        let client = acme(&sb);
        let mut ledger = Ledger::kept_in(dir.path(), "acme");
        ledger.refresh(&client, since).await.unwrap();
        let by_hand = by_day(&every_order(&sb).await);
        let kept = sums::rows(
            ledger.since(since),
            By::Day,
            &Period::last_days(5, Utc::now().with_timezone(&Local).date_naive()),
            &Local,
        );
        for row in kept {
            let day = NaiveDate::parse_from_str(&row.key, "%Y-%m-%d").unwrap();
            assert_eq!(
                row.totals.orders,
                by_hand.get(&day).map_or(0, |d| d.0),
                "{epoch_days}: {day}"
            );
        }
    }
}

/// What a look at 30 days says against a server that answers every request with `body`, and
/// the server (its requests counted).
async fn refused(body: &serde_json::Value) -> (esimdash_api::ApiError, Scripted) {
    let s = scripted(vec![(200, body.to_string())]).await;
    let error = Ledger::in_memory()
        .refresh(&scripted_client(&s, quick()), Utc::now() - Duration::days(30))
        .await
        .unwrap_err();
    (error, s)
}

/// A sandbox of `orders` orders a reseller, unpaced.
async fn sandbox_of(orders: usize) -> esimdash_sandbox::RunningSandbox {
    sandbox_with(SandboxConfig { orders, ..unpaced() }).await
}

/// Orders without `createdAt` (the spec does not promise it), and a server that answers the
/// same page whatever is asked: each said, never summed wrong.
#[tokio::test]
async fn orders_that_cannot_be_told_by_day_are_said() {
    let undated = serde_json::json!({"page": 1, "pageSize": 100, "total": 1,
        "orders": [{"providerOrderNo": "B1", "status": "in_use", "quantity": 1, "totalSellPrice": "5.00", "costPrice": "4.00"}]});
    let (error, _) = refused(&undated).await;
    assert!(error.to_string().contains("carries no time (createdAt)"), "{error}");

    let unpriced = serde_json::json!({"page": 1, "pageSize": 100, "total": 1,
        "orders": [{"providerOrderNo": "B1", "status": "in_use", "quantity": 1, "costPrice": "4.00",
            "createdAt": Utc::now().to_rfc3339()}]});
    let (error, _) = refused(&unpriced).await;
    assert!(
        error.to_string().contains("no price (totalSellPrice)"),
        "a missing price is not 0: {error}"
    );

    let orders: Vec<serde_json::Value> = (0..100)
        .map(|i| {
            serde_json::json!({"providerOrderNo": format!("B{i}"), "status": "in_use", "quantity": 1,
            "totalSellPrice": "5.00", "costPrice": "4.00", "createdAt": (Utc::now() - Duration::seconds(i)).to_rfc3339()})
        })
        .collect();
    let same = serde_json::json!({"page": 1, "pageSize": 100, "total": 100_000, "orders": orders});
    let (error, s) = refused(&same).await;
    assert!(error.to_string().contains("does not page the list"), "{error}");
    assert_eq!(s.hits(), 2, "it stops at the first repeat");
    // The orders' prices as a server might overflow them: said, never a crash.
    let absurd = serde_json::json!({"page": 1, "pageSize": 100, "total": 1,
        "orders": [{"providerOrderNo": "B1", "status": "in_use", "quantity": 10_000_000_000_000_000_000u64,
            "sellPrice": "79228162514264337593543950335", "costPrice": "79228162514264337593543950335",
            "createdAt": Utc::now().to_rfc3339()}]});
    let (error, _) = refused(&absurd).await;
    assert!(error.to_string().contains("too large"), "{error}");
}

/// A look cut off midway (its task aborted) keeps what it read but leaves no hole: many
/// orders were placed since the run was kept, the look is cut after its first page, and the
/// next one reads on until it meets the run, summing as a fresh read does.
#[tokio::test]
async fn a_look_cut_off_midway_leaves_no_hole() {
    let sb = sandbox_of(20_000).await;
    let client = acme(&sb);
    let since = Overview::since(Utc::now(), &Local);
    let ledger = std::sync::Arc::new(tokio::sync::Mutex::new(Ledger::in_memory()));
    ledger.lock().await.refresh(&client, since).await.unwrap();
    // 150 orders of the cheapest plan: two pages of new orders on top of the run.
    let plans = acme_get(&sb, "/portal/plans").await.body;
    let cheapest = plans["data"]
        .as_array()
        .unwrap()
        .iter()
        .min_by(|a, b| a["price"].as_f64().unwrap().total_cmp(&b["price"].as_f64().unwrap()))
        .unwrap()["slug"]
        .as_str()
        .unwrap()
        .to_string();
    for _ in 0..150 {
        let body = format!(r#"{{"slug":"{cheapest}","qty":1}}"#);
        let placed = acme_send(&sb, "POST", "/portal/orders", &body).await;
        assert_eq!(placed.status, 201, "{}", placed.text);
    }
    sb.set_latency(std::time::Duration::from_millis(50));
    let before = sb.api_requests_received();
    let task = tokio::spawn({
        let (ledger, client) = (ledger.clone(), client.clone());
        async move { ledger.lock().await.refresh(&client, since).await }
    });
    while sb.api_requests_received() - before < 2 {
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    sb.set_latency(std::time::Duration::ZERO);
    let rest = ledger.lock().await.refresh(&client, since).await.unwrap();
    assert!(
        rest.pages <= 3,
        "the two pages of new orders and the one that meets the run: {}",
        rest.pages
    );
    let mut fresh = Ledger::in_memory();
    fresh.refresh(&client, since).await.unwrap();
    let now = Utc::now();
    assert_eq!(
        Overview::of(&*ledger.lock().await, now, &Local),
        Overview::of(&fresh, now, &Local)
    );
}

/// A run kept of an older stretch (orders 50 to 90 days back, as a long `report` long ago left
/// them), then a look at 30 days, which reaches its start without meeting it: the two are not
/// one, and 60 days asked next are read, not taken as known.
#[tokio::test]
async fn a_run_that_a_look_never_met_is_not_joined_to_it() {
    let sb = sandbox_of(20_000).await;
    let client = acme(&sb);
    let now = Utc::now();
    let (old_from, old_top) = (now - Duration::days(90), now - Duration::days(50));
    let mut everything = Ledger::in_memory();
    everything.refresh(&client, old_from).await.unwrap();
    let old: Vec<esimdash_ledger::Sale> = everything
        .since(old_from)
        .into_iter()
        .filter(|s| s.at <= old_top)
        .cloned()
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let mut kept = esimdash_ledger::kept::Kept::open(dir.path(), "acme").unwrap();
    let run = esimdash_ledger::kept::Run {
        from: old_from,
        top: old.iter().map(|s| s.at).max().unwrap(),
    };
    kept.write(&old, Some(run), false).unwrap();
    drop(kept);
    let mut ledger = Ledger::kept_in(dir.path(), "acme");
    ledger.refresh(&client, now - Duration::days(30)).await.unwrap();
    let sixty = Period::last_days(60, now.with_timezone(&Local).date_naive());
    ledger.refresh(&client, sixty.start(&Local)).await.unwrap();
    let rows = |l: &Ledger| sums::rows(l.since(sixty.start(&Local)), By::Day, &sixty, &Local);
    assert_eq!(rows(&ledger), rows(&everything));
}
