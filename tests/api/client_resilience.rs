//! The client against answers the sandbox never gives: 5xx, dropped and refused connections,
//! slow answers, bodies it cannot read. GETs retry within bounds; writes are sent once.

use crate::common::*;
use esimdash_api::model::{OrderQuery, TopupRequest};
use esimdash_api::{ApiError, ClientOptions, Credentials};
use esimdash_domain::iccid::Iccid;
use esimdash_sandbox::SandboxConfig;
use std::time::Duration;

/// A top-up that only a scripted server sees.
fn placeholder_topup() -> TopupRequest {
    TopupRequest {
        iccid: Iccid::parse("8944100000000000018").unwrap(),
        slug: "s".into(),
        qty: 1,
    }
}

const PROFILE: &str = r#"{"profile":{"name":"A","balanceUsd":"1.00"}}"#;

#[tokio::test]
async fn a_get_retries_5xx_with_backoff_then_succeeds() {
    let s = scripted(vec![
        (503, "{\"error\":\"busy\"}".into()),
        (502, "<html>bad gateway</html>".into()),
        (200, PROFILE.into()),
    ])
    .await;
    let profile = scripted_client(&s, quick()).profile().await.unwrap();
    assert_eq!(profile.name, "A");
    assert_eq!(s.hits(), 3);
}

#[tokio::test]
async fn a_get_gives_up_after_its_retries_with_the_servers_message() {
    let s = scripted(vec![(500, "{\"error\":\"database on fire\"}".into())]).await;
    let err = scripted_client(&s, ClientOptions { retries: 2, ..quick() })
        .profile()
        .await
        .unwrap_err();
    assert_eq!(s.hits(), 3, "one try and two retries");
    assert_refused(&err, 500, "database on fire");
}

#[tokio::test]
async fn writes_are_never_retried() {
    let s = scripted(vec![(503, "{\"error\":\"busy\"}".into()), (201, "{}".into())]).await;
    let client = scripted_client(&s, quick());
    let err = client.topup(&placeholder_topup()).await.unwrap_err();
    assert_eq!(err.status(), Some(503));
    let err = client.update_profile(&Default::default()).await.unwrap_err();
    assert!(
        matches!(err, ApiError::Decode { status: 201, .. }),
        "a 201 without a profile is unreadable: {err:?}"
    );
    assert_eq!(s.hits(), 2, "each write went out exactly once");

    let limited = scripted(vec![
        (429, "{\"error\":\"Rate limit exceeded\"}".into()),
        (201, "{}".into()),
    ])
    .await;
    let err = scripted_client(&limited, quick())
        .place_order(&esimdash_api::model::OrderRequest {
            slug: "s".into(),
            qty: 1,
        })
        .await
        .unwrap_err();
    assert!(matches!(err, ApiError::RateLimited { .. }), "{err:?}");
    assert_eq!(limited.hits(), 1, "a 429 on a write is reported, not retried");
}

#[tokio::test]
async fn a_refused_connection_is_a_network_error_that_names_the_host() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let client = client_for(
        &format!("http://127.0.0.1:{port}"),
        Credentials::pair("a", "s"),
        ClientOptions { retries: 1, ..quick() },
    );
    let err = client.balance().await.unwrap_err();
    match &err {
        ApiError::Network {
            host, outcome_unknown, ..
        } => {
            assert_eq!(host, &format!("127.0.0.1:{port}"));
            assert!(!outcome_unknown);
        }
        other => panic!("expected a network error, got {other:?}"),
    }
    let err = client.topup(&placeholder_topup()).await.unwrap_err();
    assert!(
        !err.outcome_unknown(),
        "a refused connection never carried the request: {err}"
    );
}

#[tokio::test]
async fn a_slow_answer_times_out_and_a_timed_out_write_is_an_unknown_outcome() {
    let sb = sandbox_with(SandboxConfig {
        latency: Duration::from_millis(1500),
        rate_limit: 100_000,
        ..Default::default()
    })
    .await;
    let options = ClientOptions {
        request_timeout: Duration::from_millis(500),
        ..quick()
    };
    let client = acme_with(&sb, options);
    let err = client.orders(&OrderQuery::default()).await.unwrap_err();
    assert!(
        matches!(
            err,
            ApiError::Timeout {
                outcome_unknown: false,
                ..
            }
        ),
        "{err:?}"
    );

    let patient = acme(&sb);
    let esim = patient
        .esims(&esimdash_api::model::EsimQuery {
            status: "in_use".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .esims
        .remove(0);
    let iccid = esim.raw_order_json.iccid.valid().unwrap().clone();
    let slug = patient.topup_plans(&iccid).await.unwrap()[0].slug.clone();
    let count = patient.orders(&OrderQuery::default()).await.unwrap().total;
    let err = client
        .topup(&TopupRequest {
            iccid: iccid.clone(),
            slug: slug.clone(),
            qty: 1,
        })
        .await
        .unwrap_err();
    assert!(err.outcome_unknown(), "{err:?}");
    assert!(err.to_string().contains("may or may not"), "{err}");
    // The server did carry it out, once: the client did not send it again.
    let after = patient.orders(&OrderQuery::default()).await.unwrap();
    assert_eq!(after.total, count + 1);
    assert_eq!(after.orders[0].record.slug, slug);
}

#[tokio::test]
async fn unreadable_bodies_become_clear_errors_with_a_sanitised_excerpt() {
    for (body, what) in [
        ("{\"page\":1,\"orders\":[{\"status\":", "truncated"),
        ("{\"page\":1,\"orders\":{}}", "wrong type"),
        ("<html><body>Gateway \u{1b}[31mError</body></html>", "not JSON"),
        (
            "{\"page\":1,\"total\":1,\"orders\":[{\"totalSellPrice\":\"12,50\"}]}",
            "not an amount",
        ),
        (
            "{\"page\":1,\"total\":1,\"orders\":[{\"totalSellPrice\":1e999}]}",
            "huge number",
        ),
        ("", "empty"),
    ] {
        let s = scripted(vec![(200, body.into())]).await;
        let err = scripted_client(&s, quick())
            .orders(&OrderQuery::default())
            .await
            .unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, ApiError::Decode { status: 200, .. }), "{what}: {err:?}");
        assert!(
            text.contains("GET /reseller/orders"),
            "{what}: names the endpoint: {text}"
        );
        assert!(
            !text.contains('\u{1b}'),
            "{what}: no control characters reach the screen"
        );
    }
}

#[tokio::test]
async fn an_error_message_is_sanitised_and_never_echoes_the_secret() {
    let s = scripted(vec![(400, "{\"error\":\"bad key sk_demo_acme \u{1b}[2J\"}".into())]).await;
    let err = scripted_client(&s, quick()).profile().await.unwrap_err();
    let text = err.to_string();
    assert!(!text.contains("sk_demo_acme") && text.contains("[REDACTED]"), "{text}");
    assert!(!text.contains('\u{1b}'), "{text}");
    let s = scripted(vec![(200, "{\"profile\": \"sk_demo_acme\"}".into())]).await;
    let err = scripted_client(&s, quick()).profile().await.unwrap_err();
    assert!(!format!("{err} {err:?}").contains("sk_demo_acme"), "{err}");
}

#[tokio::test]
async fn a_401_without_a_body_and_a_body_past_the_cap() {
    let s = scripted(vec![(401, String::new())]).await;
    let err = scripted_client(&s, quick()).profile().await.unwrap_err();
    assert!(matches!(err, ApiError::Unauthorized { .. }), "{err:?}");
    let huge = format!("{{\"data\":[{}]}}", "{\"slug\":\"x\"},".repeat(1_600_000));
    let s = scripted(vec![(200, huge)]).await;
    let err = scripted_client(&s, quick()).plans().await.unwrap_err();
    assert!(err.to_string().contains("larger than"), "{err}");
}

#[tokio::test]
async fn balance_falls_back_to_the_profile_where_there_is_no_balance_route() {
    let s = scripted(vec![(404, "{\"error\":\"Not found\"}".into()), (200, PROFILE.into())]).await;
    assert_eq!(
        scripted_client(&s, quick()).balance().await.unwrap().to_string(),
        "1.00"
    );
    assert_eq!(s.hits(), 2);
}

#[tokio::test]
async fn finding_an_esim_by_iccid_is_one_request_where_the_server_has_the_lookup() {
    let sb = sandbox().await;
    let (iccid, _) = oldest_iccid(&sb).await;
    let client = acme(&sb);
    let before = sb.requests_received();
    let found = client.find_esim(&iccid).await.unwrap().expect("found");
    assert_eq!(found.raw_order_json.iccid, iccid);
    assert_eq!(sb.requests_received() - before, 1);
    assert!(client.find_esim(&no_such_iccid()).await.unwrap().is_none());
    assert!(!client.lacks_iccid_lookup());
}

#[tokio::test]
async fn a_server_that_ignores_the_lookup_never_yields_another_esim_and_is_remembered() {
    let sb = sandbox_with_lookup(false).await;
    let (iccid, total) = oldest_iccid(&sb).await;
    let client = acme(&sb);
    let pages = total.div_ceil(100);

    let before = sb.requests_received();
    let found = client
        .find_esim(&iccid)
        .await
        .unwrap()
        .expect("found by reading the list");
    assert_eq!(found.raw_order_json.iccid, iccid, "never another eSIM");
    assert!(client.lacks_iccid_lookup());
    // The lookup's answer was page 1 of the list: reading goes on from page 2.
    assert_eq!(sb.requests_received() - before, pages);

    // Remembered: the next search reads the list without asking for the lookup first.
    let before = sb.requests_received();
    assert!(client.find_esim(&no_such_iccid()).await.unwrap().is_none());
    assert_eq!(sb.requests_received() - before, pages);
    match client.lookup_esim(&iccid).await.unwrap() {
        esimdash_api::Lookup::Unsupported(None) => {}
        other => panic!("expected the remembered answer without a request, got {other:?}"),
    }
}
