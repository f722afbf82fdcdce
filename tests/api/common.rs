//! Test helpers: an in-process sandbox on a free loopback port, clients for the demo keys,
//! raw HTTP for wire-level checks, and scripted servers for answers the sandbox never gives.

use axum::Router;
use axum::http::StatusCode;
use esimdash_api::{BaseUrl, Client, ClientOptions, Credentials};
use esimdash_domain::iccid::Iccid;
use esimdash_sandbox::{RunningSandbox, SandboxConfig, spawn};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

#[path = "../support/tools.rs"]
#[allow(dead_code)]
mod tools;
pub use tools::property_config;

/// Sandbox settings with a rate limit high enough that only tests about limits meet it.
pub fn unpaced() -> SandboxConfig {
    SandboxConfig {
        rate_limit: 100_000,
        ..SandboxConfig::default()
    }
}

/// A sandbox of `unpaced` settings.
pub async fn sandbox() -> RunningSandbox {
    sandbox_with(unpaced()).await
}

/// A sandbox (see `sandbox`) and Acme's client at it: where most contract tests start.
pub async fn sandbox_and_acme() -> (RunningSandbox, Client) {
    let sb = sandbox().await;
    let client = acme(&sb);
    (sb, client)
}

/// A sandbox (see `sandbox`) with or without the lookup of an eSIM by ICCID.
pub async fn sandbox_with_lookup(iccid_lookup: bool) -> RunningSandbox {
    sandbox_with(SandboxConfig {
        iccid_lookup,
        ..unpaced()
    })
    .await
}

pub async fn sandbox_with(config: SandboxConfig) -> RunningSandbox {
    spawn(&config, "127.0.0.1:0".parse().unwrap())
        .await
        .expect("the sandbox binds a loopback port")
}

/// Client options for tests: no pacing to speak of, short backoff.
pub fn quick() -> ClientOptions {
    ClientOptions {
        rate_limit: 100_000,
        backoff: Duration::from_millis(20),
        request_timeout: Duration::from_secs(10),
        ..ClientOptions::default()
    }
}

pub fn client_for(base_url: &str, credentials: Credentials, options: ClientOptions) -> Client {
    Client::new(BaseUrl::parse(base_url).unwrap(), &credentials, options).unwrap()
}

pub fn acme(sb: &RunningSandbox) -> Client {
    acme_with(sb, quick())
}

/// Acme's client at the sandbox with these options.
pub fn acme_with(sb: &RunningSandbox, options: ClientOptions) -> Client {
    client_for(
        &sb.base_url(),
        Credentials::pair("ak_demo_acme", "sk_demo_acme"),
        options,
    )
}

/// That the server refused with `status` and said `message`, its own words.
#[track_caller]
pub fn assert_refused(err: &esimdash_api::ApiError, status: u16, message: &str) {
    assert_eq!((err.status(), err.server_message()), (Some(status), Some(message)));
}

/// The first page of 100 of Acme's eSIMs of this status.
pub async fn first_100_esims(client: &Client, status: &str) -> esimdash_api::model::EsimPage {
    let query = esimdash_api::model::EsimQuery {
        status: status.into(),
        page_size: Some(100),
        ..Default::default()
    };
    client.esims(&query).await.unwrap()
}

pub fn globex(sb: &RunningSandbox) -> Client {
    client_for(
        &sb.base_url(),
        Credentials::pair("ak_demo_globex", "sk_demo_globex"),
        quick(),
    )
}

pub const ACME_PAIR: [(&str, &str); 2] = [("x-access-code", "ak_demo_acme"), ("x-secret-key", "sk_demo_acme")];

/// A raw answer: status, headers and the JSON body (Null when the body is not JSON).
pub struct Raw {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
    /// The body as sent, for checks of exact number text.
    pub text: String,
}

/// Sends one request with exactly these headers and body, as any HTTP client could.
pub async fn raw(method: &str, url: &str, headers: &[(&str, &str)], body: Option<&str>) -> Raw {
    // As the product's client does: rustls on ring (a test run alone has installed none yet).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = reqwest::Client::new();
    let mut req = http.request(method.parse().unwrap(), url);
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    if let Some(b) = body {
        req = req.header("content-type", "application/json").body(b.to_string());
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let bytes = resp.bytes().await.unwrap();
    Raw {
        status,
        headers,
        body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        text: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

/// `GET` an API path as Acme.
pub async fn acme_get(sb: &RunningSandbox, path_and_query: &str) -> Raw {
    raw("GET", &format!("{}{path_and_query}", sb.base_url()), &ACME_PAIR, None).await
}

pub const GLOBEX_PAIR: [(&str, &str); 2] = [("x-access-code", "ak_demo_globex"), ("x-secret-key", "sk_demo_globex")];

pub async fn globex_get(sb: &RunningSandbox, path_and_query: &str) -> Raw {
    raw("GET", &format!("{}{path_and_query}", sb.base_url()), &GLOBEX_PAIR, None).await
}

/// Acme's oldest eSIM (the last item of its list): its ICCID and how many eSIMs there are.
pub async fn oldest_iccid(sb: &RunningSandbox) -> (Iccid, u64) {
    let total = acme_get(sb, "/reseller/esims?pageSize=1").await.body["total"]
        .as_u64()
        .unwrap();
    let last = acme_get(sb, &format!("/reseller/esims?pageSize=1&page={total}")).await;
    let iccid = last.body["esims"][0]["rawOrderJson"]["iccid"].as_str().unwrap();
    (Iccid::parse(iccid).unwrap(), total)
}

pub async fn acme_send(sb: &RunningSandbox, method: &str, path: &str, body: &str) -> Raw {
    raw(method, &format!("{}{path}", sb.base_url()), &ACME_PAIR, Some(body)).await
}

pub fn error_of(r: &Raw) -> &str {
    r.body["error"].as_str().unwrap_or("<no error field>")
}

/// A server that answers each request with the next scripted (status, body), repeating the
/// last, and counts the requests it got.
pub struct Scripted {
    pub base_url: String,
    pub hits: Arc<AtomicUsize>,
    _task: tokio::task::JoinHandle<()>,
}

impl Scripted {
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

pub async fn scripted(answers: Vec<(u16, String)>) -> Scripted {
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    let answers = Arc::new(answers);
    let app = Router::new().fallback(move || {
        let n = counter.fetch_add(1, Ordering::SeqCst);
        let (status, body) = answers[n.min(answers.len() - 1)].clone();
        async move {
            (
                StatusCode::from_u16(status).unwrap(),
                [("content-type", "application/json")],
                body,
            )
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let task = tokio::spawn(async move {
        axum::serve(listener, app).await.unwrap();
    });
    Scripted {
        base_url: format!("http://{addr}/api/v1"),
        hits,
        _task: task,
    }
}

/// A client of a scripted server, with the Acme pair.
pub fn scripted_client(s: &Scripted, options: ClientOptions) -> Client {
    client_for(&s.base_url, Credentials::pair("ak_demo_acme", "sk_demo_acme"), options)
}

/// A valid ICCID (the `89` prefix, the Luhn digit) that no reseller of the sandbox holds.
pub fn no_such_iccid() -> Iccid {
    Iccid::parse("8949999999999999994").unwrap()
}
