//! What the edge tests share: a sandbox with a wallet large enough for many payments, a client
//! to set up and count with, the eSIMs that can be topped up, and the binary's payments.

pub use crate::binary::*;
pub use crate::holding_proxy::HoldingProxy;
use esimdash_api::model::{EsimQuery, OrderQuery};
use esimdash_api::{BaseUrl, Client, ClientOptions, Credentials};
use esimdash_sandbox::{RunningSandbox, SandboxConfig, spawn};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A sandbox whose resellers have 10 000 USD each, and no rate limit to speak of.
pub async fn sandbox() -> RunningSandbox {
    let config = SandboxConfig {
        rate_limit: 100_000,
        balance: Some(rust_decimal::Decimal::new(1_000_000, 2)),
        ..SandboxConfig::default()
    };
    spawn(&config, "127.0.0.1:0".parse().unwrap()).await.unwrap()
}

/// Acme's client straight at the sandbox (no trail): for setting up and counting.
pub fn api(sb: &RunningSandbox) -> Client {
    let options = ClientOptions {
        rate_limit: 100_000,
        ..ClientOptions::default()
    };
    let credentials = Credentials::pair("ak_demo_acme", "sk_demo_acme");
    Client::new(BaseUrl::parse(&sb.base_url()).unwrap(), &credentials, options).unwrap()
}

/// A sandbox (see `sandbox`), Acme's client at it and a home for the binary: where most edge
/// tests start.
pub async fn sandbox_api_home() -> (RunningSandbox, Client, tempfile::TempDir) {
    let sb = sandbox().await;
    let api = api(&sb);
    (sb, api, tempfile::tempdir().unwrap())
}

/// As `sandbox_api_home`, with a proxy in front of the sandbox that holds each payment's
/// answer for `hold`: where the tests of a process stopped mid-payment start.
pub async fn held_sandbox_api_home(hold: Duration) -> (RunningSandbox, Client, HoldingProxy, tempfile::TempDir) {
    let (sb, api, home) = sandbox_api_home().await;
    let proxy = HoldingProxy::start(sb.addr, hold).await;
    (sb, api, proxy, home)
}

/// Acme's orders, as the server counts them.
pub async fn orders_at_server(api: &Client) -> u64 {
    api.orders(&OrderQuery::default()).await.unwrap().total
}

/// Up to `n` (ICCID, top-up slug) pairs of Acme's eSIMs that can be topped up.
pub async fn topupable(api: &Client, n: usize) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for page in 1.. {
        let query = EsimQuery {
            page: Some(page),
            page_size: Some(100),
            status: "active".into(),
            ..EsimQuery::default()
        };
        let esims = api.esims(&query).await.unwrap().esims;
        if esims.is_empty() {
            break;
        }
        for esim in esims {
            let iccid = esim.raw_order_json.iccid;
            if let Some(plan) = api.topup_plans(iccid.valid().unwrap()).await.unwrap().first() {
                found.push((iccid.to_string(), plan.slug.clone()));
                if found.len() == n {
                    return found;
                }
            }
        }
    }
    found
}

/// `esimdash topup --iccid I --slug S --yes` and `extra`, started, output captured.
pub fn start_topup(
    home: &tempfile::TempDir,
    base_url: &str,
    (iccid, slug): &(String, String),
    extra: &[&str],
) -> Child {
    let mut cmd: Command = esimdash(home);
    // The edges' sandbox allows 100 000 a minute; every command of a home shares that budget.
    acme_at(&mut cmd, base_url)
        .env("ESIMDASH_RATE_LIMIT", "100000")
        .args(["topup", "--iccid", iccid, "--slug", slug, "--yes"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.spawn().unwrap()
}

/// Waits (off the runtime) until `done`, failing after `limit`.
pub async fn wait_until(limit: Duration, what: &str, done: impl Fn() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < limit, "waited {limit:?} for {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Sends `signal` to a child.
pub fn signal(child: &Child, signal: i32) {
    // SAFETY: kill(2) on our own child's pid.
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
}

/// The child's exit and output, waited for off the runtime.
pub async fn finish(child: Child) -> std::process::Output {
    tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
        .await
        .unwrap()
}

/// The trail's payment lines of one idempotency key... or of one ICCID: (stage, order).
pub fn stages_of(trail: &[serde_json::Value], iccid: &str) -> Vec<(String, Option<String>)> {
    trail
        .iter()
        .filter(|e| e["iccid"] == iccid)
        .map(|e| {
            (
                e["stage"].as_str().unwrap_or_default().to_string(),
                e["orderNo"].as_str().map(str::to_string),
            )
        })
        .collect()
}
