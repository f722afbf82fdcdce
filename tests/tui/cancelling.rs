//! Requests nobody waits for are not sent, or are aborted: counted at the sandbox, with the app
//! driven as the runtime drives it (real tasks, the wall clock).

use crate::common::*;
use crossterm::event::KeyCode;
use esimdash_api::ClientOptions;
use esimdash_sandbox::SandboxConfig;
use esimdash_tui::app::Tab;
use esimdash_tui::msg::Request;
use std::time::Duration;

fn orders_page(r: &Request) -> Option<u64> {
    match r {
        Request::Orders(q) => q.page,
        _ => None,
    }
}

/// On the Orders tab with page 1 loaded, against a sandbox with `orders` orders answering after
/// `latency`, with the whole rate budget free.
async fn on_orders(orders: usize, latency: Duration) -> Live {
    let config = SandboxConfig {
        orders,
        latency,
        ..unpaced_sandbox()
    };
    let mut live = Live::new(config, unpaced()).await;
    live.send(key('2'));
    live.idle(Duration::from_secs(10)).await;
    live
}

#[tokio::test]
async fn ten_quick_page_downs_send_at_most_three_page_requests() {
    let mut live = on_orders(2_000, Duration::from_millis(100)).await;
    assert_eq!(live.app.orders().list().current_page(), 1);
    let before = live.sandbox.requests_received();
    for _ in 0..10 {
        live.send(code(KeyCode::PageDown));
    }
    live.idle(Duration::from_secs(10)).await;
    let received = live.sandbox.requests_received() - before;
    eprintln!(
        "ten quick PgDn: {received} page requests reached the server, {} cancelled",
        live.cancelled
    );
    assert!(
        received <= 3,
        "{received} page requests reached the server for ten quick PgDn"
    );
    let list = live.app.orders().list();
    assert_eq!(list.current_page(), 11);
    assert!(
        list.page_items().is_some_and(|p| p.len() == 50),
        "the page stopped on is shown"
    );
    assert!(!live.app.is_loading());
}

#[tokio::test]
async fn typing_a_ten_character_order_search_sends_at_most_one_search() {
    let mut live = on_orders(400, Duration::ZERO).await;
    let before = live.sandbox.requests_received();
    live.send(key('/'));
    for c in "bolivia 1g".chars() {
        live.send(key(c));
        // A quick typist: well inside the pause that sends the search.
        tokio::time::sleep(Duration::from_millis(60)).await;
        live.idle(Duration::from_millis(1)).await;
    }
    live.idle(Duration::from_secs(10)).await;
    let received = live.sandbox.requests_received() - before;
    eprintln!("ten characters typed: {received} search reached the server");
    assert_eq!(received, 1, "one search for ten characters");
    let searches: Vec<_> = live
        .sent
        .iter()
        .filter_map(|r| match r {
            Request::Orders(q) => q.q.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(searches, vec!["bolivia 1g".to_string()]);
}

#[tokio::test]
async fn a_request_waiting_for_the_rate_budget_is_dropped_when_no_longer_wanted() {
    let config = unpaced_sandbox();
    // Three requests every two seconds: the profile, the catalog and page 1 spend the budget.
    let client = ClientOptions {
        rate_limit: 3,
        rate_window: Duration::from_secs(2),
        ..ClientOptions::default()
    };
    let mut live = Live::new(config, client).await;
    live.send(key('2'));
    live.idle(Duration::from_secs(5)).await;
    let before = live.sandbox.requests_received();
    live.send(key('G'));
    assert!(live.app.is_loading(), "the last page waits for the budget");
    live.send(key('1'));
    assert_eq!(live.cancelled, 1, "leaving the tab cancels the page request");
    assert_eq!(live.app.tab(), Tab::Catalog);
    tokio::time::sleep(Duration::from_millis(2_500)).await;
    live.idle(Duration::from_millis(10)).await;
    assert_eq!(
        live.sandbox.requests_received(),
        before,
        "the cancelled request never reached the server, even after the budget came back"
    );
    assert!(live.sent.iter().filter_map(orders_page).any(|p| p == 8));
}
