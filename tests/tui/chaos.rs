//! The app under a sandbox that fails a share of its answers in every way networks and servers
//! do (`--chaos`): a seeded walk of keys, purchases and top-ups included, through a few hundred
//! requests. Every view ends in data or in an error shown in place, requests do not loop, and
//! no payment goes out twice.

use crate::common::*;
use crossterm::event::KeyCode;
use esimdash_api::model::OrderQuery;
use esimdash_api::{ApiError, Client, ClientOptions};
use esimdash_sandbox::SandboxConfig;
use esimdash_tui::app::{App, Remote, Tab};
use esimdash_tui::msg::Request;
use rust_decimal::Decimal;
use std::collections::HashSet;
use std::time::Duration;

/// A patient reader of the same sandbox for the test's own checks: it tries until an answer
/// gets through the chaos.
async fn patiently<T, F: std::future::Future<Output = Result<T, ApiError>>>(call: impl Fn() -> F) -> T {
    for _ in 0..50 {
        if let Ok(value) = call().await {
            return value;
        }
    }
    panic!("no answer got through the chaos in 50 tries");
}

/// Every order number of the account and the balance, read through the chaos.
async fn ledger(client: &Client) -> (HashSet<String>, Decimal) {
    let mut numbers = HashSet::new();
    for page in 1.. {
        let query = crate::pages::orders_page(page);
        let answer = patiently(|| client.orders(&query)).await;
        let last = answer.orders.len() < 100;
        numbers.extend(answer.orders.into_iter().map(|o| o.record.provider_order_no.into()));
        if last {
            break;
        }
    }
    (numbers, patiently(|| client.balance()).await)
}

/// Whether the tab shows data or an error in its place (not loading, not blank), or the
/// screen says requests stopped and which key tries again (a page a 429 put back, while another
/// read's timeout took the session offline, waits for that key: seen once in a full run).
fn settled(app: &App) -> bool {
    // Asked for, and answered one way or the other.
    fn ended<T>(remote: &Remote<T>) -> bool {
        !remote.is_loading() && !remote.wanted()
    }
    if matches!(app.halt(), Some(esimdash_tui::app::Halt::Offline { .. })) {
        return true;
    }
    match app.tab() {
        Tab::Catalog => ended(app.catalog().plans()),
        Tab::Orders => app.orders().list().current().is_some_and(ended),
        Tab::Esims => app.esims().list().current().is_some_and(ended),
        Tab::Profile => ended(app.account()),
    }
}

/// Until nothing is in flight or about to be (a countdown, a held page) and the view shown has
/// ended one way or the other; a message fading in a few seconds is not waited for. (A page
/// held behind a `Retry-After` may wake later than 1.5 s on a busy machine: it is waited for,
/// up to 20 s, not taken for a view that never ends.)
async fn quiet(live: &mut Live) {
    live.until(Duration::from_secs(20), |app| {
        let now = std::time::Instant::now();
        !app.is_loading()
            && settled(app)
            && app
                .next_wake(now)
                .is_none_or(|at| at > now + Duration::from_millis(1500))
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn under_chaos_every_view_ends_in_data_or_an_error_and_no_payment_goes_twice() {
    let config = SandboxConfig {
        chaos: 0.3,
        ..unpaced_sandbox()
    };
    let options = ClientOptions {
        request_timeout: Duration::from_millis(700),
        backoff: Duration::from_millis(10),
        ..unpaced()
    };
    let mut live = Live::new(config, options.clone()).await;
    let reader = client_as(&live.sandbox.base_url(), ACME, ClientOptions { retries: 5, ..options });
    let (orders_before, balance_before) = ledger(&reader).await;
    let received_before = live.sandbox.api_requests_received();
    let sent_before = live.sent.len();

    let mut rng = fastrand::Rng::with_seed(12);
    let walk: [&[KeyCode]; 9] = [
        &[KeyCode::Char('1')],
        &[KeyCode::Char('2'), KeyCode::PageDown],
        &[KeyCode::Char('3'), KeyCode::Char('j'), KeyCode::Enter],
        &[KeyCode::Char('4')],
        &[KeyCode::Char('r')],
        &[KeyCode::Char('2'), KeyCode::Char('G')],
        &[KeyCode::Char('3'), KeyCode::PageDown, KeyCode::PageDown],
        // Buy the selected plan: choose, review, pay.
        &[KeyCode::Char('1'), KeyCode::Char('b'), KeyCode::Enter, KeyCode::Enter],
        // Top up the selected eSIM: choose, review, pay.
        &[KeyCode::Char('3'), KeyCode::Char('t'), KeyCode::Enter, KeyCode::Enter],
    ];
    let mut steps = 0;
    while live.sent.len() - sent_before < 300 && steps < 400 {
        steps += 1;
        for &key in walk[rng.usize(..walk.len())] {
            live.send(code(key));
            quiet(&mut live).await;
        }
        // Whatever window the step left open is closed, as a user would.
        live.send(code(KeyCode::Esc));
        if live.app.halt().is_some() {
            live.send(code(KeyCode::Char('r')));
        }
        quiet(&mut live).await;
        assert!(!live.app.is_loading(), "step {steps}: a request never ended");
        let screen = live.screen_text(120, 40);
        assert!(
            settled(&live.app),
            "step {steps}: the view is neither data nor an error:\n{screen}"
        );
        assert!(!screen.contains("Loading"), "step {steps}: still loading:\n{screen}");
    }
    let sent = live.sent.len() - sent_before;
    let received = live.sandbox.api_requests_received() - received_before;
    let pays = live.sent[sent_before..]
        .iter()
        .filter(|r| matches!(r, Request::Pay(_)))
        .count();

    // No loop: each request reaches the server at most 1 + retries times (a payment: twice).
    assert!(sent >= 200, "the walk made {sent} requests");
    assert!(
        received <= (sent as u64) * 3,
        "{received} requests reached the server for {sent} the app sent"
    );
    let failed: u64 = live.sandbox.disruptions().iter().map(|(_, n)| n).sum();
    for (kind, n) in live.sandbox.disruptions() {
        assert!(n > 0, "no {} in {received} answers", kind.label());
    }

    // Each payment the app sent made at most one order, and the balance moved by exactly those.
    let (orders_after, balance_after) = ledger(&reader).await;
    let new: Vec<&String> = orders_after.difference(&orders_before).collect();
    assert!(pays >= 5, "the walk paid {pays} times");
    assert!(new.len() <= pays, "{} orders for {pays} payments", new.len());
    let mut spent = Decimal::ZERO;
    for number in &new {
        let query = OrderQuery {
            q: Some((*number).clone()),
            ..Default::default()
        };
        let found = patiently(|| reader.orders(&query)).await;
        spent += found.orders[0].total_sell_price.unwrap();
    }
    assert_eq!(
        balance_before - balance_after,
        spent,
        "debited exactly the orders placed"
    );
    eprintln!(
        "chaos: {steps} steps, {sent} requests sent, {received} received, {failed} answers failed, {pays} payments, {} orders placed",
        new.len()
    );
}
