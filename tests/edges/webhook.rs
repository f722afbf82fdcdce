//! `watch --webhook`: each change posted to a receiver, signed (`Esimdash-Signature`, checked
//! here with an HMAC of our own), kept while the receiver is down and posted when it is back,
//! with the id it had; a receiver that stalls costs the watch the answer's 3 s, no more.

use crate::common::*;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use hmac::{KeyInit, Mac};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SECRET: &str = "whsec_test_0123456789";

/// What the receiver took: (the Esimdash-Event-Id header, the body's id, whether the signature
/// holds), and how it answers.
#[derive(Default)]
struct Receiver {
    took: Mutex<Vec<(String, String, bool)>>,
    stall: std::sync::atomic::AtomicBool,
}

/// Checks `t=…,v1=…` as a receiver would: the HMAC-SHA256 of "<t>.<body>", a `t` within five
/// minutes of now.
fn verified(headers: &HeaderMap, body: &[u8]) -> bool {
    let Some(sig) = headers.get("esimdash-signature").and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let (Some(t), Some(v1)) = (
        sig.split(',').find_map(|p| p.strip_prefix("t=")),
        sig.split(',').find_map(|p| p.strip_prefix("v1=")),
    ) else {
        return false;
    };
    let fresh = t
        .parse::<i64>()
        .is_ok_and(|t| (chrono::Utc::now().timestamp() - t).abs() < 300);
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(SECRET.as_bytes()).unwrap();
    mac.update(format!("{t}.").as_bytes());
    mac.update(body);
    let hex: String = mac.finalize().into_bytes().iter().map(|b| format!("{b:02x}")).collect();
    fresh && hex == v1
}

async fn take(State(r): State<Arc<Receiver>>, headers: HeaderMap, body: Bytes) -> StatusCode {
    if r.stall.load(std::sync::atomic::Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_secs(20)).await;
    }
    let header = headers
        .get("esimdash-event-id")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let json: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let id = json["id"].as_str().unwrap_or_default().to_string();
    r.took.lock().unwrap().push((header, id, verified(&headers, &body)));
    StatusCode::NO_CONTENT
}

async fn receiver_at(listener: tokio::net::TcpListener) -> Arc<Receiver> {
    let receiver = Arc::new(Receiver::default());
    let router = Router::new().fallback(take).with_state(receiver.clone());
    tokio::spawn(async move { axum::serve(listener, router).await });
    receiver
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_reach_a_webhook_signed_once_it_is_up_with_their_ids() {
    let sb = sandbox().await;
    // A client made first installs the TLS provider the orders' placing needs.
    let _ = api(&sb);
    let home = tempfile::tempdir().unwrap();
    // The receiver's address, not listening yet: it is down.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/esimdash", listener.local_addr().unwrap());
    drop(listener);
    let watch_once = || {
        let mut cmd = esimdash(&home);
        acme_at(&mut cmd, &sb.base_url())
            .env("ESIMDASH_RATE_LIMIT", "100000")
            .env("ESIMDASH_WEBHOOK_SECRET", SECRET)
            .args(["watch", "--once", "--webhook", &url]);
        run(cmd)
    };
    assert!(watch_once().await.status.success(), "the first poll learns the account");
    crate::orders::place_orders(&sb.base_url(), 1).await;

    let down = watch_once().await;
    assert!(down.status.success(), "{}", stderr(&down));
    let ids = |out: &std::process::Output| -> Vec<String> {
        stdout(out)
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    let told = ids(&down);
    assert!(!told.is_empty(), "the new order is a change");
    assert!(stderr(&down).contains("did not take change"), "{}", stderr(&down));

    let receiver = receiver_at(tokio::net::TcpListener::bind(url_addr(&url)).await.unwrap()).await;
    let up = watch_once().await;
    assert!(up.status.success(), "{}", stderr(&up));
    let took = receiver.took.lock().unwrap().clone();
    let expected: Vec<(String, String, bool)> = told.iter().map(|id| (id.clone(), id.clone(), true)).collect();
    assert_eq!(
        took, expected,
        "kept while down, posted once up, signed, with the ids told"
    );

    // Nothing new: nothing posted again.
    watch_once().await;
    assert_eq!(receiver.took.lock().unwrap().len(), told.len());

    // A receiver that stalls: the watch gives up on it after 3 s, keeps the change, posts it
    // again once the receiver answers (at least once: a stalled post may have been taken).
    crate::orders::place_orders(&sb.base_url(), 1).await;
    receiver.stall.store(true, std::sync::atomic::Ordering::Relaxed);
    let started = Instant::now();
    let stalled = watch_once().await;
    assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
    assert!(
        stderr(&stalled).contains("no answer within 3 s"),
        "{}",
        stderr(&stalled)
    );
    receiver.stall.store(false, std::sync::atomic::Ordering::Relaxed);
    watch_once().await;
    let took = receiver.took.lock().unwrap().clone();
    assert!(took.len() > told.len(), "the second change posted: {took:?}");
    assert!(took.iter().all(|(header, id, ok)| header == id && *ok), "{took:?}");
    assert!(
        !told.contains(&took.last().unwrap().1),
        "the second change has an id of its own"
    );
}

fn url_addr(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches("/esimdash")
        .to_string()
}
