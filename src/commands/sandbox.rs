//! `esimdash sandbox`: serve the contract until Ctrl-C or SIGTERM, after printing where and with
//! which demo credentials.

use crate::cli::SandboxArgs;
use crate::sandbox::seed::{DEMO_KEYS, DEMO_SESSIONS, RESELLER_NAMES};
use crate::sandbox::{SESSION_COOKIE, SandboxConfig, serve};
use std::net::SocketAddr;
use std::time::Duration;

fn banner(addr: SocketAddr, args: &SandboxArgs) -> String {
    let base = format!("http://{addr}/api/v1");
    let mut out = format!(
        "esimdash sandbox: the Reseller eSIM Sales API v1 with seeded data\n\
         base URL   {base}\n\
         seed {}, {} orders per reseller, {} requests per key per minute, {} ms added latency\n\n\
         reseller       access code       secret key        note\n",
        args.seed, args.orders, args.rate_limit, args.latency_ms
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
    out.push_str(&format!(
        "\ntry:  ESIMDASH_BASE_URL={base} ESIMDASH_ACCESS_CODE=ak_demo_acme ESIMDASH_SECRET_KEY=sk_demo_acme esimdash balance\n\
         stop: Ctrl-C\n"
    ));
    out
}

/// Ends on Ctrl-C or SIGTERM, whichever comes first.
async fn stop_signal() {
    let interrupt = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        _ = interrupt => {}
        _ = terminate => {}
    }
    tracing::info!("sandbox stopping");
}

pub async fn run_sandbox(args: &SandboxArgs) -> std::io::Result<()> {
    let config = SandboxConfig {
        seed: args.seed,
        orders: args.orders as usize,
        rate_limit: args.rate_limit,
        latency: Duration::from_millis(args.latency_ms),
        ..SandboxConfig::default()
    };
    serve(
        &config,
        args.addr,
        |addr| print!("{}", banner(addr, args)),
        stop_signal(),
    )
    .await?;
    println!("sandbox stopped");
    Ok(())
}
