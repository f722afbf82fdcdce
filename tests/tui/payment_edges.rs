//! The dashboard in a real terminal at the edges of a payment: the terminal hung up (an SSH
//! connection dropped) while the server holds the payment's answer, the window that tells
//! what became of a payment an earlier process was killed in the middle of, and a top-up of
//! marked eSIMs killed mid-run and finished by `esimdash topup --from` its rows file.

use crate::holding_proxy::HoldingProxy;
use crate::terminal_e2e::Tmux;
use esimdash_api::model::{EsimQuery, OrderQuery};
use esimdash_api::{BaseUrl, Client, ClientOptions, Credentials};
use esimdash_domain::iccid::Iccid;
use esimdash_sandbox::{RunningSandbox, SandboxConfig, spawn};
use std::process::Command;
use std::time::{Duration, Instant};

/// How long the proxy holds each payment's answer.
const HOLD: Duration = Duration::from_secs(2);

/// A sandbox behind a holding proxy, served from a runtime of their own (the test's thread
/// waits on tmux).
struct Server {
    runtime: tokio::runtime::Runtime,
    sandbox: RunningSandbox,
    proxy: HoldingProxy,
}

impl Server {
    fn start() -> Self {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let (sandbox, proxy) = runtime.block_on(async {
            let config = SandboxConfig {
                rate_limit: 100_000,
                ..SandboxConfig::default()
            };
            let sandbox = spawn(&config, "127.0.0.1:0".parse().unwrap()).await.unwrap();
            let proxy = HoldingProxy::start(sandbox.addr, HOLD).await;
            (sandbox, proxy)
        });
        Self {
            runtime,
            sandbox,
            proxy,
        }
    }

    /// The server for the test running now, and a home for the dashboard; `None` where tmux
    /// is missing, the test then skipped (and saying so).
    fn for_test() -> Option<(Self, tempfile::TempDir)> {
        if !crate::common::tmux_available_here() {
            return None;
        }
        Some((Self::start(), tempfile::tempdir().unwrap()))
    }

    /// Acme's client straight at the sandbox, for setting up and counting.
    fn api(&self) -> Client {
        let credentials = Credentials::pair("ak_demo_acme", "sk_demo_acme");
        let base = BaseUrl::parse(&self.sandbox.base_url()).unwrap();
        Client::new(base, &credentials, ClientOptions::default()).unwrap()
    }

    fn orders(&self) -> u64 {
        let orders = self.runtime.block_on(self.api().orders(&OrderQuery::default()));
        orders.unwrap().total
    }

    /// The second eSIM of Acme's that is in use (the first is the dashboard's first row), and
    /// the first top-up offered for it.
    fn second_in_use(&self) -> (String, String) {
        let query = EsimQuery {
            status: "in_use".into(),
            ..EsimQuery::default()
        };
        self.runtime.block_on(async {
            let api = self.api();
            let iccid = api.esims(&query).await.unwrap().esims[1]
                .raw_order_json
                .iccid
                .to_string();
            let slug = api.topup_plans(&Iccid::parse(&iccid).unwrap()).await.unwrap()[0]
                .slug
                .clone();
            (iccid, slug)
        })
    }

    /// `n` eSIMs in use offered the same top-up first, and that top-up's slug.
    fn in_use_sharing_a_topup(&self, n: usize) -> (Vec<String>, String) {
        let query = EsimQuery {
            status: "in_use".into(),
            page_size: Some(100),
            ..EsimQuery::default()
        };
        self.runtime.block_on(async {
            let api = self.api();
            let mut by_slug: std::collections::HashMap<String, Vec<String>> = Default::default();
            for esim in api.esims(&query).await.unwrap().esims {
                let iccid = esim.raw_order_json.iccid.to_string();
                if let Some(first) = api.topup_plans(&Iccid::parse(&iccid).unwrap()).await.unwrap().first() {
                    let group = by_slug.entry(first.slug.clone()).or_default();
                    if !group.contains(&iccid) {
                        group.push(iccid);
                    }
                    if group.len() == n {
                        return (group.clone(), first.slug.clone());
                    }
                }
            }
            panic!("no {n} eSIMs in use share a top-up: {by_slug:?}");
        })
    }

    /// Until the payment has reached the server (its answer held by the proxy).
    fn wait_for_the_payment(&self) {
        self.wait_for_payments(1);
    }

    /// Until `n` payments have reached the server (the last one's answer held by the proxy).
    fn wait_for_payments(&self, n: u64) {
        let started = Instant::now();
        while self.proxy.writes() < n {
            assert!(started.elapsed() < Duration::from_secs(10), "the payment was sent");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    fn env(&self, home: &tempfile::TempDir) -> String {
        format!(
            "HOME={home} XDG_STATE_HOME={home}/state XDG_CONFIG_HOME={home}/config ESIMDASH_BASE_URL={} ESIMDASH_ACCESS_CODE=ak_demo_acme ESIMDASH_SECRET_KEY=sk_demo_acme",
            self.proxy.base_url(),
            home = home.path().display(),
        )
    }
}

/// The dashboard against `server` in tmux at 80×24, started in `home` (where its files go when
/// no download directory is set); returns its process id.
fn dashboard(tmux: &Tmux, server: &Server, home: &tempfile::TempDir) -> String {
    let pid_file = home.path().join("pid");
    let command = format!(
        "cd {home}; {env} sh -c 'echo $$ > {pid}; exec {bin}'",
        home = home.path().display(),
        env = server.env(home),
        pid = pid_file.display(),
        bin = env!("CARGO_BIN_EXE_esimdash"),
    );
    tmux.start(80, 24, &command);
    tmux.wait_for(" USD");
    std::fs::read_to_string(pid_file).unwrap().trim().to_string()
}

fn alive(pid: &str) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z "))
}

fn stages(home: &tempfile::TempDir) -> Vec<(String, Option<String>)> {
    let trail = esimdash_api::audit::read(&home.path().join("state/esimdash/audit.jsonl")).unwrap();
    trail
        .entries
        .iter()
        .map(|e| (e.stage.label().to_string(), e.order_no.clone()))
        .collect()
}

#[test]
fn a_hang_up_mid_payment_waits_for_the_answer_and_records_it() {
    let Some((server, home)) = Server::for_test() else {
        return;
    };
    let tmux = Tmux::new("hup");
    let pid = dashboard(&tmux, &server, &home);
    let orders = server.orders();
    tmux.press_and_wait(&[
        ("3", "total"),
        ("t", "Plans offered by the API"),
        ("Enter", "Enter: pay"),
    ]);
    tmux.keys(&["Enter"]);
    server.wait_for_the_payment();
    // The terminal goes away, as when an SSH connection drops: the process gets SIGHUP.
    let hung_up = Instant::now();
    tmux.run(&["kill-server"]);
    while alive(&pid) {
        assert!(hung_up.elapsed() < Duration::from_secs(20), "it ended after the answer");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        hung_up.elapsed() >= HOLD / 2,
        "it waited for the answer: {:?}",
        hung_up.elapsed()
    );
    assert_eq!(server.orders(), orders + 1, "paid once");
    let stages = stages(&home);
    let names: Vec<&str> = stages.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(names, ["asked", "sent", "answered"], "the outcome is in the trail");
    assert!(stages[2].1.is_some());
}

#[test]
fn a_payment_killed_mid_flight_is_told_in_a_window_at_the_next_start() {
    let Some((server, home)) = Server::for_test() else {
        return;
    };
    let (iccid, slug) = server.second_in_use();
    // `esimdash topup` killed (SIGKILL) while the server holds its answer.
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "exec env {} {} topup --iccid {iccid} --slug {slug} --yes",
            server.env(&home),
            env!("CARGO_BIN_EXE_esimdash")
        ))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    server.wait_for_the_payment();
    child.kill().unwrap();
    child.wait().unwrap();

    let tmux = Tmux::new("told");
    dashboard(&tmux, &server, &home);
    let screen = tmux.wait_for("Earlier payments, settled now");
    let told = tmux.wait_for("placed");
    assert!(told.contains(&iccid[..12]), "it names the eSIM:\n{screen}\n{told}");
    tmux.keys(&["Escape"]);
    let started = Instant::now();
    while tmux.screen().contains("Earlier payments") {
        assert!(started.elapsed() < Duration::from_secs(5), "Esc closes the window");
        std::thread::sleep(Duration::from_millis(20));
    }
    // This machine never saw the server echo a key: the order list shows one order that could
    // be it, but another seat paying the same could have placed it: listed, never claimed.
    let trail = esimdash_api::audit::read(&home.path().join("state/esimdash/audit.jsonl")).unwrap();
    let last = trail.entries.last().unwrap();
    assert_eq!(last.stage.label(), "settled", "{last:?}");
    assert!(last.order_no.is_none(), "not claimed: {last:?}");
    assert_eq!(last.candidates.as_ref().map(Vec::len), Some(1), "listed: {last:?}");
}

/// The files under `dir` whose name ends with `suffix`, found at any depth.
fn files_ending(dir: &std::path::Path, suffix: &str) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_ending(&path, suffix));
        } else if path.to_string_lossy().ends_with(suffix) {
            found.push(path);
        }
    }
    found
}

/// On My eSIMs, each of `iccids` found by its whole ICCID and marked, then `t`, the first plan
/// offered to all, reviewed and paid (a pay key at once first, which pays nothing).
fn mark_and_pay(tmux: &Tmux, server: &Server, iccids: &[String], orders: u64) {
    tmux.keys(&["3"]);
    tmux.wait_for("total");
    for (n, iccid) in iccids.iter().enumerate() {
        tmux.keys(&["/"]);
        tmux.run(&["send-keys", "-t", "e2e", "-l", iccid]);
        tmux.keys(&["Enter"]);
        tmux.wait_for(&iccid[iccid.len() - 8..]);
        tmux.keys(&["Space", "Escape", "Escape"]);
        tmux.wait_for(&format!("{} marked", n + 1));
    }
    tmux.keys(&["t"]);
    tmux.wait_for(&format!("Top-ups the API offers for all {}", iccids.len()));
    tmux.keys(&["Enter"]);
    tmux.wait_for("Enter: pay");
    // A pay key at once is taken for the review key pressed twice: nothing is paid.
    tmux.keys(&["Enter"]);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(server.orders(), orders, "no payment from a double Enter");
    std::thread::sleep(Duration::from_millis(300));
    tmux.keys(&["Enter"]);
}

/// `esimdash topup --from FILE --yes` against `server`: whether it succeeded, and what it said.
fn topup_from(server: &Server, home: &tempfile::TempDir, file: &std::path::Path) -> (bool, String) {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "exec env {} {} topup --from {} --yes",
            server.env(home),
            env!("CARGO_BIN_EXE_esimdash"),
            file.display()
        ))
        .output()
        .unwrap();
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), said)
}

/// A bulk top-up in the dashboard, under way: what the tests of its end look at.
struct BulkRun {
    server: Server,
    home: tempfile::TempDir,
    tmux: Tmux,
    /// The dashboard's process id.
    pid: String,
    /// Acme's orders before it.
    orders: u64,
    /// The marked eSIMs, and the top-up they share.
    iccids: Vec<String>,
    slug: String,
}

/// Three eSIMs in use that share a top-up, marked and paid in the dashboard in tmux (session
/// `name`), once `payments` of them have reached the server (the last one's answer held).
/// `None` where tmux is missing, the test then skipped.
fn bulk_top_up_of_three(name: &str, payments: u64) -> Option<BulkRun> {
    let (server, home) = Server::for_test()?;
    let (iccids, slug) = server.in_use_sharing_a_topup(3);
    let tmux = Tmux::new(name);
    let pid = dashboard(&tmux, &server, &home);
    let orders = server.orders();
    mark_and_pay(&tmux, &server, &iccids, orders);
    server.wait_for_payments(payments);
    Some(BulkRun {
        server,
        home,
        tmux,
        pid,
        orders,
        iccids,
        slug,
    })
}

/// Three eSIMs marked (each found by its whole ICCID), `t`, one plan for all, paid; SIGKILL
/// while the server holds the second payment's answer. `esimdash topup --from` the rows file
/// the dashboard wrote then settles the payment in flight and pays the third: one top-up per
/// eSIM in all, counted at the server.
#[test]
fn a_bulk_top_up_killed_mid_run_is_finished_by_topup_from_its_rows_file() {
    let Some(run) = bulk_top_up_of_three("bulk", 2) else {
        return;
    };
    // SAFETY: kill(2) on the dashboard this test started.
    assert_eq!(unsafe { libc::kill(run.pid.parse().unwrap(), libc::SIGKILL) }, 0);
    assert_eq!(run.tmux.exit_code(), 137);
    // The second was carried out at the server; only its answer never reached the dashboard.
    assert_eq!(
        run.server.orders(),
        run.orders + 2,
        "the first placed, the second's answer held"
    );

    let rows = files_ending(run.home.path(), ".csv");
    assert_eq!(rows.len(), 1, "the rows file, no result yet: {rows:?}");
    let text = std::fs::read_to_string(&rows[0]).unwrap();
    for iccid in &run.iccids {
        assert!(text.contains(&format!("{iccid},{},1", run.slug)), "{text}");
    }
    let (ok, said) = topup_from(&run.server, &run.home, &rows[0]);
    assert!(ok, "{said}");
    assert_eq!(
        run.server.orders(),
        run.orders + 3,
        "one top-up per eSIM, none twice: {said}"
    );
    let result = files_ending(run.home.path(), ".result.csv");
    let result = std::fs::read_to_string(&result[0]).unwrap();
    assert_eq!(result.matches(",placed,").count(), 3, "{result}");
    let placed: Vec<String> = run.server.runtime.block_on(async {
        let newest = run
            .server
            .api()
            .orders(&OrderQuery {
                page_size: Some(3),
                ..OrderQuery::default()
            })
            .await
            .unwrap();
        newest.orders.iter().map(|o| o.iccid.as_str().to_string()).collect()
    });
    for iccid in &run.iccids {
        assert_eq!(placed.iter().filter(|p| *p == iccid).count(), 1, "{iccid}: {placed:?}");
    }
}

/// SIGTERM (as a system shutdown or `kill` sends it) while the first payment's answer is held:
/// the dashboard waits for that answer, starts no further eSIM, writes the result and exits;
/// `topup --from` the rows file then pays the two left, none twice.
#[test]
fn a_bulk_top_up_stopped_by_sigterm_ends_after_the_payment_in_flight_with_its_result() {
    let Some(run) = bulk_top_up_of_three("bulkterm", 1) else {
        return;
    };
    let stopped = Instant::now();
    // SAFETY: kill(2) on the dashboard this test started.
    assert_eq!(unsafe { libc::kill(run.pid.parse().unwrap(), libc::SIGTERM) }, 0);
    // Whatever its status, it has ended: what counts is what it did before.
    run.tmux.exit_code();
    assert!(
        stopped.elapsed() >= HOLD / 2,
        "it waited for the payment's answer: {:?}",
        stopped.elapsed()
    );
    assert_eq!(run.server.orders(), run.orders + 1, "the one in flight, no further");
    let result = files_ending(run.home.path(), ".result.csv");
    assert_eq!(result.len(), 1, "the result was written before the exit");
    let text = std::fs::read_to_string(&result[0]).unwrap();
    assert_eq!(text.matches(",placed,").count(), 1, "{text}");
    assert_eq!(text.matches(",not_paid,").count(), 2, "{text}");

    let rows: Vec<_> = files_ending(run.home.path(), ".csv")
        .into_iter()
        .filter(|p| !p.to_string_lossy().ends_with(".result.csv"))
        .collect();
    let (ok, said) = topup_from(&run.server, &run.home, &rows[0]);
    assert!(ok, "{said}");
    assert_eq!(run.server.orders(), run.orders + 3, "the two left, none twice: {said}");
}
