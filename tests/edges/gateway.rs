//! The team gateway as a process: killed (SIGKILL) while a payment's answer is on its way, it
//! settles the payment when started again, charged once; the agent's own next command learns
//! what became of it from the gateway. Counted at the sandbox.

use crate::common::*;
use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::Duration;

/// `esimdash gateway serve` on a free port, the reseller's key in its environment; its address
/// once it serves (after settling what an earlier run left), waited for off the runtime that
/// the sandbox and the proxy run on.
pub async fn serve(home: &tempfile::TempDir, upstream: &str) -> (Child, String) {
    serve_with(home, upstream, &[]).await
}

/// As `serve`, with more arguments (`--config FILE`).
pub async fn serve_with(home: &tempfile::TempDir, upstream: &str, more: &[&str]) -> (Child, String) {
    serve_within(home, upstream, more, None).await
}

/// As `serve_with`, the process held to `files` open files (`ulimit -n`) when given.
async fn serve_within(home: &tempfile::TempDir, upstream: &str, more: &[&str], files: Option<u64>) -> (Child, String) {
    let mut cmd = esimdash(home);
    cmd.args(more);
    if let Some(files) = files {
        use std::os::unix::process::CommandExt;
        let limit = libc::rlimit {
            rlim_cur: files,
            rlim_max: files,
        };
        // SAFETY: setrlimit(2) in the child between fork and exec, async-signal-safe.
        unsafe {
            cmd.pre_exec(move || {
                if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
    }
    let store = home.path().join("gateway.db");
    acme_at(&mut cmd, upstream)
        .env("ESIMDASH_LOG", "debug")
        .args(["--log-file"])
        .arg(home.path().join("gateway.log"))
        .args(["gateway", "serve", "--listen", "127.0.0.1:0", "--store"])
        .arg(&store)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let first = tokio::task::spawn_blocking(move || {
        let mut first = String::new();
        BufReader::new(stdout).read_line(&mut first).map(|_| first)
    })
    .await
    .unwrap()
    .unwrap();
    let url = first
        .split_whitespace()
        .find(|w| w.starts_with("http://") || w.starts_with("https://"))
        .unwrap_or_else(|| panic!("the gateway said {first:?}"))
        .to_string();
    (child, url)
}

/// Test certificates, and a config file whose `[gateway]` serves https with them.
fn https_config(home: &tempfile::TempDir) -> (crate::certs::TestCerts, String) {
    let certs = crate::certs::make();
    let config = home.path().join("config.toml");
    std::fs::write(
        &config,
        format!(
            "[gateway]\ntls_cert = \"{}\"\ntls_key = \"{}\"\n",
            certs.cert.display(),
            certs.key.display()
        ),
    )
    .unwrap();
    (certs, config.display().to_string())
}

/// An agent's token from `gateway agent add`.
pub async fn agent(home: &tempfile::TempDir, name: &str, role: &str) -> (String, String) {
    let mut cmd = esimdash(home);
    cmd.args(["gateway", "agent", "add", name, "--role", role, "--json", "--store"])
        .arg(home.path().join("gateway.db"));
    let out = run(cmd).await;
    let token = stdout_json(&out);
    (
        token["accessCode"].as_str().unwrap().to_string(),
        token["secretKey"].as_str().unwrap().to_string(),
    )
}

/// The binary as an agent of the gateway at `base`.
pub fn as_agent(seat: &tempfile::TempDir, base: &str, (code, secret): &(String, String)) -> std::process::Command {
    let mut cmd = esimdash(seat);
    cmd.env("ESIMDASH_BASE_URL", base)
        .env("ESIMDASH_ACCESS_CODE", code)
        .env("ESIMDASH_SECRET_KEY", secret);
    cmd
}

#[tokio::test]
async fn a_gateway_killed_mid_payment_settles_it_at_restart_charged_once() {
    let (_sb, api, proxy, home) = held_sandbox_api_home(Duration::from_secs(2)).await;
    let mut targets = topupable(&api, 2).await;
    let (target, earlier) = (targets.remove(0), targets.remove(0));
    let ana = agent(&home, "ana", "support").await;
    let (mut gateway, base) = serve(&home, &proxy.base_url()).await;
    let seat = tempfile::tempdir().unwrap();
    // A payment answered first: the API echoed its key, so the gateway knows it honours keys
    // (without that it never resends, as the contract says, and leaves the payment unknown).
    let mut first = as_agent(&seat, &base, &ana);
    first.args(["topup", "--iccid", &earlier.0, "--slug", &earlier.1, "--yes"]);
    let first = run(first).await;
    assert!(first.status.success(), "{}", stderr(&first));
    let (orders, balance) = (orders_at_server(&api).await, api.balance().await.unwrap());
    let started = std::time::Instant::now();

    let mut pay = as_agent(&seat, &base, &ana);
    pay.args(["topup", "--iccid", &target.0, "--slug", &target.1, "--yes"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let paying = pay.spawn().unwrap();
    wait_until(Duration::from_secs(20), "the payment to reach the sandbox", || {
        proxy.writes() == 2
    })
    .await;
    signal(&gateway, libc::SIGKILL);
    let _ = gateway.wait();
    let paid = finish(paying).await;
    eprintln!(
        "the agent's command ended at {:?}: {}",
        started.elapsed(),
        stderr(&paid)
    );
    assert!(
        !paid.status.success(),
        "the agent learnt nothing yet: {}",
        stderr(&paid)
    );
    assert_eq!(orders_at_server(&api).await, orders + 1, "the sandbox carried it out");

    // Started again, it serves at once and settles the payment in the background: the order
    // list shows it placed, and nothing is paid again.
    let (gateway, base) = serve(&home, &proxy.base_url()).await;
    let store = esimdash_gateway::Store::open(&home.path().join("gateway.db").display().to_string())
        .await
        .unwrap();
    let is_killed = |p: &esimdash_gateway::store::Payment| p.asked.iccid.as_deref() == Some(target.0.as_str());
    let mut journal = store.journal(None, 0).await.unwrap();
    for _ in 0..200 {
        if journal
            .iter()
            .filter(|p| is_killed(p))
            .all(|p| p.stage == esimdash_gateway::store::Stage::Charged)
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        journal = store.journal(None, 0).await.unwrap();
    }
    let charged = api.balance().await.unwrap();
    assert_eq!(
        orders_at_server(&api).await,
        orders + 1,
        "charged once: no second order"
    );
    assert!(charged < balance, "the wallet paid it");
    assert_eq!(journal.len(), 2, "{journal:?}");
    let killed = journal.iter().find(|p| is_killed(p)).unwrap();
    assert_eq!(killed.stage, esimdash_gateway::store::Stage::Charged, "{journal:?}");
    assert_eq!(
        killed.charged,
        Some(balance - charged),
        "the journal says what the wallet paid"
    );
    eprintln!("settled at {:?}", started.elapsed());
    let log = std::fs::read_to_string(home.path().join("gateway.log")).unwrap_or_default();
    assert!(log.contains("answer"), "the gateway logged at debug level");
    assert!(
        !log.contains("sk_demo_acme"),
        "the gateway's log holds the reseller's secret"
    );

    // The agent's next command settles its own lost answer through the gateway: the same
    // payment under its key, answered from the journal, nothing paid again.
    let next = run({
        let mut cmd = as_agent(&seat, &base, &ana);
        cmd.args(["balance"]);
        cmd
    })
    .await;
    assert!(next.status.success(), "{}", stderr(&next));
    eprintln!(
        "the agent's next command ended at {:?}: {}",
        started.elapsed(),
        stderr(&next)
    );
    assert_eq!(orders_at_server(&api).await, orders + 1);
    assert_eq!(api.balance().await.unwrap(), charged);
    stop(gateway);
}

/// The dashboard of an agent with a cap, through the gateway, in a real terminal: its header
/// says who it is and what is left of its cap, in words at 120 columns, short at 80. (The
/// sandbox serves from the runtime's other thread while this one waits on tmux.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_header_shows_the_agents_seat_and_what_is_left_of_its_cap() {
    if !crate::tools::tmux_available("the_dashboard_header_shows_the_agents_seat") {
        return;
    }
    let (sb, _api, home) = sandbox_api_home().await;
    let mut cmd = esimdash(&home);
    cmd.args([
        "gateway",
        "agent",
        "add",
        "ana",
        "--role",
        "support",
        "--daily-cap",
        "10",
        "--json",
        "--store",
    ])
    .arg(home.path().join("gateway.db"));
    let token = stdout_json(&run(cmd).await);
    let (gateway, base) = serve(&home, &sb.base_url()).await;
    let seat = tempfile::tempdir().unwrap();
    let dashboard = format!(
        "env -i PATH=\"$PATH\" HOME='{home}' XDG_CONFIG_HOME='{home}/c' XDG_STATE_HOME='{home}/s' XDG_CACHE_HOME='{home}/k' ESIMDASH_BASE_URL='{base}' ESIMDASH_ACCESS_CODE='{code}' ESIMDASH_SECRET_KEY='{secret}' '{bin}'",
        home = seat.path().display(),
        code = token["accessCode"].as_str().unwrap(),
        secret = token["secretKey"].as_str().unwrap(),
        bin = env!("CARGO_BIN_EXE_esimdash"),
    );
    let wide = crate::tmux::Tmux::new("seat-wide");
    wide.start(120, 40, &dashboard);
    wide.wait_for("agent ana (support), 10.00 of 10.00 USD left today");
    let narrow = crate::tmux::Tmux::new("seat-narrow");
    narrow.start(80, 24, &dashboard);
    let screen = narrow.wait_for("ana·support 10.00/10.00 left");
    // Whole at the header's end, where only the spinner may follow while the catalog loads.
    let spinner = |c: char| ('\u{2800}'..='\u{28FF}').contains(&c);
    assert!(
        screen.lines().next().is_some_and(|l| l
            .trim_end()
            .trim_end_matches(spinner)
            .trim_end()
            .ends_with("10.00/10.00 left")),
        "{screen}"
    );
    // Revoked while the dashboard is open: at its next request it says whom to ask, the team's
    // admin, not the reseller portal.
    let mut revoke = esimdash(&home);
    revoke
        .args(["gateway", "agent", "revoke", "ana", "--store"])
        .arg(home.path().join("gateway.db"));
    assert!(run(revoke).await.status.success());
    narrow.keys(&["r"]);
    narrow.wait_for("team's admin");
    stop(gateway);
}

/// With a certificate and key under `[gateway]`, agents reach it over https (trusting its
/// authority as `ca_file`): the banner says https, and a seat's command works through it.
#[tokio::test]
async fn the_gateway_serves_https_with_the_certificate_its_settings_name() {
    let (sb, _api, home) = sandbox_api_home().await;
    let (certs, config) = https_config(&home);
    let ana = agent(&home, "ana", "viewer").await;
    let (gateway, base) = serve_with(&home, &sb.base_url(), &["--config", &config]).await;
    assert!(base.starts_with("https://"), "{base}");
    let seat = tempfile::tempdir().unwrap();
    let mut balance = as_agent(&seat, &base, &ana);
    balance.env("ESIMDASH_CA_FILE", &certs.ca).args(["balance"]);
    let out = run(balance).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_stdout_has(&out, "Balance:");
    stop(gateway);
}

/// Through the gateway, a second agent's top-up of the eSIM and plan another agent paid minutes
/// ago is not paid unless it says so (`--again`, which the gateway reads as the confirmation).
#[tokio::test]
async fn a_second_agent_pays_the_same_top_up_only_with_again() {
    let (sb, api, home) = sandbox_api_home().await;
    let target = topupable(&api, 1).await.remove(0);
    let (ana, bob) = (
        agent(&home, "ana", "support").await,
        agent(&home, "bob", "support").await,
    );
    let (gateway, base) = serve(&home, &sb.base_url()).await;
    let orders = orders_at_server(&api).await;
    let topup = |seat: &tempfile::TempDir, token: &(String, String), again: bool| {
        let mut cmd = as_agent(seat, &base, token);
        cmd.args(["topup", "--iccid", &target.0, "--slug", &target.1, "--yes"]);
        if again {
            cmd.arg("--again");
        }
        run(cmd)
    };
    let (ana_seat, bob_seat) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let paid = topup(&ana_seat, &ana, false).await;
    assert!(paid.status.success(), "{}", stderr(&paid));
    let refused = topup(&bob_seat, &bob, false).await;
    assert_eq!(
        refused.status.code(),
        Some(2),
        "a repeat without --again: {}",
        stderr(&refused)
    );
    assert_stderr_has(&refused, "--again");
    assert_eq!(orders_at_server(&api).await, orders + 1, "bob's was not paid");
    let confirmed = topup(&bob_seat, &bob, true).await;
    assert!(confirmed.status.success(), "{}", stderr(&confirmed));
    assert_eq!(orders_at_server(&api).await, orders + 2, "bob's confirmed one was paid");
    stop(gateway);
}

/// In the dashboard, a top-up another agent paid minutes ago: the gateway's question becomes
/// the dashboard's second question, and confirmed there, it is paid (once), counted at the
/// sandbox.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dashboard_asks_again_for_a_top_up_another_agent_just_paid() {
    if !crate::tools::tmux_available("the_dashboard_asks_again_for_a_top_up_another_agent_just_paid") {
        return;
    }
    let (sb, api, home) = sandbox_api_home().await;
    let (ana, bob) = (
        agent(&home, "ana", "support").await,
        agent(&home, "bob", "support").await,
    );
    let (gateway, base) = serve(&home, &sb.base_url()).await;
    let orders = orders_at_server(&api).await;
    let dashboard = |name: &str, (code, secret): &(String, String)| {
        let seat = home.path().join(name);
        let tmux = crate::tmux::Tmux::new(name);
        tmux.start(
            120,
            40,
            &format!(
                "env -i PATH=\"$PATH\" HOME='{seat}' XDG_CONFIG_HOME='{seat}/c' XDG_STATE_HOME='{seat}/s' XDG_CACHE_HOME='{seat}/k' ESIMDASH_BASE_URL='{base}' ESIMDASH_ACCESS_CODE='{code}' ESIMDASH_SECRET_KEY='{secret}' '{bin}'",
                seat = seat.display(),
                bin = env!("CARGO_BIN_EXE_esimdash"),
            ),
        );
        tmux
    };
    // The same eSIM (the newest) and the same plan (the first offered) on both seats.
    let steps = [
        ("3", "LPA:1$"),
        ("t", "Plans offered by the API"),
        ("Enter", "Enter: pay"),
    ];
    let first = dashboard("ana", &ana);
    first.press_and_wait(&steps);
    first.keys(&["Enter"]);
    first.wait_for("Placed: order");
    let second = dashboard("bob", &bob);
    second.press_and_wait(&steps);
    second.keys(&["Enter"]);
    second.wait_for("agent ana paid it");
    assert_eq!(orders_at_server(&api).await, orders + 1, "bob's was not sent");
    second.keys(&["Enter"]);
    second.wait_for("Placed: order");
    assert_eq!(
        orders_at_server(&api).await,
        orders + 2,
        "bob's, confirmed, was paid once"
    );
    stop(gateway);
}

/// 1 100 half-sent connections to a gateway held to 1 024 open files, over http (a request head
/// cut off) and over https (a handshake never begun): five requests of an agent are all
/// served, and every half-sent connection is closed, pushed out for a newer one or at the end
/// of its 10 s for a head.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn half_sent_requests_do_not_keep_the_agents_out() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (sb, _api, home) = sandbox_api_home().await;
    let (certs, config) = https_config(&home);
    let ana = agent(&home, "ana", "viewer").await;
    for https in [false, true] {
        let more: &[&str] = if https { &["--config", &config] } else { &[] };
        let (gateway, base) = serve_within(&home, &sb.base_url(), more, Some(1024)).await;
        let addr = base.split("//").nth(1).unwrap().split('/').next().unwrap().to_string();
        let mut stalled = Vec::new();
        for _ in 0..1100 {
            let mut stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
            if !https {
                stream
                    .write_all(b"POST /api/v1/portal/topups HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n")
                    .await
                    .unwrap();
            }
            stalled.push(stream);
        }
        let opened = std::time::Instant::now();
        let seat = tempfile::tempdir().unwrap();
        let mut served = 0;
        for _ in 0..5 {
            let mut balance = as_agent(&seat, &base, &ana);
            balance.env("ESIMDASH_CA_FILE", &certs.ca).args(["balance"]);
            let out = run(balance).await;
            assert!(out.status.success(), "https {https}: {}", stderr(&out));
            served += 1;
        }
        assert_eq!(served, 5);
        // Past the 10 s for a head, every half-sent connection has been closed.
        tokio::time::sleep(Duration::from_secs(11).saturating_sub(opened.elapsed())).await;
        let mut open = 0;
        for stream in &mut stalled {
            let mut byte = [0u8; 64];
            match tokio::time::timeout(Duration::from_secs(2), stream.read(&mut byte)).await {
                Ok(Ok(0) | Err(_)) => {}
                Ok(Ok(_)) => {
                    // An answer (408) before the close is a close all the same; read to the end.
                    let mut rest = Vec::new();
                    if !matches!(
                        tokio::time::timeout(Duration::from_secs(2), stream.read_to_end(&mut rest)).await,
                        Ok(Ok(_) | Err(_))
                    ) {
                        open += 1;
                    }
                }
                Err(_) => open += 1,
            }
        }
        assert_eq!(open, 0, "https {https}: half-sent connections still open");
        stop(gateway);
    }
}

/// The gateway's resident memory, in KB.
fn resident_kb(child: &Child) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap()
}

/// A balance read written by hand on a connection from `from` (a 400 KB header is not worth
/// a client's checks): the answer's status, 0 when the connection was cut.
async fn raw_balance(to: std::net::SocketAddr, from: std::net::IpAddr, code: &str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind((from, 0).into()).unwrap();
    let Ok(mut stream) = socket.connect(to).await else {
        return 0;
    };
    let head = format!(
        "GET /api/v1/reseller/balance HTTP/1.1\r\nHost: x\r\nx-access-code: {code}\r\nx-secret-key: gs_x\r\nConnection: close\r\n\r\n"
    );
    let _ = stream.write_all(head.as_bytes()).await;
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer).await;
    String::from_utf8_lossy(&answer)
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// An HTTP client whose connections come from `from`.
fn client_from(from: std::net::IpAddr) -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().local_address(from).build().unwrap()
}

/// A balance read from `from` with a token: its status (0: the connection was refused or cut).
async fn balance_from(base: &str, from: std::net::IpAddr, code: &str, secret: &str) -> u16 {
    balance_by(&client_from(from), base, code, secret).await
}

async fn balance_by(http: &reqwest::Client, base: &str, code: &str, secret: &str) -> u16 {
    match http
        .get(format!("{base}/reseller/balance"))
        .header("x-access-code", code)
        .header("x-secret-key", secret)
        .send()
        .await
    {
        Ok(answer) => answer.status().as_u16(),
        Err(_) => 0,
    }
}

/// 6 000 failed sign-ins with 400 KB access codes from 60 addresses: the gateway's memory grows
/// by less than 20 MB. Guesses of one agent's secret from rotating addresses are refused after
/// ten, while that agent still signs in from its own address; another agent behind one of the
/// failing addresses signs in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_sign_ins_cost_no_memory_and_lock_no_one_out() {
    let (sb, _api, home) = sandbox_api_home().await;
    let ana = agent(&home, "ana", "viewer").await;
    let bob = agent(&home, "bob", "viewer").await;
    let (gateway, base) = serve(&home, &sb.base_url()).await;
    let desk = std::net::IpAddr::from([127, 0, 0, 1]);
    assert_eq!(balance_from(&base, desk, &ana.0, &ana.1).await, 200);
    let before = resident_kb(&gateway);
    let addr: std::net::SocketAddr = base
        .split("//")
        .nth(1)
        .unwrap()
        .split('/')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let huge = "g".repeat(400 * 1024);
    let floods = (0..60u8).map(|n| {
        let huge = huge.clone();
        tokio::spawn(async move {
            let from = std::net::IpAddr::from([127, 0, 1, n + 1]);
            let mut refused = 0;
            for i in 0..100 {
                let code = format!("{huge}{n}-{i}");
                refused += u32::from(raw_balance(addr, from, &code).await != 200);
            }
            refused
        })
    });
    let mut refused = 0;
    for flood in floods {
        refused += flood.await.unwrap();
    }
    assert_eq!(refused, 6000);
    let grown = resident_kb(&gateway).saturating_sub(before);
    assert!(grown < 20 * 1024, "6 000 failed sign-ins took {grown} KB");
    // One agent's secret guessed from 30 addresses: refused (429) after ten failures.
    let mut told_to_wait = 0;
    for n in 0..30u8 {
        let from = std::net::IpAddr::from([127, 0, 2, n + 1]);
        match balance_from(&base, from, &ana.0, "gs_guess").await {
            429 => told_to_wait += 1,
            401 => {}
            other => panic!("a guess was answered {other}"),
        }
    }
    assert_eq!(told_to_wait, 20, "guesses after the tenth wait");
    assert_eq!(
        balance_from(&base, desk, &ana.0, &ana.1).await,
        200,
        "ana at her own desk"
    );
    let failing = std::net::IpAddr::from([127, 0, 1, 1]);
    assert_eq!(
        balance_from(&base, failing, &bob.0, &bob.1).await,
        200,
        "bob behind a failing address"
    );
    stop(gateway);
}

/// Ends a gateway the test started.
pub fn stop(mut gateway: std::process::Child) {
    let _ = gateway.kill();
    let _ = gateway.wait();
}
