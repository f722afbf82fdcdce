//! An API that lies the ways one behind a load balancer or a proxy does, in front of the
//! sandbox: it charges, then answers an error or drops the connection; it quotes a plan below
//! what it charges; it echoes the caller's secret back in every encoding a body can carry.
//! What it passes on reaches the sandbox, so money is still counted there.

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use base64::Engine;
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lie {
    Truth,
    /// A payment is carried out, and answered with this status.
    ChargeThen(u16),
    /// A payment is carried out, and the connection dropped before its answer.
    ChargeThenDrop,
    /// Plans are quoted at 0.50 whatever they cost (and are charged).
    QuotesBelow,
    /// Every answer quotes the caller's secret in five encodings; the profile answers 500.
    EchoesSecret,
    /// Every answer takes two seconds.
    Slow,
}

struct Shared {
    sandbox: String,
    lie: Mutex<Lie>,
    http: reqwest::Client,
}

pub struct LyingApi {
    pub base: String,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for LyingApi {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl LyingApi {
    /// In front of the sandbox at `origin` (scheme and address).
    pub async fn start(origin: String) -> LyingApi {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let shared = Arc::new(Shared {
            sandbox: origin,
            lie: Mutex::new(Lie::Truth),
            http: reqwest::Client::new(),
        });
        let app = axum::Router::new().fallback(forward).with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}/api/v1", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        LyingApi { base, shared, task }
    }

    pub fn lie(&self, lie: Lie) {
        *self.shared.lie.lock().unwrap() = lie;
    }
}

/// The secret in five encodings: as written, JSON-escaped, percent-encoded, base64 and
/// URL-safe base64 (each inside other text).
pub fn encodings(secret: &str) -> Vec<String> {
    let json: String = secret.chars().map(|c| format!("\\u{:04X}", c as u32)).collect();
    let percent: String = secret.bytes().map(|b| format!("%{b:02x}")).collect();
    vec![
        secret.to_string(),
        json,
        percent,
        base64::engine::general_purpose::STANDARD.encode(format!("Basic {secret}")),
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("x:{secret}:y")),
    ]
}

async fn forward(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let lie = *shared.lie.lock().unwrap();
    if lie == Lie::Slow {
        tokio::time::sleep(std::time::Duration::from_secs(2)).await;
    }
    let url = format!("{}{}", shared.sandbox, uri.path_and_query().map_or("/", |p| p.as_str()));
    let mut request = shared.http.request(method.clone(), url).body(body);
    for (name, value) in &headers {
        if name != "host" && name != "content-length" {
            request = request.header(name, value);
        }
    }
    let Ok(answer) = request.send().await else {
        return (StatusCode::BAD_GATEWAY, "sandbox unreachable").into_response();
    };
    let status = answer.status();
    let mut kept = HeaderMap::new();
    for name in ["content-type", "idempotency-key", "idempotent-replayed", "retry-after"] {
        if let Some(v) = answer.headers().get(name) {
            kept.insert(name, v.clone());
        }
    }
    let text = answer.bytes().await.unwrap_or_default();
    let payment = method == Method::POST;
    match lie {
        Lie::ChargeThen(code) if payment => {
            let status = StatusCode::from_u16(code).unwrap();
            (
                status,
                [("content-type", "application/json")],
                r#"{"error":"Internal error"}"#,
            )
                .into_response()
        }
        Lie::ChargeThenDrop if payment => {
            // The headers leave, then the body fails: the connection is cut mid-answer.
            let cut = futures_util::stream::once(async { Err::<Bytes, std::io::Error>(std::io::Error::other("cut")) });
            (StatusCode::CREATED, Body::from_stream(cut)).into_response()
        }
        Lie::QuotesBelow if uri.path().ends_with("/portal/plans") => {
            let mut json: serde_json::Value = serde_json::from_slice(&text).unwrap_or_default();
            quote_below(&mut json);
            (status, kept, json.to_string()).into_response()
        }
        Lie::EchoesSecret => {
            let secret = headers
                .get("x-secret-key")
                .and_then(|v| v.to_str().ok())
                .unwrap_or_default();
            let echoed = encodings(secret).join(" ");
            if uri.path().ends_with("/reseller/profile") {
                let body = format!(r#"{{"error":"upstream failed for key {echoed}","trace":"{echoed}"}}"#);
                return (StatusCode::INTERNAL_SERVER_ERROR, body).into_response();
            }
            let rest = String::from_utf8_lossy(&text);
            let body = match rest.trim_start().strip_prefix('{') {
                Some(rest) if status.is_success() => format!(r#"{{"debug":"{echoed}",{rest}"#),
                _ => format!(r#"{{"error":"bad request from {echoed}"}}"#),
            };
            (status, [("content-type", "application/json")], body).into_response()
        }
        _ => (status, kept, text).into_response(),
    }
}

/// Every plan's price and sell price in `json` set to 0.50.
fn quote_below(json: &mut serde_json::Value) {
    match json {
        serde_json::Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                if key == "price" || key == "sellPrice" {
                    *value = serde_json::json!(0.5);
                } else {
                    quote_below(value);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(quote_below),
        _ => {}
    }
}
