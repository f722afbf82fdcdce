//! The real binary killed (SIGKILL) at random moments of a payment, over a hundred times:
//! before it is sent, while the server holds its answer, after the answer. Each kill is
//! followed by a run of another command, which settles what the killed one left; a payment
//! that did not happen is tried again, as a user would. In the end the server holds exactly one
//! order per intended payment, no order is any payment's twice, and every payment has an
//! outcome in the audit trail.

use crate::common::*;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::{Duration, Instant};

/// Kills at the least, each of an intended payment.
const KILLS: usize = 100;
/// How long the proxy holds each payment's answer.
const HOLD: Duration = Duration::from_millis(250);

/// Where a kill landed, from the trail's lines of that attempt.
fn kill_point(lines: &[serde_json::Value]) -> &'static str {
    let stages: Vec<&str> = lines.iter().filter_map(|e| e["stage"].as_str()).collect();
    if stages.contains(&"answered") || stages.contains(&"refused") {
        "after the answer"
    } else if stages.contains(&"sent") {
        "in flight (sent, no answer yet)"
    } else {
        "before sending"
    }
}

/// Whether an "answered" line was appended since the trail had `lines` lines.
fn trail_len_grew_by_answer(home: &tempfile::TempDir, lines: usize) -> bool {
    trail(home).iter().skip(lines).any(|e| e["stage"] == "answered")
}

/// Whether the trail gives intent `(iccid, qty)` an order, and whether it is still unsettled.
fn placed(trail: &[serde_json::Value], iccid: &str, qty: u64) -> (bool, bool) {
    let mut by_key: HashMap<&str, Vec<&serde_json::Value>> = HashMap::new();
    for e in trail.iter().filter(|e| e["iccid"] == iccid && e["quantity"] == qty) {
        by_key
            .entry(e["idempotencyKey"].as_str().unwrap_or_default())
            .or_default()
            .push(e);
    }
    let mut any_placed = false;
    let mut unsettled = false;
    for lines in by_key.values() {
        any_placed |= lines.iter().any(|e| e["orderNo"].is_string());
        unsettled |= !lines.iter().any(|e| tells_outcome(e));
    }
    (any_placed, unsettled)
}

fn tells_outcome(e: &serde_json::Value) -> bool {
    match e["stage"].as_str() {
        Some("answered" | "refused" | "settled") => true,
        Some("looked_up") => e["settled"] == true,
        _ => false,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_at_random_moments_of_a_payment_no_intended_payment_is_lost_or_paid_twice() {
    let (_sb, api, proxy, home) = held_sandbox_api_home(HOLD).await;
    let base = proxy.base_url();
    let seed = std::env::var("CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_261_123);
    let mut rng = fastrand::Rng::with_seed(seed);
    // Distinct intents: an eSIM and a quantity each.
    let targets = topupable(&api, 60).await;
    assert!(targets.len() >= 20, "enough eSIMs to top up: {}", targets.len());
    // Quantities 1 to 10: as many intents as any run of kills needs.
    let intents: Vec<((String, String), u64)> = (0..targets.len() * 10)
        .map(|i| (targets[i % targets.len()].clone(), 1 + (i / targets.len()) as u64))
        .collect();
    let orders_before = orders_at_server(&api).await;

    // How long a whole top-up takes here: kills fall anywhere in it (and a little past).
    let started = Instant::now();
    let out = finish(start_topup(&home, &base, &intents[0].0, &["--timeout", "2"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let span = started.elapsed();
    eprintln!(
        "a whole top-up takes {:?}; kills fall within {span:?} (seed {seed})",
        started.elapsed()
    );

    let mut points: BTreeMap<&str, usize> = BTreeMap::new();
    let mut kills = 0;
    let mut intended = 1;
    for (n, (target, qty)) in intents.iter().enumerate().skip(1) {
        if kills >= KILLS {
            break;
        }
        intended += 1;
        let qty_arg = qty.to_string();
        for attempt in 0.. {
            assert!(attempt < 8, "intent {n} never got placed");
            let lines_before = trail(&home).len();
            let mut child = start_topup(&home, &base, target, &["--qty", &qty_arg, "--timeout", "2"]);
            // Every intent is killed on its first attempt; later attempts are left alone half
            // the time, as a user who tries again would be.
            let kill = attempt == 0 || rng.bool();
            if kill {
                // Three in ten kills wait for the answer to be recorded and strike at once (the
                // command often exits first); one in ten falls in the first twentieth of the
                // payment (a command starts in a few milliseconds, so few uniform kills would
                // land before it sends); the rest anywhere in it.
                let roll = rng.u8(0..10);
                let after_answer = roll < 3;
                let until = Instant::now()
                    + match roll {
                        0..=2 => span * 3,
                        3 => span.mul_f64(rng.f64() / 20.0),
                        _ => span.mul_f64(rng.f64()),
                    };
                while Instant::now() < until && child.try_wait().unwrap().is_none() {
                    if after_answer && trail_len_grew_by_answer(&home, lines_before) {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                if child.try_wait().unwrap().is_none() {
                    signal(&child, libc::SIGKILL);
                    kills += 1;
                    let _ = finish(child).await;
                    let lines: Vec<_> = trail(&home)
                        .into_iter()
                        .skip(lines_before)
                        .filter(|e| e["iccid"] == target.0.as_str())
                        .collect();
                    *points.entry(kill_point(&lines)).or_default() += 1;
                } else {
                    let _ = finish(child).await;
                }
            } else {
                let out = finish(child).await;
                assert!(matches!(out.status.code(), Some(0 | 1 | 5)), "{}", stderr(&out));
            }
            // Any command settles what the killed one left (again later if it cannot tell yet).
            let mut said = String::new();
            for _ in 0..10 {
                let mut cmd = esimdash(&home);
                acme_at(&mut cmd, &base)
                    .env("ESIMDASH_RATE_LIMIT", "100000")
                    .env("ESIMDASH_TIMEOUT", "2")
                    .env("ESIMDASH_LOG", "esimdash=debug")
                    .arg("balance");
                let out = run(cmd).await;
                assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
                said.push_str(&stderr(&out));
                if !placed(&trail(&home), &target.0, *qty).1 {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            let (done, unsettled) = placed(&trail(&home), &target.0, *qty);
            assert!(
                !unsettled,
                "intent {n}: settled by the next commands; they said:\n{said}\nthe trail:\n{:#?}\nthe log:\n{}",
                trail(&home)
                    .iter()
                    .filter(|e| e["iccid"] == target.0.as_str())
                    .collect::<Vec<_>>(),
                std::fs::read_to_string(home.path().join("state/esimdash/esimdash.log"))
                    .unwrap_or_default()
                    .lines()
                    .rev()
                    .take(30)
                    .collect::<Vec<_>>()
                    .join("\n")
            );
            if done {
                break;
            }
        }
    }

    let trail = trail(&home);
    let orders_after = orders_at_server(&api).await;
    eprintln!(
        "{kills} kills: {points:?}; {} orders placed for {intended} intended payments",
        orders_after - orders_before
    );
    assert!(kills >= KILLS, "at least {KILLS} kills");
    assert_eq!(
        orders_after - orders_before,
        intended as u64,
        "exactly one order per intended payment"
    );
    for (point, least) in [
        ("before sending", 5),
        ("in flight (sent, no answer yet)", 5),
        ("after the answer", 1),
    ] {
        assert!(
            points.get(point).copied().unwrap_or(0) >= least,
            "kills {point}: {points:?}"
        );
    }
    // No order is the outcome of two payments, and every payment has an outcome.
    let mut outcome_of: HashMap<String, &str> = HashMap::new();
    let mut keys: HashSet<&str> = HashSet::new();
    for e in &trail {
        let key = e["idempotencyKey"].as_str().unwrap_or_default();
        keys.insert(key);
        if let Some(order) = e["orderNo"].as_str() {
            let first = outcome_of.entry(order.to_string()).or_insert(key);
            assert_eq!(*first, key, "order {order} is the outcome of one payment only");
        }
    }
    for key in keys {
        assert!(
            trail.iter().any(|e| e["idempotencyKey"] == key && tells_outcome(e)),
            "payment {key} has an outcome in the trail"
        );
    }
}
