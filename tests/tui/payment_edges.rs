//! The dashboard in a real terminal at the edges of a payment: the terminal hung up (an SSH
//! connection dropped) while the server holds the payment's answer, and the window that tells
//! what became of a payment an earlier process was killed in the middle of.

use crate::holding_proxy::HoldingProxy;
use crate::terminal_e2e::Tmux;
use esimdash::api::model::{EsimQuery, OrderQuery};
use esimdash::api::{BaseUrl, Client, ClientOptions, Credentials};
use esimdash::sandbox::{RunningSandbox, SandboxConfig, spawn};
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
            let slug = api.topup_plans(&iccid).await.unwrap()[0].slug.clone();
            (iccid, slug)
        })
    }

    /// Until the payment has reached the server (its answer held by the proxy).
    fn wait_for_the_payment(&self) {
        let started = Instant::now();
        while self.proxy.writes() == 0 {
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

/// The dashboard against `server` in tmux at 80×24; returns its process id.
fn dashboard(tmux: &Tmux, server: &Server, home: &tempfile::TempDir) -> String {
    let pid_file = home.path().join("pid");
    let command = format!(
        "{env} sh -c 'echo $$ > {pid}; exec {bin}'; echo EXITED $?; sleep 30",
        env = server.env(home),
        pid = pid_file.display(),
        bin = env!("CARGO_BIN_EXE_esimdash"),
    );
    tmux.run(&["new-session", "-d", "-s", "e2e", "-x", "80", "-y", "24", &command]);
    tmux.wait_for(" USD");
    std::fs::read_to_string(pid_file).unwrap().trim().to_string()
}

fn alive(pid: &str) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| s.contains(") Z "))
}

fn stages(home: &tempfile::TempDir) -> Vec<(String, Option<String>)> {
    let trail = esimdash::audit::read(&home.path().join("state/esimdash/audit.jsonl")).unwrap();
    trail
        .entries
        .iter()
        .map(|e| (e.stage.label().to_string(), e.order_no.clone()))
        .collect()
}

#[test]
fn a_hang_up_mid_payment_waits_for_the_answer_and_records_it() {
    if !crate::common::tmux_available("a_hang_up_mid_payment_waits_for_the_answer_and_records_it") {
        return;
    }
    let server = Server::start();
    let home = tempfile::tempdir().unwrap();
    let tmux = Tmux {
        socket: format!("esimdash-hup-{}", std::process::id()),
    };
    let pid = dashboard(&tmux, &server, &home);
    let orders = server.orders();
    tmux.keys(&["3"]);
    tmux.wait_for("total");
    tmux.keys(&["t"]);
    tmux.wait_for("Plans offered by the API");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Enter: pay");
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
    if !crate::common::tmux_available("a_payment_killed_mid_flight_is_told_in_a_window_at_the_next_start") {
        return;
    }
    let server = Server::start();
    let home = tempfile::tempdir().unwrap();
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

    let tmux = Tmux {
        socket: format!("esimdash-told-{}", std::process::id()),
    };
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
    // This machine never saw the server echo a key: settled from the order list, order named.
    let stages = stages(&home);
    let last = stages.last().unwrap();
    assert_eq!(last.0, "settled", "{stages:?}");
    assert!(last.1.is_some(), "{stages:?}");
}
