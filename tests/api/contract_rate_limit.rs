//! The per-key limit: 429 with `Retry-After`, the `X-RateLimit-*` headers, and a client that
//! paces itself, honours the headers and retries within bounds.

use crate::common::*;
use esimdash_api::{ApiError, ClientOptions, Credentials};
use esimdash_sandbox::SandboxConfig;
use std::time::{Duration, Instant};

fn limited(limit: u32, window: Duration) -> SandboxConfig {
    SandboxConfig {
        rate_limit: limit,
        rate_window: window,
        ..SandboxConfig::default()
    }
}

#[tokio::test]
async fn over_the_limit_is_429_with_retry_after_and_every_answer_reports_the_budget() {
    let sb = sandbox_with(limited(3, Duration::from_secs(60))).await;
    for remaining in ["2", "1", "0"] {
        let r = acme_get(&sb, "/reseller/balance").await;
        assert_eq!(r.status, 200);
        assert_eq!(r.headers["x-ratelimit-limit"], "3");
        assert_eq!(r.headers["x-ratelimit-remaining"], remaining);
        let reset: u64 = r.headers["x-ratelimit-reset"].to_str().unwrap().parse().unwrap();
        assert!((1..=60).contains(&reset));
    }
    let r = acme_get(&sb, "/reseller/balance").await;
    assert_eq!((r.status, error_of(&r)), (429, "Rate limit exceeded"));
    let retry: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "{retry}");
    // Error answers count and report too; another key has its own budget.
    let g = globex_get(&sb, "/reseller/balance").await;
    assert_eq!(
        (g.status, g.headers["x-ratelimit-remaining"].to_str().unwrap()),
        (200, "2")
    );

    let client = acme_with(&sb, ClientOptions { retries: 0, ..quick() });
    let err = client.balance().await.unwrap_err();
    match err {
        ApiError::RateLimited { retry_after, .. } => assert!(retry_after >= Duration::from_secs(1)),
        other => panic!("expected RateLimited, got {other:?}"),
    }
}

#[tokio::test]
async fn the_client_never_sends_more_than_its_limit_per_window() {
    let sb = sandbox().await;
    let options = ClientOptions {
        rate_limit: 4,
        rate_window: Duration::from_millis(1500),
        ..quick()
    };
    let client = acme_with(&sb, options);
    let started = Instant::now();
    let calls: Vec<_> = (0..9)
        .map(|_| {
            let c = client.clone();
            tokio::spawn(async move { c.balance().await })
        })
        .collect();
    for c in calls {
        c.await.unwrap().unwrap();
    }
    // 9 requests at 4 per 1.5 s: the ninth waits two windows.
    assert!(
        started.elapsed() >= Duration::from_millis(2900),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn the_client_waits_out_the_servers_budget_instead_of_hitting_429() {
    let sb = sandbox_with(limited(3, Duration::from_secs(2))).await;
    let client = client_for(
        &sb.base_url(),
        Credentials::pair("ak_demo_acme", "sk_demo_acme"),
        ClientOptions {
            rate_window: Duration::from_secs(2),
            retries: 0,
            ..quick()
        },
    );
    let started = Instant::now();
    for _ in 0..7 {
        client
            .balance()
            .await
            .expect("paced by X-RateLimit-Remaining/Reset, never refused");
    }
    assert!(started.elapsed() >= Duration::from_secs(2));
}

#[tokio::test]
async fn a_get_that_meets_429_waits_retry_after_and_succeeds() {
    // A 3 s window: the whole exchange fits in one even on a loaded machine.
    let sb = sandbox_with(limited(2, Duration::from_secs(3))).await;
    // Another client of the same key spends the budget behind this one's back.
    assert_eq!(acme_get(&sb, "/reseller/balance").await.status, 200);
    assert_eq!(acme_get(&sb, "/reseller/balance").await.status, 200);
    assert_eq!(
        acme_get(&sb, "/reseller/balance").await.status,
        429,
        "the budget is spent"
    );
    let client = client_for(
        &sb.base_url(),
        Credentials::pair("ak_demo_acme", "sk_demo_acme"),
        ClientOptions {
            retries: 2,
            max_retry_wait: Duration::from_secs(5),
            ..quick()
        },
    );
    let started = Instant::now();
    assert_eq!(client.balance().await.unwrap().to_string(), "250.00");
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "it waited for the window: {:?}",
        started.elapsed()
    );
}
