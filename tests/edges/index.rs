//! The inventory index at a real reseller's size, against a server with only the published
//! routes (no lookup by ICCID): what a command's find costs in a first and a second session,
//! after new orders, and after the first was killed mid-read. The real binary, each run a
//! session of its own sharing the account's index file; pages counted at the server.

use crate::common::*;
use esimdash::api::BaseUrl;
use esimdash::api::model::EsimQuery;
use esimdash::inventory::Inventory;
use esimdash::inventory::store;
use esimdash::sandbox::{RunningSandbox, SandboxConfig, spawn};
use std::collections::HashSet;
use std::time::Duration;

async fn without_lookup(orders: usize) -> RunningSandbox {
    let config = SandboxConfig {
        orders,
        rate_limit: 1_000_000,
        iccid_lookup: false,
        allocate_after: Duration::ZERO,
        balance: Some(rust_decimal::Decimal::new(1_000_000, 2)),
        ..SandboxConfig::default()
    };
    spawn(&config, "127.0.0.1:0".parse().unwrap()).await.unwrap()
}

/// `esimdash esims --iccid ICCID --json` as Acme, with the client's own pace lifted (the
/// sandbox's limit is lifted too: this counts pages, not waits).
fn find(home: &tempfile::TempDir, sb: &RunningSandbox, iccid: &str) -> std::process::Command {
    let mut cmd = esimdash(home);
    acme_at(&mut cmd, &sb.base_url())
        .env("ESIMDASH_RATE_LIMIT", "1000000")
        .args(["esims", "--iccid", iccid, "--json"]);
    cmd
}

/// The ICCID at `index` on page `page` (100 a page) of Acme's eSIMs, read by the test.
async fn iccid_at(sb: &RunningSandbox, page: u64, index: usize) -> String {
    let query = EsimQuery {
        page: Some(page),
        page_size: Some(100),
        ..EsimQuery::default()
    };
    api(sb).esims(&query).await.unwrap().esims[index]
        .raw_order_json
        .iccid
        .to_string()
}

/// The account's index as the binary saved it in `home`.
fn saved_index(home: &tempfile::TempDir, sb: &RunningSandbox) -> Inventory {
    saved_index_if_any(home, sb).expect("an index was saved")
}

fn saved_index_if_any(home: &tempfile::TempDir, sb: &RunningSandbox) -> Option<Inventory> {
    let base = BaseUrl::parse(&sb.base_url()).unwrap();
    let account = store::account_key(base.as_str(), "ak_demo_acme");
    let path = store::path_in(&home.path().join(".cache/esimdash"), &account);
    store::load(&path, &account).ok().map(|l| l.inventory)
}

/// Runs a find and returns the eSIM pages the server served for it.
async fn pages_read_by(cmd: std::process::Command, sb: &RunningSandbox, iccid: &str) -> Vec<u64> {
    let before = sb.esim_pages_served().len();
    let out = run(cmd).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout_json(&out)["esim"]["rawOrderJson"]["iccid"], iccid);
    sb.esim_pages_served()[before..].to_vec()
}

#[tokio::test]
async fn without_the_lookup_at_100_000_a_second_session_finds_in_two_requests_and_new_orders_in_two() {
    let sb = without_lookup(100_000).await;
    let on_400 = iccid_at(&sb, 400, 0).await;
    let on_213 = iccid_at(&sb, 213, 57).await;
    let home = tempfile::tempdir().unwrap();

    let first = pages_read_by(find(&home, &sb, &on_400), &sb, &on_400).await;
    let distinct: HashSet<u64> = first.iter().copied().collect();
    eprintln!("session 1, no index: {} eSIM requests", first.len());
    assert!(distinct.contains(&400));
    // Page 1 comes twice: the lookup the server ignored, and nothing else.
    assert!(first.len() <= distinct.len() + 1, "no page read twice: {first:?}");
    assert_eq!(saved_index(&home, &sb).len(), 40_000, "every page read was kept");

    for iccid in [&on_400, &on_213] {
        let pages = pages_read_by(find(&home, &sb, iccid), &sb, iccid).await;
        eprintln!("session 2, {iccid}: eSIM pages {pages:?}");
        assert!(pages.len() <= 2, "{pages:?}");
    }

    // 50 new orders at the server: the next session's index has their eSIMs, and the find
    // still costs two pages (the list's growth tells where the eSIM moved).
    crate::orders::place_orders(&sb.base_url(), 50).await;
    let (newest, total): (Vec<String>, u64) = {
        let query = EsimQuery {
            page: Some(1),
            page_size: Some(50),
            ..EsimQuery::default()
        };
        let page = api(&sb).esims(&query).await.unwrap();
        let iccids = page.esims.iter().map(|e| e.raw_order_json.iccid.to_string()).collect();
        (iccids, page.total)
    };
    let pages = pages_read_by(find(&home, &sb, &on_400), &sb, &on_400).await;
    eprintln!("after 50 new orders: eSIM pages {pages:?}");
    assert!(pages.len() <= 2, "{pages:?}");
    let index = saved_index(&home, &sb);
    for iccid in &newest {
        assert!(index.find(iccid).is_some(), "new eSIM {iccid} in the index");
    }
    assert_eq!(index.total(), Some(total));
}

#[tokio::test]
async fn a_find_killed_mid_read_resumes_without_reading_the_saved_pages_again() {
    let sb = without_lookup(30_000).await;
    let total = api(&sb).esims(&EsimQuery::default()).await.unwrap().total;
    let last = iccid_at(&sb, total.div_ceil(100), 0).await;
    let home = tempfile::tempdir().unwrap();
    // Slow enough that the read is still going when it is killed, after its second save
    // (every 10 pages, 5 s at least apart).
    sb.set_latency(Duration::from_millis(30));
    let mut child = find(&home, &sb, &last).spawn().unwrap();
    wait_until(Duration::from_secs(60), "a second save", || {
        saved_index_if_any(&home, &sb).is_some_and(|i| i.len() > 1_000)
    })
    .await;
    child.kill().unwrap(); // SIGKILL: no chance to save on the way out
    let _ = child.wait();
    let killed_after = sb.esim_pages_served().len();
    sb.set_latency(Duration::ZERO);
    let saved = saved_index(&home, &sb);
    eprintln!(
        "killed after {killed_after} pages of {}; {} eSIMs were saved",
        total.div_ceil(100),
        saved.len()
    );
    assert!(killed_after < total.div_ceil(100) as usize, "killed mid-read");

    let again = pages_read_by(find(&home, &sb, &last), &sb, &last).await;
    let re_read: Vec<u64> = again
        .iter()
        .copied()
        .filter(|&p| p != 1 && saved.first_gap_from((p - 1) * 100).is_none_or(|gap| gap >= p * 100))
        .collect();
    eprintln!("the second run read {} pages", again.len());
    assert!(
        re_read.is_empty(),
        "pages the first run saved were read again: {re_read:?}"
    );
    assert!(again.len() as u64 <= total.div_ceil(100) + 1 - saved.len() as u64 / 100 + 1);
}
