//! `esimdash sandbox`: serve the contract until Ctrl-C or SIGTERM, after printing where and with
//! which demo credentials.

use crate::cli::SandboxArgs;
use crate::commands::output::{out, outln};
use esimdash_sandbox::seed::{DEMO_KEYS, DEMO_SESSIONS, RESELLER_NAMES};
use esimdash_sandbox::{SESSION_COOKIE, SandboxConfig, serve};
use std::net::SocketAddr;
use std::time::Duration;

/// The sandbox of `--demo`, started in this process: it serves until dropped.
pub type Demo = esimdash_sandbox::RunningSandbox;

/// Starts the demo's sandbox on a free loopback port.
pub async fn start_demo() -> Result<Demo, String> {
    esimdash_sandbox::spawn(&SandboxConfig::default(), ([127, 0, 0, 1], 0).into())
        .await
        .map_err(|e| format!("cannot start the demo sandbox: {e}"))
}

fn banner(addr: SocketAddr, args: &SandboxArgs) -> String {
    let scheme = if args.tls_cert.is_some() { "https" } else { "http" };
    let base = format!("{scheme}://{addr}/api/v1");
    let mut out = format!(
        "esimdash sandbox: the Reseller eSIM Sales API v1 with seeded data\n\
         base URL   {base}\n\
         seed {}, {} orders per reseller, {} requests per key per minute, {} ms added latency{}\n\n\
         reseller       access code       secret key        note\n",
        args.seed,
        args.orders,
        args.rate_limit,
        args.latency_ms,
        match (args.no_iccid_lookup, args.chaos > 0.0) {
            (false, false) => String::new(),
            (true, false) => ", lookup by ICCID off".to_string(),
            (lookup_off, true) => format!(
                "{}, chaos: {:.0}% of answers fail (500, 503, 429, reset, cut short, stalled)",
                if lookup_off { ", lookup by ICCID off" } else { "" },
                args.chaos * 100.0
            ),
        }
    );
    for k in DEMO_KEYS {
        out.push_str(&format!(
            "{:<14} {:<17} {:<17} {}\n",
            RESELLER_NAMES[k.reseller],
            k.access_code.unwrap_or("(legacy)"),
            k.secret_key,
            k.note
        ));
    }
    for (token, reseller) in DEMO_SESSIONS {
        out.push_str(&format!(
            "{:<14} session cookie    {SESSION_COOKIE}={token}\n",
            RESELLER_NAMES[*reseller]
        ));
    }
    // Over TLS, the client trusts the sandbox's certificate as a root of its own.
    let ca = args
        .tls_cert
        .as_ref()
        .map_or(String::new(), |cert| format!(" ESIMDASH_CA_FILE={}", cert.display()));
    out.push_str(&format!(
        "\ntry:  ESIMDASH_BASE_URL={base}{ca} ESIMDASH_ACCESS_CODE=ak_demo_acme ESIMDASH_SECRET_KEY=sk_demo_acme esimdash balance\n\
         stop: Ctrl-C\n"
    ));
    out
}

/// Listens for Ctrl-C and SIGTERM from the moment it is called, so that a signal sent right
/// after the banner is not lost, and ends on the first of them.
#[cfg(unix)]
fn stop_signal() -> impl Future<Output = ()> + Send + 'static {
    use tokio::signal::unix::{Signal, SignalKind, signal};
    let interrupt = signal(SignalKind::interrupt()).ok();
    let terminate = signal(SignalKind::terminate()).ok();
    let received = |s: Option<Signal>| async move {
        match s {
            Some(mut s) => {
                s.recv().await;
            }
            None => std::future::pending::<()>().await,
        }
    };
    async move {
        tokio::select! {
            _ = received(interrupt) => {}
            _ = received(terminate) => {}
        }
        tracing::info!("sandbox stopping");
    }
}

#[cfg(not(unix))]
fn stop_signal() -> impl Future<Output = ()> + Send + 'static {
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}

pub async fn run_sandbox(args: &SandboxArgs) -> std::io::Result<()> {
    let config = SandboxConfig {
        seed: args.seed,
        orders: args.orders as usize,
        rate_limit: args.rate_limit,
        latency: Duration::from_millis(args.latency_ms),
        iccid_lookup: !args.no_iccid_lookup,
        chaos: args.chaos,
        ..SandboxConfig::default()
    };
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some(esimdash_sandbox::tls::acceptor(cert, key).map_err(std::io::Error::other)?),
        _ => None,
    };
    let on_ready = |addr| out!("{}", banner(addr, args));
    serve(&config, args.addr, tls, on_ready, stop_signal()).await?;
    outln!("sandbox stopped");
    Ok(())
}
