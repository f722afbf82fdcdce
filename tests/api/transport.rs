//! Redirects (docs/api-contract.md, "Transport"): a read follows one only within the API's origin; a
//! write never follows one; nothing, credentials least of all, reaches another host. Every
//! redirect status × every method × same or other origin, counted at both servers.

use crate::common::*;
use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use esimdash_api::model::{Esim, ProfileUpdate, TopupRequest};
use esimdash_api::{ApiError, Client, Credentials, RedirectRefused};
use esimdash_domain::iccid::Iccid;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// What a server saw: method, path, and whether the secret came with it.
type Seen = Arc<Mutex<Vec<(String, String, bool)>>>;

#[derive(Clone)]
struct Redirector {
    /// The status it answers every API request with.
    status: Arc<Mutex<u16>>,
    /// Where it points: its own origin (a `/moved` path) or the other host.
    to_other: Arc<Mutex<bool>>,
    other: SocketAddr,
    seen: Seen,
}

async fn redirecting(State(r): State<Redirector>, request: Request) -> Response {
    let (path, query) = (
        request.uri().path().to_string(),
        request.uri().query().map(str::to_string),
    );
    note(&r.seen, &request);
    if path.starts_with("/moved/") {
        return (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            r#"{"balanceUsd":"1.00"}"#,
        )
            .into_response();
    }
    let status = StatusCode::from_u16(*r.status.lock().unwrap()).unwrap();
    let tail = query.map_or(path.clone(), |q| format!("{path}?{q}"));
    let location = if *r.to_other.lock().unwrap() {
        format!("http://{}{tail}", r.other)
    } else {
        format!("/moved{tail}")
    };
    (status, [(header::LOCATION, location)]).into_response()
}

/// The other host: answers everything as if it were the API, and remembers what came.
async fn other_host(State(seen): State<Seen>, request: Request) -> Response {
    note(&seen, &request);
    (StatusCode::OK, r#"{"balanceUsd":"999.00"}"#).into_response()
}

fn note(seen: &Seen, request: &Request) {
    let headers: &HeaderMap = request.headers();
    let secret = headers.values().any(|v| v.as_bytes() == b"sk_demo_acme");
    seen.lock()
        .unwrap()
        .push((request.method().to_string(), request.uri().path().to_string(), secret));
}

async fn serve(addr: &str, router: Router) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind(addr).await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await });
    addr
}

struct Servers {
    redirector: Redirector,
    client: Client,
    other_seen: Seen,
}

async fn servers() -> Servers {
    let other_seen: Seen = Arc::default();
    // Another host: 127.0.0.2 is this machine too, but another origin.
    let other = serve(
        "127.0.0.2:0",
        Router::new().fallback(other_host).with_state(other_seen.clone()),
    )
    .await;
    let redirector = Redirector {
        status: Arc::new(Mutex::new(302)),
        to_other: Arc::new(Mutex::new(true)),
        other,
        seen: Arc::default(),
    };
    let at = serve(
        "127.0.0.1:0",
        Router::new().fallback(redirecting).with_state(redirector.clone()),
    )
    .await;
    let client = client_for(
        &format!("http://{at}/api/v1"),
        Credentials::pair("ak_demo_acme", "sk_demo_acme"),
        quick(),
    );
    Servers {
        redirector,
        client,
        other_seen,
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Call {
    Balance,
    Topup,
    Profile,
}

async fn call(client: &Client, what: Call) -> Result<(), ApiError> {
    match what {
        Call::Balance => client.balance().await.map(|b| assert_eq!(b.to_string(), "1.00")),
        Call::Topup => {
            let request = TopupRequest {
                iccid: Iccid::parse("8944100000000000018").unwrap(),
                slug: "fr-topup-1gb".into(),
                qty: 1,
            };
            client.topup(&request).await.map(drop)
        }
        Call::Profile => {
            let update = ProfileUpdate {
                company_name: Some("Moved".into()),
                ..Default::default()
            };
            client.update_profile(&update).await.map(drop)
        }
    }
}

#[tokio::test]
async fn the_redirect_matrix_reads_follow_within_the_origin_and_nothing_reaches_another_host() {
    let s = servers().await;
    let mut matrix = Vec::new();
    for status in [301, 302, 303, 307, 308] {
        for what in [Call::Balance, Call::Topup, Call::Profile] {
            for other in [false, true] {
                *s.redirector.status.lock().unwrap() = status;
                *s.redirector.to_other.lock().unwrap() = other;
                s.redirector.seen.lock().unwrap().clear();
                let result = call(&s.client, what).await;
                let moved_hits = s
                    .redirector
                    .seen
                    .lock()
                    .unwrap()
                    .iter()
                    .filter(|(_, p, _)| p.starts_with("/moved/"))
                    .count();
                let outcome = match &result {
                    Ok(()) => "followed".to_string(),
                    Err(ApiError::Redirected { refused, from, to, .. }) => {
                        assert!(from.starts_with("http://127.0.0.1:"), "{from}");
                        let message = result.as_ref().unwrap_err().to_string();
                        assert!(
                            message.contains(from.as_str()) && message.contains(to.as_str()),
                            "{message}"
                        );
                        let unknown = result.as_ref().unwrap_err().outcome_unknown();
                        format!("refused: {refused:?}{}", if unknown { ", outcome unknown" } else { "" })
                    }
                    Err(e) => panic!("{status} {what:?} other={other}: {e}"),
                };
                let expected = match (what, other) {
                    (Call::Balance, false) => "followed".to_string(),
                    (Call::Balance, true) => format!("refused: {:?}", RedirectRefused::OtherOrigin),
                    // Post-then-redirect: a payment may have been carried out before a 302/303.
                    (_, _) if matches!(status, 302 | 303) => {
                        format!("refused: {:?}, outcome unknown", RedirectRefused::Write)
                    }
                    (_, _) => format!("refused: {:?}", RedirectRefused::Write),
                };
                assert_eq!(outcome, expected, "{status} {what:?} other origin: {other}");
                assert_eq!(
                    moved_hits,
                    usize::from(outcome == "followed"),
                    "{status} {what:?}: only a read follows, once"
                );
                matrix.push(format!(
                    "{status} {what:?} {} → {outcome}",
                    if other { "other" } else { "same" }
                ));
            }
        }
    }
    assert!(
        s.other_seen.lock().unwrap().is_empty(),
        "the other host saw nothing: {:?}",
        s.other_seen.lock().unwrap()
    );
    eprintln!("{}", matrix.join("\n"));
}

#[tokio::test]
async fn a_redirect_loop_within_the_origin_stops() {
    let s = servers().await;
    // A Location back to the same path, every time.
    let looping = s.redirector.clone();
    async fn again(State(r): State<Redirector>, request: Request) -> Response {
        note(&r.seen, &request);
        (
            StatusCode::FOUND,
            [(header::LOCATION, request.uri().path().to_string())],
        )
            .into_response()
    }
    let at = serve("127.0.0.1:0", Router::new().fallback(again).with_state(looping.clone())).await;
    let client = client_for(
        &format!("http://{at}/api/v1"),
        Credentials::pair("ak_demo_acme", "sk_demo_acme"),
        quick(),
    );
    let error = client.balance().await.unwrap_err();
    assert!(
        matches!(
            error,
            ApiError::Redirected {
                refused: RedirectRefused::TooMany,
                ..
            }
        ),
        "{error:?}"
    );
    assert!(looping.seen.lock().unwrap().len() <= 6, "at most five hops");
}

#[tokio::test]
async fn a_qr_image_is_not_fetched_from_another_origin() {
    let s = servers().await;
    *s.redirector.to_other.lock().unwrap() = true;
    let at = s.redirector.other;
    let esim: Esim = serde_json::from_value(serde_json::json!({
        "providerOrderNo": "B1",
        "status": "got_resource",
        "rawOrderJson": {
            "iccid": "8944100000000000011",
            "qrCodeUrl": format!("{}/qr/x.png", s.client.base_url().origin()),
            "smdpStatus": "RELEASED"
        }
    }))
    .unwrap();
    let error = s.client.activation_code(&esim).await.unwrap_err();
    assert!(
        error.contains("redirected") && error.contains(&at.to_string()),
        "{error}"
    );
    assert!(s.other_seen.lock().unwrap().is_empty());
}

/// A redirect whose address carries the secret back (a proxy that echoes headers into a path):
/// no error text shows it, as written or percent-encoded.
#[tokio::test]
async fn a_redirect_that_names_the_secret_is_reported_without_it() {
    let s = servers().await;
    async fn leaking(State(other): State<SocketAddr>) -> Response {
        (
            StatusCode::FOUND,
            [(
                header::LOCATION,
                format!("http://{other}/s3cr%2Ft!key/sk_demo_acme/next"),
            )],
        )
            .into_response()
    }
    let at = serve(
        "127.0.0.1:0",
        Router::new().fallback(leaking).with_state(s.redirector.other),
    )
    .await;
    let client = client_for(
        &format!("http://{at}/api/v1"),
        Credentials::pair("ak_demo_acme", "sk_demo_acme"),
        quick(),
    );
    let error = client.balance().await.unwrap_err();
    let said = format!("{error} {error:?}");
    assert!(matches!(error, ApiError::Redirected { .. }), "{said}");
    assert!(!said.contains("sk_demo_acme"), "{said}");
    assert!(said.contains("[REDACTED]"), "{said}");
    let encoded = "s3cr%2Ft!key";
    let client = client_for(
        &format!("http://{at}/api/v1"),
        Credentials::pair("ak_demo_acme", "s3cr/t!key"),
        quick(),
    );
    let said = client.balance().await.unwrap_err().to_string();
    assert!(!said.contains(encoded) && !said.contains("s3cr/t!key"), "{said}");
}
