//! The inventory index at a real reseller's size, against a server with only the published
//! routes (no lookup by ICCID): what a command's find costs in a first and a second session,
//! after new orders, and after the first was killed mid-read. The real binary, each run a
//! session of its own sharing the account's index file; pages counted at the server.

use crate::common::*;
use esimdash_api::BaseUrl;
use esimdash_api::model::EsimQuery;
use esimdash_inventory::Inventory;
use esimdash_inventory::store;
use esimdash_sandbox::{RunningSandbox, SandboxConfig, spawn};
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
    api(sb).esims(&crate::pages::esims_page(page)).await.unwrap().esims[index]
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
    let account = store::account_key(
        base.as_str(),
        &esimdash_api::Credentials::pair("ak_demo_acme", "sk_demo_acme").account(),
    );
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
async fn a_find_killed_mid_read_resumes_reading_again_at_most_two_pages() {
    let sb = without_lookup(30_000).await;
    let total = api(&sb).esims(&EsimQuery::default()).await.unwrap().total;
    let last = iccid_at(&sb, total.div_ceil(100), 0).await;
    let home = tempfile::tempdir().unwrap();
    // Killed in its first burst of pages: each page is kept as it comes, none waits for a save.
    sb.set_latency(Duration::from_millis(30));
    let mut child = find(&home, &sb, &last).spawn().unwrap();
    wait_until(Duration::from_secs(60), "a few pages kept", || {
        saved_index_if_any(&home, &sb).is_some_and(|i| i.len() >= 300)
    })
    .await;
    child.kill().unwrap(); // SIGKILL: no chance to save on the way out
    let _ = child.wait();
    let first_run: HashSet<u64> = sb.esim_pages_served().into_iter().collect();
    sb.set_latency(Duration::ZERO);
    let saved = saved_index(&home, &sb);
    eprintln!(
        "killed after {} pages of {}; {} eSIMs were kept",
        first_run.len(),
        total.div_ceil(100),
        saved.len()
    );
    assert!(first_run.len() < total.div_ceil(100) as usize, "killed mid-read");

    let again = pages_read_by(find(&home, &sb, &last), &sb, &last).await;
    // Page 1 is every run's first (the lookup the server ignores); any other page the killed
    // run read and the second reads again was lost with it.
    let re_read: Vec<u64> = again
        .iter()
        .copied()
        .filter(|p| *p != 1 && first_run.contains(p))
        .collect();
    eprintln!(
        "the second run read {} pages, {} of them again",
        again.len(),
        re_read.len()
    );
    assert!(re_read.len() <= 2, "pages the first run read, read again: {re_read:?}");
}

/// Every page's first ICCID of Acme's eSIMs, as the server lists them now.
async fn firsts_of_pages(sb: &RunningSandbox) -> (Vec<String>, u64) {
    let mut firsts = Vec::new();
    for page in 1.. {
        let answer = api(sb).esims(&crate::pages::esims_page(page)).await.unwrap();
        match answer.esims.first() {
            Some(first) => firsts.push(first.raw_order_json.iccid.to_string()),
            None => return (firsts, answer.total),
        }
    }
    unreachable!("the pages end")
}

/// An ICCID no reseller of the sandbox has (Luhn-checked).
fn absent_iccid() -> String {
    let payload = "894410000000009999";
    format!("{payload}{}", esimdash_domain::iccid::luhn_check_digit(payload))
}

/// A look-up that misses: its exit status, its JSON error and the eSIM pages it read.
async fn miss(cmd: std::process::Command, sb: &RunningSandbox) -> (Option<i32>, serde_json::Value, Vec<u64>) {
    let before = sb.esim_pages_served().len();
    let out = run(cmd).await;
    let error: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap_or_else(|_| panic!("{}", stderr(&out)));
    (out.status.code(), error, sb.esim_pages_served()[before..].to_vec())
}

/// The issue "a miss is proven before it is said": the server purged its oldest eSIM after
/// the index was saved, so every eSIM's place counted from the oldest is one off, and the
/// page the index names for an eSIM first on a page is the page before. Each is found all
/// the same, in at most 4 eSIM requests (the ignored lookup, its page, the pages either
/// side), and the index takes in what was read (the next look-up reads its page alone). An
/// ICCID truly absent is "not in this account" only after every page, each read once, and
/// page 1 (the ignored lookup's answer) read again last, unchanged; a budget too small for
/// every page says how far it got and exits 6, not 1, and so does a search during which the
/// oldest eSIM is purged and a new one ordered (the total the same, every place moved).
#[tokio::test]
async fn after_the_oldest_esim_is_purged_each_esim_first_on_a_page_is_found_and_a_miss_is_proven_first() {
    let sb = without_lookup(1_500).await;
    let home = tempfile::tempdir().unwrap();
    let mut all = esimdash(&home);
    acme_at(&mut all, &sb.base_url())
        .env("ESIMDASH_RATE_LIMIT", "1000000")
        .args(["esims", "--all", "--json"]);
    let out = run(all).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let (firsts, total) = firsts_of_pages(&sb).await;
    assert!(
        saved_index(&home, &sb).is_complete(),
        "the saved index holds every eSIM"
    );
    assert!(firsts.len() >= 10, "{} pages", firsts.len());

    assert!(sb.purge_oldest_esims(1) >= 1);
    let (_, now) = firsts_of_pages(&sb).await;
    assert_eq!(now, total - 1, "the oldest eSIM is gone");

    // From the last page up: a page read for one find puts right the places on it, which
    // would spare the next page's first eSIM its miss if they went down.
    let (mut most, mut beside) = (0, 0);
    for iccid in firsts.iter().rev() {
        let pages = pages_read_by(find(&home, &sb, iccid), &sb, iccid).await;
        assert!(pages.len() <= 4, "{iccid}: {pages:?}");
        most = most.max(pages.len());
        beside += usize::from(pages.len() > 2);
    }
    eprintln!(
        "{n} of {n} eSIMs first on a page found after the purge, at most {most} eSIM requests each; \
         {beside} not on the page the index named",
        n = firsts.len()
    );
    assert!(beside >= 10, "the index named the page before for most of them");
    for iccid in &firsts {
        let pages = pages_read_by(find(&home, &sb, iccid), &sb, iccid).await;
        assert!(pages.len() <= 2, "looked up again, {iccid}: {pages:?}");
    }

    let absent = absent_iccid();
    let pages = now.div_ceil(100);
    let (code, error, read) = miss(find(&home, &sb, &absent), &sb).await;
    eprintln!(
        "absent: exit {code:?}, {} eSIM requests: {}",
        read.len(),
        error["error"]["message"]
    );
    assert_eq!(code, Some(1), "{error}");
    assert_eq!(error["error"]["kind"], "not_found");
    let message = error["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("in this account"), "{message}");
    assert!(
        message.contains(&format!("every page of the list read ({pages} pages")),
        "{message}"
    );
    assert_eq!(error["error"]["searched"]["pagesRead"], pages);
    assert_eq!(error["error"]["searched"]["esimsSeen"], now);
    assert_eq!(
        read.last(),
        Some(&1),
        "page 1, the first read, read again last: {read:?}"
    );
    let mut sorted = read[..read.len() - 1].to_vec();
    sorted.sort_unstable();
    assert_eq!(sorted, (1..=pages).collect::<Vec<u64>>(), "every page once: {read:?}");

    // A key of 5 requests a minute: the lookup (page 1) and four more pages, then a stop.
    let mut small = find(&home, &sb, &absent);
    // A key of its own budget: the earlier commands' requests (the key's, shared) not counted.
    let state = tempfile::tempdir().unwrap();
    small
        .env("ESIMDASH_RATE_LIMIT", "5")
        .env("XDG_STATE_HOME", state.path());
    let (code, error, read) = miss(small, &sb).await;
    eprintln!("a budget of 5: exit {code:?}, {read:?}: {}", error["error"]["message"]);
    assert_eq!(code, Some(6), "{error}");
    assert_eq!(error["error"]["kind"], "search_incomplete");
    assert_eq!(read.len(), 5, "{read:?}");
    let message = error["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("not found in 5 of {pages} pages read")),
        "{message}"
    );
    assert!(!message.contains("in this account"), "{message}");

    // The oldest eSIM purged and one ordered once the search has read 3 pages (of 16, each
    // answered 100 ms late): not "not in this account" but not known, the list changed.
    sb.set_latency(Duration::from_millis(100));
    let before = sb.esim_pages_served().len();
    let change = async {
        wait_until(Duration::from_secs(30), "3 pages read", || {
            sb.esim_pages_served().len() >= before + 3
        })
        .await;
        // Within the 100 ms before the next page is asked for: the total the same at every
        // answer (as a rule; were one between, the total would tell).
        assert!(sb.purge_oldest_esims(1) >= 1);
        crate::orders::place_orders(&sb.base_url(), 1).await;
    };
    let (out, ()) = tokio::join!(run(find(&home, &sb, &absent)), change);
    sb.set_latency(Duration::ZERO);
    let read = sb.esim_pages_served()[before..].to_vec();
    let error: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap_or_else(|_| panic!("{}", stderr(&out)));
    eprintln!(
        "changed mid-search: exit {:?}, {read:?}: {}",
        out.status.code(),
        error["error"]["message"]
    );
    assert_eq!(out.status.code(), Some(6), "{error}");
    assert_eq!(error["error"]["kind"], "search_incomplete");
    let message = error["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("the list changed while it was read"), "{message}");
    assert!(!message.contains("in this account"), "{message}");
}

/// A saved index that is no database (a disk error, a file copied over it): the find still
/// works, says on stderr that the file was set aside, and from then on the index works again.
#[tokio::test]
async fn a_damaged_saved_index_is_set_aside_said_and_made_anew() {
    let sb = without_lookup(2_000).await;
    let on_15 = iccid_at(&sb, 15, 3).await;
    let home = tempfile::tempdir().unwrap();
    pages_read_by(find(&home, &sb, &on_15), &sb, &on_15).await;
    let base = BaseUrl::parse(&sb.base_url()).unwrap();
    let account = store::account_key(
        base.as_str(),
        &esimdash_api::Credentials::pair("ak_demo_acme", "sk_demo_acme").account(),
    );
    let path = store::path_in(&home.path().join(".cache/esimdash"), &account);
    // The file replaced whole (SQLite's own files beside it go too: they would still hold it).
    for side in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{side}", path.display()));
    }
    std::fs::write(
        &path,
        "not a database, but long enough to be read as one's first page. ".repeat(80),
    )
    .unwrap();

    let out = run(find(&home, &sb, &on_15)).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("moved to"), "said: {}", stderr(&out));
    assert!(path.with_extension("sqlite3.damaged").exists());
    let pages = pages_read_by(find(&home, &sb, &on_15), &sb, &on_15).await;
    assert!(pages.len() <= 2, "the index works again: {pages:?}");
}
