//! A payment is settled even when the process that sent it dies, and is never paid twice by a
//! re-run or by a second process: counted at the server, read in the audit trail.

use crate::common::*;
use std::time::{Duration, Instant};

/// How long the proxy holds a payment's answer: the window in which the process is stopped.
const HOLD: Duration = Duration::from_millis(1500);

/// A top-up killed (SIGKILL) while the proxy holds its answer, the server having it: the
/// sandbox and proxy (bind them: dropped, they stop), the home, the eSIM and slug, the orders
/// before, the exit.
struct Killed {
    _sb: esimdash_sandbox::RunningSandbox,
    api: esimdash_api::Client,
    proxy: HoldingProxy,
    home: tempfile::TempDir,
    target: (String, String),
    orders: u64,
    out: std::process::Output,
}

impl Killed {
    /// The killed top-up run once more, in the same home and through the proxy, with `extra`.
    async fn top_up_again(&self, extra: &[&str]) -> std::process::Output {
        finish(start_topup(&self.home, &self.proxy.base_url(), &self.target, extra)).await
    }
}

async fn killed_mid_payment() -> Killed {
    let (sb, api, proxy, home) = held_sandbox_api_home(HOLD).await;
    let [earlier, target] = <[_; 2]>::try_from(topupable(&api, 2).await).unwrap();
    // An earlier payment answered with its key echoed: the trail knows this server honours
    // keys, so one new order of the killed payment's is its own (without that, another seat's
    // same payment could be it: listed, never claimed).
    let out = finish(start_topup(&home, &proxy.base_url(), &earlier, &[])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let orders = orders_at_server(&api).await;
    let writes = proxy.writes();
    let child = start_topup(&home, &proxy.base_url(), &target, &[]);
    wait_until(Duration::from_secs(20), "the payment to reach the server", || {
        proxy.writes() == writes + 1
    })
    .await;
    signal(&child, libc::SIGKILL);
    let out = finish(child).await;
    Killed {
        _sb: sb,
        api,
        proxy,
        home,
        target,
        orders,
        out,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn killed_mid_payment_it_is_settled_by_the_next_command_and_a_rerun_needs_a_second_confirmation() {
    // Bound for the whole test: its sandbox, dropped, would stop serving.
    let killed = killed_mid_payment().await;
    assert_eq!(killed.out.status.code(), None, "killed");
    assert_eq!(
        orders_at_server(&killed.api).await,
        killed.orders + 1,
        "the server carried it out"
    );
    let stages: Vec<String> = stages_of(&trail(&killed.home), &killed.target.0)
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    assert_eq!(
        stages,
        ["asked", "sent"],
        "the trail knows it left, not what came of it"
    );

    // Any command of the same account settles it first, and says so.
    let out = run_acme_at(&killed.home, &killed.proxy.base_url(), ["balance"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(
        said.contains(&format!("An earlier top-up of {}", killed.target.0)) && said.contains("was placed: order"),
        "{said}"
    );
    assert_eq!(
        orders_at_server(&killed.api).await,
        killed.orders + 1,
        "settling paid nothing twice"
    );
    let last = trail(&killed.home).last().cloned().unwrap();
    assert!(
        matches!(last["stage"].as_str(), Some("settled" | "answered")) && last["orderNo"].is_string(),
        "{last}"
    );

    // The same top-up again within minutes: not sent without a second confirmation.
    let out = killed.top_up_again(&["--json"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let error: serde_json::Value = serde_json::from_str(stderr(&out).trim()).unwrap();
    assert_eq!(error["error"]["moneyMoved"], false, "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("was placed at") && message.contains("--again"),
        "{message}"
    );
    assert_eq!(orders_at_server(&killed.api).await, killed.orders + 1);

    let out = killed.top_up_again(&["--again"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("Placed: order"), "{}", stdout(&out));
    assert_eq!(
        orders_at_server(&killed.api).await,
        killed.orders + 2,
        "confirmed twice: paid twice"
    );
}

/// A script's command that settles an earlier payment carries it in its document
/// (`settledEarlier`), and tells it on stderr as a JSON line, not a sentence.
#[tokio::test(flavor = "multi_thread")]
async fn with_json_the_payment_a_command_settles_is_in_its_document() {
    let killed = killed_mid_payment().await;
    let out = run_acme_at(&killed.home, &killed.proxy.base_url(), ["balance", "--json"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let document: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert!(document["balanceUsd"].is_string(), "{document}");
    let settled = document["settledEarlier"].as_array().cloned().unwrap_or_default();
    assert_eq!(settled.len(), 1, "{document}");
    assert_eq!(settled[0]["iccid"], killed.target.0.as_str(), "{document}");
    assert_eq!(settled[0]["outcome"], "placed", "{document}");
    let told: Vec<serde_json::Value> = stderr(&out)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    assert_eq!(told.len(), 1, "{}", stderr(&out));
    assert_eq!(told[0]["settled"], settled[0], "the same payment, told as it settled");
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_sighup_and_ctrl_c_mid_payment_wait_for_the_answer_and_record_it() {
    let (_sb, api, proxy, home) = held_sandbox_api_home(HOLD).await;
    let targets = topupable(&api, 3).await;
    for (target, sig) in targets.iter().zip([libc::SIGTERM, libc::SIGHUP, libc::SIGINT]) {
        let orders = orders_at_server(&api).await;
        let writes = proxy.writes();
        let child = start_topup(&home, &proxy.base_url(), target, &[]);
        wait_until(Duration::from_secs(20), "the payment to reach the server", || {
            proxy.writes() > writes
        })
        .await;
        let sent = Instant::now();
        signal(&child, sig);
        let out = finish(child).await;
        assert!(sent.elapsed() >= HOLD / 2, "signal {sig}: it waited for the answer");
        // It ends as the payment did: placed, and said so (a script learns that money moved).
        assert_eq!(out.status.code(), Some(0), "signal {sig}: {}", stderr(&out));
        if sig != libc::SIGHUP {
            assert!(stdout(&out).starts_with("Placed: order"), "{}", stdout(&out));
        }
        if sig != libc::SIGHUP {
            // After a hang-up there is no terminal to tell.
            assert_stderr_has(&out, "waiting for its answer");
        }
        assert_eq!(orders_at_server(&api).await, orders + 1);
        let stages = stages_of(&trail(&home), &target.0);
        assert_eq!(
            stages.iter().map(|(s, _)| s.as_str()).collect::<Vec<_>>(),
            ["asked", "sent", "answered"],
            "signal {sig}: the outcome is in the trail"
        );
        assert!(stages[2].1.is_some());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn two_processes_paying_for_one_esim_pay_once_unless_confirmed_twice_and_each_claims_its_own_order() {
    let (sb, api, proxy, home) = held_sandbox_api_home(Duration::from_millis(800)).await;
    let target = topupable(&api, 1).await.remove(0);
    let orders = orders_at_server(&api).await;

    let (a, b) = (
        start_topup(&home, &proxy.base_url(), &target, &[]),
        start_topup(&home, &proxy.base_url(), &target, &[]),
    );
    let (a, b) = (finish(a).await, finish(b).await);
    let mut codes = [a.status.code(), b.status.code()];
    codes.sort();
    assert_eq!(
        codes,
        [Some(0), Some(2)],
        "one paid, one refused:\n{}\n{}",
        stderr(&a),
        stderr(&b)
    );
    let refused = if a.status.code() == Some(2) { &a } else { &b };
    assert!(
        stderr(refused).contains("waiting for it to finish") && stderr(refused).contains("was placed at"),
        "the second waited for the first, then named it: {}",
        stderr(refused)
    );
    assert_eq!(orders_at_server(&api).await, orders + 1);

    // Both confirmed twice, and both answers lost at a server never seen to honour keys (a
    // fresh machine): each looks its order up, and neither takes the other's.
    let fresh = tempfile::tempdir().unwrap();
    sb.lose_next_writes(2);
    let (a, b) = (
        start_topup(&fresh, &proxy.base_url(), &target, &["--again", "--timeout", "2"]),
        start_topup(&fresh, &proxy.base_url(), &target, &["--again", "--timeout", "2"]),
    );
    let (a, b) = (finish(a).await, finish(b).await);
    assert_eq!(orders_at_server(&api).await, orders + 3);
    let claimed: Vec<String> = [&a, &b]
        .iter()
        .map(|out| {
            assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
            let text = stdout(out);
            let order = text
                .rsplit("order ")
                .next()
                .unwrap_or_default()
                .trim_end_matches(['.', '\n']);
            order.to_string()
        })
        .collect();
    assert_ne!(claimed[0], claimed[1], "each claimed its own order: {claimed:?}");
}

/// The audit trail's text is shown, never obeyed: a payment left unsettled whose slug holds
/// escape codes and a line break (a hostile server's, or a hand-edited line) is named by the
/// next command's notice without a raw ESC, BEL or line break reaching the terminal.
#[tokio::test(flavor = "multi_thread")]
async fn a_settle_notice_shows_hostile_trail_text_as_text() {
    // Bound for the whole test: its sandbox, dropped, would stop serving.
    let killed = killed_mid_payment().await;
    let path = killed.home.path().join("state/esimdash/audit.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let hostile = serde_json::to_string("\u{1b}]0;pwned\u{7}\u{1b}[2J\nesimdash: forged").unwrap();
    let quoted = serde_json::to_string(&killed.target.1).unwrap();
    std::fs::write(&path, text.replace(&quoted, &hostile)).unwrap();

    let out = run_acme_at(&killed.home, &killed.proxy.base_url(), ["balance"]).await;
    let said = stderr(&out);
    assert!(said.contains("pwned"), "the notice names the payment: {said}");
    assert!(!said.contains(['\u{1b}', '\u{7}']), "{said:?}");
    assert!(!said.lines().any(|l| l.starts_with("esimdash: forged")), "{said}");
}

/// Killed mid-payment, and then the server stops honouring keys (a failover node, a proxy that
/// drops the header): the next command reads the order list before any resend, finds the
/// order and sends nothing again. Counted at the server: one order.
#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_dropped_keys_gets_no_resend_when_the_order_list_shows_the_payment() {
    // Bound for the whole test: its sandbox, dropped, would stop serving.
    let killed = killed_mid_payment().await;
    assert_eq!(
        orders_at_server(&killed.api).await,
        killed.orders + 1,
        "the server carried it out"
    );
    killed.proxy.drop_keys();
    let writes = killed.proxy.writes();
    let out = run_acme_at(&killed.home, &killed.proxy.base_url(), ["balance"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(
        said.contains(&format!("An earlier top-up of {}", killed.target.0))
            && said.contains("was placed: order")
            && said.contains("the order list shows it"),
        "{said}"
    );
    assert_eq!(killed.proxy.writes(), writes, "nothing sent again");
    assert_eq!(orders_at_server(&killed.api).await, killed.orders + 1, "one order");
}
