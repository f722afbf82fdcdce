//! The secret stays with its host, through the real binary: plain http to another machine is
//! refused unless allowed (and then said on every run), a redirect to another host is followed
//! neither by a read nor by a payment, and the other host sees nothing.

use crate::common::*;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

#[tokio::test(flavor = "multi_thread")]
async fn plain_http_to_another_machine_is_refused_unless_allowed_and_then_said() {
    let home = tempfile::tempdir().unwrap();
    let out = run_acme_at(&home, "http://api.example.invalid", ["balance"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("unencrypted") && stderr(&out).contains("--allow-http"),
        "{}",
        stderr(&out)
    );

    // Allowed: every run says so. (0.0.0.0 is no loopback name, yet connecting to it stays on
    // this machine and is refused at once: nothing leaves it.)
    let out = run_acme_at(&home, "http://0.0.0.0:9", ["balance", "--allow-http", "--timeout", "2"]).await;
    assert_stderr_has(&out, "is not encrypted");

    // Loopback (a local sandbox, the demo) needs nothing and says nothing.
    let sb = sandbox().await;
    let out = run_acme_at(&home, &sb.base_url(), ["balance"]).await;
    assert_eq!(out.status.code(), Some(0));
    assert!(!stderr(&out).contains("encrypted"), "{}", stderr(&out));
}

#[derive(Clone)]
struct Redirecting {
    sandbox: SocketAddr,
    other: SocketAddr,
    /// GETs too are sent to the other host (else they are passed on to the sandbox).
    reads_away: bool,
}

/// Passes reads on to the sandbox (or redirects them away), and redirects every write (307,
/// which keeps the method and body) to the other host.
async fn redirecting(State(r): State<Redirecting>, request: Request) -> Response {
    let target = request.uri().path_and_query().map_or("/", |p| p.as_str()).to_string();
    if request.method() != Method::GET || r.reads_away {
        let status = if request.method() == Method::GET {
            StatusCode::FOUND
        } else {
            StatusCode::TEMPORARY_REDIRECT
        };
        return (status, [(header::LOCATION, format!("http://{}{target}", r.other))]).into_response();
    }
    let mut forward = reqwest::Client::new().get(format!("http://{}{target}", r.sandbox));
    for (name, value) in request.headers() {
        if name.as_str().starts_with("x-") {
            forward = forward.header(name.as_str(), value.as_bytes());
        }
    }
    let answer = forward.send().await.unwrap();
    let status = StatusCode::from_u16(answer.status().as_u16()).unwrap();
    (status, answer.bytes().await.unwrap()).into_response()
}

async fn counting(State(seen): State<Arc<AtomicU64>>) -> Response {
    seen.fetch_add(1, Ordering::SeqCst);
    (StatusCode::OK, r#"{"balanceUsd":"999.00","ok":true}"#).into_response()
}

async fn serve(addr: &str, router: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}

#[tokio::test(flavor = "multi_thread")]
async fn a_redirect_to_another_host_takes_neither_the_secret_nor_a_payment_there() {
    let sb = sandbox().await;
    let seen = Arc::new(AtomicU64::new(0));
    let other = serve("127.0.0.2:0", Router::new().fallback(counting).with_state(seen.clone())).await;
    let home = tempfile::tempdir().unwrap();
    let api = api(&sb);
    let target = topupable(&api, 1).await.remove(0);
    let orders = orders_at_server(&api).await;

    for reads_away in [true, false] {
        let state = Redirecting {
            sandbox: sb.addr,
            other,
            reads_away,
        };
        let at = serve("127.0.0.1:0", Router::new().fallback(redirecting).with_state(state)).await;
        let base = format!("http://{at}/api/v1");
        if reads_away {
            let out = run_acme_at(&home, &base, ["balance"]).await;
            assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
            let said = stderr(&out);
            assert!(
                said.contains(&format!("the API at http://{at} redirected to http://{other}/"))
                    && said.contains(&format!("sends credentials only to http://{at}")),
                "{said}"
            );
            assert!(!stdout(&out).contains("999"), "the other host's balance is never shown");
        } else {
            let out = finish(start_topup(&home, &base, &target, &["--json"])).await;
            assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
            let error: serde_json::Value = serde_json::from_str(stderr(&out).trim()).unwrap();
            let message = error["error"]["message"].as_str().unwrap();
            assert!(
                message.contains("never sent again after a redirect") && message.contains("nothing was topped up"),
                "{message}"
            );
            assert_eq!(error["error"]["moneyMoved"], false);
            assert_eq!(error["error"]["kind"], "redirected");
        }
    }
    assert_eq!(seen.load(Ordering::SeqCst), 0, "the other host saw no request");
    assert_eq!(orders_at_server(&api).await, orders, "nothing was paid");
}
