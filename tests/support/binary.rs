//! The real binary as a user or a script runs it: a clean environment (no config or state of
//! the developer's), pointed at a server by the environment, and what it printed.

use std::process::{Command, Output};

/// A sandbox of `orders` orders a reseller allowing `rate_limit` requests a minute, and a home
/// for the binary: what a test at a reseller's size starts from.
pub async fn sandbox_of(orders: usize, rate_limit: u32) -> (esimdash_sandbox::RunningSandbox, tempfile::TempDir) {
    let config = esimdash_sandbox::SandboxConfig {
        orders,
        rate_limit,
        ..esimdash_sandbox::SandboxConfig::default()
    };
    let sandbox = esimdash_sandbox::spawn(&config, "127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    (sandbox, tempfile::tempdir().unwrap())
}

/// The binary with a clean environment: its config, state and logs in `home`.
pub fn esimdash(home: &tempfile::TempDir) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_esimdash"));
    cmd.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .env("XDG_STATE_HOME", home.path().join("state"));
    cmd
}

/// As the demo reseller Acme, at the API at `base_url`.
pub fn acme_at<'a>(cmd: &'a mut Command, base_url: &str) -> &'a mut Command {
    cmd.env("ESIMDASH_BASE_URL", base_url)
        .env("ESIMDASH_ACCESS_CODE", "ak_demo_acme")
        .env("ESIMDASH_SECRET_KEY", "sk_demo_acme")
}

/// The binary as Acme at the API at `base_url`, with `args`, run off the async runtime: the
/// build, run and wait that most tests of a command repeat.
pub async fn run_acme_at<I, S>(home: &tempfile::TempDir, base_url: &str, args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let mut cmd = esimdash(home);
    acme_at(&mut cmd, base_url).args(args);
    run(cmd).await
}

/// Runs the command off the async runtime (a sandbox may live on it).
pub async fn run(mut cmd: Command) -> Output {
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// That the command printed `text` on stdout; fails showing all it printed there.
#[track_caller]
pub fn assert_stdout_has(out: &Output, text: &str) {
    assert!(stdout(out).contains(text), "{}", stdout(out));
}

/// That the command printed `text` on stderr; fails showing all it printed there.
#[track_caller]
pub fn assert_stderr_has(out: &Output, text: &str) {
    assert!(stderr(out).contains(text), "{}", stderr(out));
}

pub fn stdout_json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("stdout is JSON ({e}): {}", stdout(out)))
}

/// The audit trail's lines in `home`, as JSON.
pub fn trail(home: &tempfile::TempDir) -> Vec<serde_json::Value> {
    let path = home.path().join("state/esimdash/audit.jsonl");
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}
