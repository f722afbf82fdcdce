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
    bulk_command(home, base, file, extra).spawn().unwrap()
}

fn bulk_command(home: &tempfile::TempDir, base: &str, file: &std::path::Path, extra: &[&str]) -> std::process::Command {
    let mut cmd = esimdash(home);
    // The sandbox's key allows 100 000 a minute; the runs of one home share that budget.
    acme_at(&mut cmd, base)
        .env("ESIMDASH_RATE_LIMIT", "100000")
        .args(["topup", "--from"])
        .arg(file)
        .args(["--yes", "--timeout", "2"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// As `start_bulk`, with the client's own pace lifted: these count the check's time, not waits.
fn start_unpaced(home: &tempfile::TempDir, base: &str, file: &std::path::Path, extra: &[&str]) -> std::process::Child {
    let mut cmd = bulk_command(home, base, file, extra);
    cmd.env("ESIMDASH_RATE_LIMIT", "1000000");
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
        .orders(&esimdash_api::model::OrderQuery {
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
    let (sb, api, home) = sandbox_api_home().await;
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
    assert_stderr_has(&out, "revoked");
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

/// Rows in a bulk file at the scale the check must stay linear at.
const LARGE: usize = 100_000;

/// A sandbox whose wallet covers a file of `LARGE` top-ups, and no rate limit to speak of.
async fn rich_sandbox() -> esimdash_sandbox::RunningSandbox {
    let config = esimdash_sandbox::SandboxConfig {
        rate_limit: 1_000_000,
        balance: Some(rust_decimal::Decimal::new(10_000_000_000, 2)),
        ..esimdash_sandbox::SandboxConfig::default()
    };
    esimdash_sandbox::spawn(&config, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap()
}

/// `n` ICCIDs as valid as any (19 digits, `89`, the Luhn digit) that no account holds: the
/// sandbox's start `8944` or `8901`.
fn made_up_iccids(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let payload = format!("8999{i:014}");
            format!("{payload}{}", esimdash_domain::iccid::luhn_check_digit(&payload))
        })
        .collect()
}

fn write_rows(
    home: &tempfile::TempDir,
    name: &str,
    rows: impl Iterator<Item = (String, String)>,
) -> std::path::PathBuf {
    let mut csv = String::from("iccid,slug,qty\n");
    for (iccid, slug) in rows {
        csv.push_str(&format!("{iccid},{slug},1\n"));
    }
    let file = home.path().join(name);
    std::fs::write(&file, csv).unwrap();
    file
}

/// Waits until the server has received more than `requests` API requests (or the child
/// ended): how long that took, `None` if it never came.
async fn until_asked(
    sb: &esimdash_sandbox::RunningSandbox,
    requests: u64,
    child: &mut std::process::Child,
) -> Option<Duration> {
    let started = Instant::now();
    while sb.api_requests_received() <= requests {
        if child.try_wait().unwrap().is_some() || started.elapsed() > Duration::from_secs(120) {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    Some(started.elapsed())
}

/// A file of 100 000 rows, the same 100 eSIMs of the account over and over (each row a twin of
/// 999 others), checked whole by a dry run: every row through the per-row path (its line, its
/// twin count, the journal, its eSIM's offer found by slug, the rule against repeats), two
/// requests per distinct eSIM, and the plan printed. Before the check was linear, the time
/// to the first request alone grew with the square of the rows (103 s at 100 000). The bound is
/// for a debug build on a slow machine; docs/performance.md has the release figure.
#[tokio::test(flavor = "multi_thread")]
async fn a_file_of_100_000_rows_is_checked_in_one_pass() {
    let sb = rich_sandbox().await;
    let api = api(&sb);
    let home = tempfile::tempdir().unwrap();
    let targets = topupable(&api, 100).await;
    assert_eq!(targets.len(), 100);
    let file = write_rows(&home, "large.csv", targets.iter().cycle().take(LARGE).cloned());
    let before = orders_at_server(&api).await;
    let requests = sb.api_requests_received();
    let started = Instant::now();
    let mut child = start_unpaced(&home, &sb.base_url(), &file, &["--dry-run"]);
    let first = until_asked(&sb, requests, &mut child).await;
    let out = finish(child).await;
    let whole = started.elapsed();
    let asked = sb.api_requests_received() - requests;
    eprintln!("{LARGE} rows: first request after {first:?}, the dry run done after {whole:?}, {asked} requests");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains(&format!("To pay: {LARGE} of {LARGE} row(s)")),
        "{}",
        stderr(&out)
    );
    let first = first.expect("a request was sent");
    assert!(first < Duration::from_secs(20), "{first:?} before the first request");
    assert!(whole < Duration::from_secs(60), "{whole:?} for the whole check");
    assert_eq!(orders_at_server(&api).await, before, "a dry run pays nothing");
    assert!(
        asked <= 2 * 100 + 1,
        "{asked} requests: per distinct eSIM, never per row"
    );
}

/// Whether the process has its own handler for SIGINT yet (Linux: `SigCgt` in its status).
fn catches_sigint(child: &std::process::Child) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (libc::SIGINT - 1)) != 0)
}

/// Ctrl-C while a file of 100 000 rows is checked ends the run within a second, exit 130 and
/// nothing paid: while the file is read (before the first request; the check held the signal
/// unheard for 52 s there), and while the API is asked about its rows. The ICCIDs are made up,
/// so that the asking lasts (one 404 a row) and nothing could be paid in any case; the counts
/// at the server say nothing was.
#[tokio::test(flavor = "multi_thread")]
async fn ctrl_c_during_the_check_of_100_000_rows_ends_it_within_a_second() {
    let sb = rich_sandbox().await;
    let api = api(&sb);
    let home = tempfile::tempdir().unwrap();
    let slug = topupable(&api, 1).await.remove(0).1;
    let rows = made_up_iccids(LARGE).into_iter().map(|iccid| (iccid, slug.clone()));
    let file = write_rows(&home, "stopped.csv", rows);
    let before = orders_at_server(&api).await;
    // How long the check takes here before its first request: the signal "while reading" is
    // aimed at half of it.
    let mut child = start_unpaced(&home, &sb.base_url(), &file, &["--dry-run"]);
    let first = until_asked(&sb, sb.api_requests_received(), &mut child).await;
    signal(&child, libc::SIGKILL);
    let _ = finish(child).await;
    let first = first.expect("a request was sent");
    for while_asking in [false, true] {
        let requests = sb.api_requests_received();
        let mut child = start_unpaced(&home, &sb.base_url(), &file, &[]);
        let started = Instant::now();
        if while_asking {
            assert!(until_asked(&sb, requests + 100, &mut child).await.is_some(), "asked");
        } else {
            while !catches_sigint(&child) {
                assert!(started.elapsed() < Duration::from_secs(10), "never listened for Ctrl-C");
                assert!(child.try_wait().unwrap().is_none(), "ended before the signal");
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            tokio::time::sleep((first / 2).saturating_sub(started.elapsed())).await;
        }
        let asked_before = sb.api_requests_received() - requests;
        assert!(child.try_wait().unwrap().is_none(), "still checking");
        let sent = Instant::now();
        signal(&child, libc::SIGINT);
        let out = finish(child).await;
        let took = sent.elapsed();
        eprintln!(
            "Ctrl-C {} ({asked_before} requests in, first request after {first:?}): exit {:?} after {took:?}",
            if while_asking { "while asking" } else { "while reading" },
            out.status.code()
        );
        assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
        assert!(took < Duration::from_secs(1), "{took:?} after Ctrl-C");
        if !while_asking {
            assert_eq!(asked_before, 0, "the signal came before the first request");
        }
    }
    assert_eq!(orders_at_server(&api).await, before, "nothing paid");
}

/// A megabyte in a cell (the slug, the ICCID, the quantity, as a broken export or a paste
/// makes) is a problem on its line, said in a few words: exit 2, and the server never asked.
/// A file too large to be a bulk file is refused as one, before its rows are read.
#[tokio::test(flavor = "multi_thread")]
async fn a_huge_cell_is_a_problem_on_its_line_and_never_reaches_the_network() {
    let sb = rich_sandbox().await;
    let home = tempfile::tempdir().unwrap();
    let huge = "9".repeat(1_000_000);
    let ok = made_up_iccids(1).remove(0);
    let file = home.path().join("huge.csv");
    std::fs::write(
        &file,
        format!("iccid,slug,qty\n{ok},{huge},1\n{huge},fr-1gb,1\n{ok},fr-1gb,{huge}\n"),
    )
    .unwrap();
    let requests = sb.api_requests_received();
    let out = finish(start_bulk(&home, &sb.base_url(), &file, &[])).await;
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        &stderr(&out)[..200.min(stderr(&out).len())]
    );
    let said = stdout(&out) + &stderr(&out);
    assert!(
        said.len() < 5_000,
        "each cell said in a few words: {} bytes",
        said.len()
    );
    for line in 2..=4 {
        assert!(said.contains(&format!("line {line}: ")), "{said}");
    }
    assert!(said.contains("nothing was topped up"), "{said}");

    let orders = home.path().join("orders.csv");
    std::fs::write(&orders, format!("slug,qty\n{huge},1\n")).unwrap();
    let mut cmd = esimdash(&home);
    acme_at(&mut cmd, &sb.base_url())
        .args(["buy", "--yes", "--from"])
        .arg(&orders);
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_stdout_has(&out, "line 2: slug \"999");

    let large = home.path().join("large.csv");
    let mut text = format!("iccid,slug,qty\n{ok},fr-1gb,1\n").into_bytes();
    text.resize(65 * 1024 * 1024, b'\n');
    std::fs::write(&large, text).unwrap();
    let out = finish(start_bulk(&home, &sb.base_url(), &large, &[])).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_stderr_has(&out, "larger than 64 MB");
    assert_eq!(sb.api_requests_received(), requests, "the server was never asked");
}
