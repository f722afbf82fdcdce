//! The API's rate limit is the key's, not a process's: three commands of one account started at
//! once share one budget (`budgets/` in the state folder), counted at the sandbox.

use crate::common::*;
use esimdash_sandbox::{SandboxConfig, spawn};

/// Each command reads 50 pages: alone, each would send them all within the minute, together
/// 150 against the sandbox's default 120 a minute. Shared, they send 120 and wait for the next
/// window for the rest: no request is refused, and every command reads every eSIM.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_commands_at_once_stay_within_the_keys_limit_together() {
    let config = SandboxConfig {
        orders: 5_000,
        ..SandboxConfig::default()
    };
    assert_eq!(config.rate_limit, 120, "the sandbox's default limit, as the API's");
    let sb = spawn(&config, "127.0.0.1:0".parse().unwrap()).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let base = sb.base_url();
    let read_all = || run_acme_at(&home, &base, ["esims", "--all", "--json"]);
    let (a, b, c) = tokio::join!(read_all(), read_all(), read_all());
    let mut read = Vec::new();
    for out in [&a, &b, &c] {
        assert!(out.status.success(), "{}", stderr(out));
        let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        read.push(listed["esims"].as_array().map_or(0, Vec::len));
    }
    assert!(
        read[0] > 4_000 && read.iter().all(|n| *n == read[0]),
        "each read every eSIM: {read:?}"
    );
    let sent = sb.api_requests_received();
    assert!(sent > 120, "together more than a window's budget: {sent}");
    assert_eq!(
        sb.rate_limited(),
        0,
        "none of {sent} requests refused for the key's limit"
    );
}
