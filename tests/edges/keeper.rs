//! The account's keeper and the checks that read its picture, through the real binary and
//! counted at the sandbox: with a keeper running (`watch`), `check attention` costs one request
//! and says the same as a live read; without a picture young enough, it reads within its
//! budget or says UNKNOWN and why, never a partial count.

use crate::common::*;
use esimdash_sandbox::{RunningSandbox, SandboxConfig, spawn};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// 3 000 orders (about as many eSIMs, half of them usable), no limit to wait for: the keeper's
/// pace is its share of what the client is told the key allows.
async fn sandbox_of_3000() -> RunningSandbox {
    let config = SandboxConfig {
        orders: 3_000,
        rate_limit: 100_000,
        ..SandboxConfig::default()
    };
    spawn(&config, "127.0.0.1:0".parse().unwrap()).await.unwrap()
}

async fn check(sb: &RunningSandbox, home: &tempfile::TempDir, extra: &[&str]) -> std::process::Output {
    let mut cmd = esimdash(home);
    acme_at(&mut cmd, &sb.base_url())
        .env("ESIMDASH_RATE_LIMIT", "100000")
        .args(["check", "attention", "--warning", "100000", "--critical", "100000"])
        .args(extra);
    run(cmd).await
}

/// The figure of a check's line: `attention=N;…`.
fn figure(out: &std::process::Output) -> u64 {
    let line = stdout(out);
    let after = line
        .split("attention=")
        .nth(1)
        .unwrap_or_else(|| panic!("no figure: {line}"));
    after.split(';').next().unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_keeper_check_attention_costs_one_request_and_equals_a_live_read() {
    let sb = sandbox_of_3000().await;
    let home = tempfile::tempdir().unwrap();
    let mut watch = esimdash(&home);
    acme_at(&mut watch, &sb.base_url())
        .env("ESIMDASH_RATE_LIMIT", "100000")
        .args(["watch", "--interval", "60s"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut keeper = watch.spawn().unwrap();
    let started = Instant::now();
    let kept = loop {
        let out = check(&sb, &home, &[]).await;
        if stdout(&out).contains("from the kept picture") {
            break out;
        }
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "no picture yet: {}",
            stdout(&out)
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    };
    let _ = keeper.kill();
    let _ = keeper.wait();
    assert!(stdout(&kept).contains(" age="), "{}", stdout(&kept));

    let before = sb.api_requests_received();
    let again = check(&sb, &home, &[]).await;
    let spent = sb.api_requests_received() - before;
    assert!(stdout(&again).contains("from the kept picture"), "{}", stdout(&again));
    assert!(spent <= 2, "{spent} requests for a check from the picture");

    // A scrape: the balance and the top of the list, the rest from what the keeper kept.
    let before = sb.api_requests_received();
    let mut metrics = esimdash(&home);
    acme_at(&mut metrics, &sb.base_url())
        .env("ESIMDASH_RATE_LIMIT", "100000")
        .arg("metrics");
    let scraped = run(metrics).await;
    let spent = sb.api_requests_received() - before;
    assert!(scraped.status.success(), "{}", stderr(&scraped));
    assert!(spent <= 2, "{spent} requests for a scrape with a kept picture");
    let figures = stdout(&scraped);
    let gauge = |name: &str| -> Option<u64> {
        figures
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name} ")))
            .and_then(|v| v.trim().parse().ok())
    };
    assert_eq!(
        gauge("esimdash_esims_needing_attention"),
        Some(figure(&again)),
        "{figures}"
    );
    assert!(gauge("esimdash_attention_age_seconds").is_some(), "{figures}");
    assert!(figures.contains("esimdash_orders{status="), "{figures}");

    // The same scrape read now (a config whose pictures are never young enough) says the same.
    let config = home.path().join("config/esimdash");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "[attention]\nmax_age_minutes = 0\n").unwrap();
    let mut metrics = esimdash(&home);
    acme_at(&mut metrics, &sb.base_url())
        .env("ESIMDASH_RATE_LIMIT", "100000")
        .arg("metrics");
    let read_now = stdout(&run(metrics).await);
    let counts = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|l| {
                l.starts_with("esimdash_esims")
                    || l.starts_with("esimdash_list_esims")
                    || l.starts_with("esimdash_orders{")
            })
            .map(str::to_string)
            .collect()
    };
    assert_eq!(
        counts(&figures),
        counts(&read_now),
        "kept:\n{figures}\nread now:\n{read_now}"
    );
    std::fs::remove_file(config.join("config.toml")).unwrap();

    let live = check(&sb, &home, &["--max-age", "0", "--budget", "1000"]).await;
    assert!(stdout(&live).contains("read now"), "{}", stdout(&live));
    assert_eq!(figure(&again), figure(&live), "{}\n{}", stdout(&again), stdout(&live));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_young_picture_check_attention_reads_within_its_budget_or_says_unknown() {
    let sb = sandbox_of_3000().await;
    let home = tempfile::tempdir().unwrap();
    let before = sb.api_requests_received();
    let out = check(&sb, &home, &["--budget", "3"]).await;
    let spent = sb.api_requests_received() - before;
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    let line = stdout(&out);
    assert!(line.starts_with("ESIMDASH ATTENTION UNKNOWN - "), "{line}");
    assert!(
        line.contains("more than --budget 3") && !line.contains("attention="),
        "{line}"
    );
    assert!(spent <= 2, "{spent} requests to learn the budget is not enough");
}

/// The figure over ten minutes, counted at the sandbox (`cargo test --test edges
/// keeper_share -- --ignored --nocapture`, about 12 minutes): 100 000 orders at the API's own
/// 120 a minute, the index filled first with the limit lifted, then one keeper (`metrics
/// --listen`), a scrape (`metrics`) every 15 s and `check attention` every minute. Every check
/// and scrape answers from the picture, nothing is refused, and all of it together stays within
/// the keeper's share (a quarter of 120 a minute).
#[ignore = "ten minutes: run by hand for docs/performance.md"]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keeper_share_holds_a_scrape_every_15_s_and_a_check_every_minute_for_ten_minutes() {
    let (sb, home) = sandbox_of(100_000, 1_000_000).await;
    let mut fill = esimdash(&home);
    acme_at(&mut fill, &sb.base_url())
        .env("ESIMDASH_RATE_LIMIT", "1000000")
        // Its sends are not the measured processes' budget.
        .env("XDG_STATE_HOME", home.path().join("fill-state"))
        .args(["esims", "--all", "--json"])
        .stdout(Stdio::null());
    assert!(run(fill).await.status.success());
    sb.set_rate_limit(120);
    // The sandbox's window that counted the fill passes.
    tokio::time::sleep(Duration::from_secs(61)).await;

    let (requests, refused) = (sb.api_requests_received(), sb.rate_limited());
    let mut listen = esimdash(&home);
    acme_at(&mut listen, &sb.base_url())
        .args(["metrics", "--listen", "127.0.0.1:0", "--every", "60"])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut keeper = listen.spawn().unwrap();
    let started = Instant::now();
    let (mut checks, mut scrapes) = (Vec::new(), Vec::new());
    for tick in 0..40u32 {
        tokio::time::sleep_until((started + Duration::from_secs(15 * u64::from(tick))).into()).await;
        let mut metrics = esimdash(&home);
        acme_at(&mut metrics, &sb.base_url()).arg("metrics");
        let scraped = stdout(&run(metrics).await);
        let age = scraped
            .lines()
            .find_map(|l| l.strip_prefix("esimdash_attention_age_seconds "))
            .and_then(|v| v.trim().parse::<f64>().ok());
        scrapes.push(age.is_some_and(|a| a > 0.0));
        if tick % 4 == 0 {
            checks.push(stdout(&check_at_the_apis_limit(&sb, &home).await));
        }
    }
    let elapsed = started.elapsed();
    let _ = keeper.kill();
    let _ = keeper.wait();
    let spent = sb.api_requests_received() - requests;
    let share = 120.0 * esimdash_front::keeper::DEFAULT_SHARE * elapsed.as_secs_f64() / 60.0;
    eprintln!(
        "{spent} requests in {:.0} s (the keeper's share: {share:.0}); {} × 429; scrapes from the picture {}/{}; checks {}/{}",
        elapsed.as_secs_f64(),
        sb.rate_limited() - refused,
        scrapes.iter().filter(|s| **s).count(),
        scrapes.len(),
        checks.iter().filter(|c| c.contains("from the kept picture")).count(),
        checks.len()
    );
    assert_eq!(sb.rate_limited() - refused, 0, "no request refused");
    assert!(scrapes.iter().all(|s| *s), "every scrape from the picture: {scrapes:?}");
    assert!(
        checks.iter().all(|c| c.contains("from the kept picture")),
        "{checks:#?}"
    );
    assert!(
        (spent as f64) <= share,
        "{spent} requests, more than the keeper's share {share:.0}"
    );
}

/// `check attention` as a monitoring system runs it: the client's own pace (the API's 120).
async fn check_at_the_apis_limit(sb: &RunningSandbox, home: &tempfile::TempDir) -> std::process::Output {
    let mut cmd = esimdash(home);
    acme_at(&mut cmd, &sb.base_url()).args(["check", "attention", "--warning", "100000", "--critical", "100000"]);
    run(cmd).await
}
