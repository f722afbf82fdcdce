//! A bulk top-up from a CSV file through the real binary, killed (SIGKILL) at random moments
//! and run again until it says it is done: each row placed exactly once, counted at the server,
//! and the result CSV complete.

use crate::common::*;
use std::collections::HashSet;
use std::process::Stdio;
use std::time::{Duration, Instant};

const ROWS: usize = 50;
const KILLS: usize = 5;

/// `esimdash topup --from FILE --yes` and `extra`, started, output captured.
fn start_bulk(home: &tempfile::TempDir, base: &str, file: &std::path::Path, extra: &[&str]) -> std::process::Child {
    let mut cmd = esimdash(home);
    acme_at(&mut cmd, base)
        .args(["topup", "--from"])
        .arg(file)
        .args(["--yes", "--timeout", "2"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.spawn().unwrap()
}

fn result_rows(path: &std::path::Path) -> Vec<csv::StringRecord> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    assert_eq!(
        reader.headers().unwrap().iter().collect::<Vec<_>>(),
        ["row", "iccid", "slug", "quantity", "outcome", "order", "error"]
    );
    reader.records().map(Result::unwrap).collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bulk_topup_killed_at_five_random_moments_places_every_row_exactly_once() {
    let sb = sandbox().await;
    let api = api(&sb);
    // Each payment's answer held a little: kills land before, during and after payments.
    let proxy = HoldingProxy::start(sb.addr, Duration::from_millis(60)).await;
    let base = proxy.base_url();
    let home = tempfile::tempdir().unwrap();
    let seed = std::env::var("CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_261_125);
    let mut rng = fastrand::Rng::with_seed(seed);
    // 25 eSIMs, each twice: a twin row is a row of its own, paid once like any other.
    let targets = topupable(&api, ROWS / 2).await;
    assert_eq!(targets.len(), ROWS / 2);
    let mut csv = String::from("iccid,slug,qty\n");
    for i in 0..ROWS {
        let (iccid, slug) = &targets[i % targets.len()];
        csv.push_str(&format!("{iccid},{slug},1\n"));
    }
    let file = home.path().join("march.csv");
    std::fs::write(&file, csv).unwrap();
    let before = orders_at_server(&api).await;

    // The plan, and nothing paid.
    let out = finish(start_bulk(&home, &base, &file, &["--dry-run"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("To pay: {ROWS} of {ROWS} row(s)")),
        "{}",
        stdout(&out)
    );
    assert_eq!(orders_at_server(&api).await, before, "a dry run pays nothing");

    // Each run is killed a random number of rows in (1 to 8), and then a random moment into
    // the next payment: before it is sent, while its answer is held, or after it.
    let mut placed_at_kills = Vec::new();
    for _ in 0..KILLS {
        let placed = orders_at_server(&api).await - before;
        let target = placed + rng.u64(1..=8);
        let mut child = start_bulk(&home, &base, &file, &[]);
        let started = Instant::now();
        while orders_at_server(&api).await - before < target && child.try_wait().unwrap().is_none() {
            assert!(started.elapsed() < Duration::from_secs(60), "no progress");
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        tokio::time::sleep(Duration::from_millis(rng.u64(0..90))).await;
        assert!(child.try_wait().unwrap().is_none(), "killed before its end");
        signal(&child, libc::SIGKILL);
        let _ = finish(child).await;
        placed_at_kills.push(orders_at_server(&api).await - before);
    }
    eprintln!("orders placed when each kill fell (seed {seed}): {placed_at_kills:?}");
    assert!(
        placed_at_kills.last() < Some(&(ROWS as u64)),
        "the kills fell before the end: {placed_at_kills:?}"
    );

    // Run again until done, as a user would.
    let mut runs = 0;
    let out = loop {
        runs += 1;
        assert!(runs <= 3, "not done after {runs} runs");
        let out = finish(start_bulk(&home, &base, &file, &[])).await;
        if out.status.code() == Some(0) {
            break out;
        }
        eprintln!("run {runs}: {}", stderr(&out));
    };
    assert!(
        stdout(&out).contains(&format!("{ROWS} of {ROWS} row(s) placed")),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        orders_at_server(&api).await - before,
        ROWS as u64,
        "exactly one order per row, whatever the kills"
    );

    let rows = result_rows(&home.path().join("march.result.csv"));
    assert_eq!(rows.len(), ROWS, "every row in the result");
    let orders: HashSet<&str> = rows.iter().map(|r| &r[5]).collect();
    assert_eq!(orders.len(), ROWS, "each row its own order");
    assert!(rows.iter().all(|r| &r[4] == "placed" && r[6].is_empty()), "{rows:?}");
    assert_eq!(
        rows.iter().map(|r| r[0].parse::<usize>().unwrap()).collect::<Vec<_>>(),
        (2..ROWS + 2).collect::<Vec<_>>(),
        "rows by their line in the file"
    );
    // The orders are the server's newest, and each for its row's eSIM.
    let newest = api
        .orders(&esimdash::api::model::OrderQuery {
            page_size: Some(ROWS as u64),
            ..Default::default()
        })
        .await
        .unwrap()
        .orders;
    for order in &newest {
        let no = order.record.provider_order_no.to_string();
        let row = rows
            .iter()
            .find(|r| r[5] == no)
            .unwrap_or_else(|| panic!("{no} is a row's"));
        assert!(order.iccid.is_empty() || order.iccid == row[1], "{no} for {}", &row[1]);
    }

    // Done is done: a run of the same rows pays nothing more, from this path or moved to an
    // archive (a file is its rows, not its name), and says when and from where they were paid.
    let archive = home.path().join("archive");
    std::fs::create_dir(&archive).unwrap();
    let moved = archive.join("paid-in-march.csv");
    std::fs::rename(&file, &moved).unwrap();
    for again in [&file, &moved] {
        if again == &file {
            std::fs::copy(&moved, &file).unwrap();
        }
        let out = finish(start_bulk(&home, &base, again, &[])).await;
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let said = stderr(&out);
        assert!(
            said.contains("was placed on") && said.contains("march.csv") && said.contains("add --again"),
            "{said}"
        );
        assert_eq!(orders_at_server(&api).await - before, ROWS as u64, "nothing paid twice");
    }
}

/// The key is revoked in the middle of a run (the reseller did it in the portal): the run stops
/// at the first refusal instead of failing every further row, exits 3 as a refused key does,
/// and the result says which rows were placed, which was refused and which were not paid.
#[tokio::test(flavor = "multi_thread")]
async fn a_key_revoked_mid_run_stops_the_run_at_the_first_refusal() {
    let sb = sandbox().await;
    let api = api(&sb);
    let home = tempfile::tempdir().unwrap();
    let targets = topupable(&api, 5).await;
    let mut csv = String::from("iccid,slug,qty\n");
    for (iccid, slug) in &targets {
        csv.push_str(&format!("{iccid},{slug},1\n"));
    }
    let file = home.path().join("april.csv");
    std::fs::write(&file, csv).unwrap();
    let before = orders_at_server(&api).await;
    sb.revoke_after_writes(2);
    let out = finish(start_bulk(&home, &sb.base_url(), &file, &[])).await;
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("revoked"), "{}", stderr(&out));
    let requests = sb.api_requests_received();
    sb.revoke_after_writes(u64::MAX);
    assert_eq!(
        orders_at_server(&api).await,
        before + 2,
        "the two before the revocation"
    );
    let outcomes: Vec<String> = result_rows(&home.path().join("april.result.csv"))
        .iter()
        .map(|r| r[4].to_string())
        .collect();
    assert_eq!(outcomes, ["placed", "placed", "failed", "not_paid", "not_paid"]);
    // The refusal ended it: nothing was asked of the server after it.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        sb.api_requests_received(),
        requests + 1,
        "only the count above after the run"
    );
}
