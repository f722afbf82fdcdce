//! An account is its credential, whatever its address is spelled: `127.0.0.1:P` and
//! `LOCALHOST:P/` reach one lock, one rule against repeats, one settling and one bulk journal.
//! Counted at the server, each payment is one order.

use crate::common::*;
use std::process::Stdio;
use std::time::Duration;

/// The same server under two spellings: the address as a test writes it, and the host by
/// name, in capitals, with a trailing slash and no `/api/v1`.
fn spellings(addr: std::net::SocketAddr) -> [String; 2] {
    [
        format!("http://{addr}/api/v1"),
        format!("http://LOCALHOST:{}/", addr.port()),
    ]
}

#[tokio::test(flavor = "multi_thread")]
async fn one_account_under_two_spellings_of_its_address_pays_each_payment_once() {
    let (sb, api, home) = sandbox_api_home().await;
    let targets = topupable(&api, 6).await;
    let direct = spellings(sb.addr);
    let before = orders_at_server(&api).await;

    // In sequence: the same top-up through the other spelling is a repeat.
    let out = finish(start_topup(&home, &direct[0], &targets[0], &[])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = finish(start_topup(&home, &direct[1], &targets[0], &[])).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_stderr_has(&out, "--again");
    assert_eq!(orders_at_server(&api).await, before + 1, "in sequence: one order");

    // At once, each answer held: one lock, so the second waits and then meets the repeat.
    let proxy = HoldingProxy::start(sb.addr, Duration::from_millis(800)).await;
    let held = spellings(proxy.addr);
    let first = start_topup(&home, &held[0], &targets[1], &[]);
    let second = start_topup(&home, &held[1], &targets[1], &[]);
    let codes = [finish(first).await, finish(second).await].map(|o| o.status.code());
    assert!(codes.contains(&Some(0)) && codes.contains(&Some(2)), "{codes:?}");
    assert_eq!(orders_at_server(&api).await, before + 2, "at once: one order");

    // Killed mid-payment under one spelling, settled under the other, never paid again.
    let writes = proxy.writes();
    let child = start_topup(&home, &held[0], &targets[2], &[]);
    wait_until(Duration::from_secs(20), "the payment to reach the server", || {
        proxy.writes() > writes
    })
    .await;
    signal(&child, libc::SIGKILL);
    let _ = finish(child).await;
    let out = run_acme_at(&home, &held[1], ["balance"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("An earlier top-up of {}", targets[2].0)),
        "settled under the other spelling: {}",
        stderr(&out)
    );
    let out = finish(start_topup(&home, &held[1], &targets[2], &[])).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(orders_at_server(&api).await, before + 3, "after a kill: one order");

    // One bulk file through both spellings: its rows are paid once.
    pay_bulk_twice(
        &home,
        &targets[3..],
        [(direct[0].as_str(), &[][..]), (direct[1].as_str(), &[][..])],
    )
    .await;
    assert_eq!(
        orders_at_server(&api).await,
        before + 6,
        "a bulk file: one order per row"
    );
}

/// A bulk file of `targets` written in `home` and run twice, each at an address with extra
/// arguments: the first pays every row (exit 0), the second is refused as paid (exit 2).
async fn pay_bulk_twice(home: &tempfile::TempDir, targets: &[(String, String)], runs: [(&str, &[&str]); 2]) {
    let file = &home.path().join("rows.csv");
    let rows: String = targets
        .iter()
        .map(|(iccid, slug)| format!("{iccid},{slug},1\n"))
        .collect();
    std::fs::write(file, format!("iccid,slug,qty\n{rows}")).unwrap();
    for (n, (base, extra)) in runs.into_iter().enumerate() {
        let mut cmd = esimdash(home);
        acme_at(&mut cmd, base)
            .args(extra)
            .args(["topup", "--from"])
            .arg(file)
            .arg("--yes")
            .stdin(Stdio::null());
        let out = run(cmd).await;
        assert_eq!(out.status.code(), Some([0, 2][n]), "{}", stderr(&out));
    }
}

/// The same key as users give it: pasted with a space or a tab around it, printed by a command
/// with a line's end, or the secret alone as `x-api-key` or a bearer token (the server reads
/// each as the same account).
const KEY_SPELLINGS: [&[&str]; 4] = [
    &["--access-code", "ak_demo_acme "],
    &["--secret-key", "\tsk_demo_acme\n"],
    &["--auth", "api-key"],
    &["--auth", "bearer", "--secret-key", "sk_demo_acme "],
];

#[tokio::test(flavor = "multi_thread")]
async fn one_account_under_any_spelling_of_its_key_pays_each_payment_once() {
    let (sb, api, home) = sandbox_api_home().await;
    let targets = topupable(&api, 5).await;
    let base = format!("http://{}/api/v1", sb.addr);
    let before = orders_at_server(&api).await;

    // In sequence: paid as typed, then every other spelling meets the rule against repeats.
    let out = finish(start_topup(&home, &base, &targets[0], &[])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for spelling in KEY_SPELLINGS {
        let out = finish(start_topup(&home, &base, &targets[0], spelling)).await;
        assert_eq!(out.status.code(), Some(2), "{spelling:?}: {}", stderr(&out));
        assert_stderr_has(&out, "--again");
    }
    assert_eq!(orders_at_server(&api).await, before + 1, "in sequence: one order");

    // At once, each answer held: one lock for both spellings.
    let proxy = HoldingProxy::start(sb.addr, Duration::from_millis(800)).await;
    let held = format!("http://{}/api/v1", proxy.addr);
    let first = start_topup(&home, &held, &targets[1], &[]);
    let second = start_topup(&home, &held, &targets[1], KEY_SPELLINGS[2]);
    let codes = [finish(first).await, finish(second).await].map(|o| o.status.code());
    assert!(codes.contains(&Some(0)) && codes.contains(&Some(2)), "{codes:?}");
    assert_eq!(orders_at_server(&api).await, before + 2, "at once: one order");

    // Killed mid-payment pasted one way, settled and refused again under the others.
    let writes = proxy.writes();
    let child = start_topup(&home, &held, &targets[2], KEY_SPELLINGS[0]);
    wait_until(Duration::from_secs(20), "the payment to reach the server", || {
        proxy.writes() > writes
    })
    .await;
    signal(&child, libc::SIGKILL);
    let _ = finish(child).await;
    let mut cmd = esimdash(&home);
    acme_at(&mut cmd, &held).args(KEY_SPELLINGS[3]).arg("balance");
    let out = run(cmd).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("An earlier top-up of {}", targets[2].0)),
        "settled under another spelling: {}",
        stderr(&out)
    );
    let out = finish(start_topup(&home, &held, &targets[2], KEY_SPELLINGS[1])).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(orders_at_server(&api).await, before + 3, "after a kill: one order");

    // A paid bulk file run again with the key spelled another way pays no row again.
    pay_bulk_twice(
        &home,
        &targets[3..],
        [(base.as_str(), &[][..]), (base.as_str(), KEY_SPELLINGS[3])],
    )
    .await;
    assert_eq!(
        orders_at_server(&api).await,
        before + 5,
        "a bulk file: one order per row"
    );
}
