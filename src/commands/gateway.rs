//! `esimdash gateway`: serve the API to a team's agents, and manage the agents, through the
//! gateway crate. The reseller's key is resolved here, as for every command.

use crate::cli::{AgentWhat, ConnectionArgs, GatewayPlace, GatewayServeArgs, GatewayWhat};
use crate::commands::output::{out, outln};
use crate::commands::table::Table;
use crate::commands::{CommandError, Output};
use esimdash_api::Client;
use esimdash_domain::money::format_amount;
use esimdash_gateway::agents::{Agent, Role, Token, check_name, hash_secret};
use esimdash_gateway::config::{DEFAULT_LISTEN, File, READ_FRESH, default_index_dir};
use esimdash_gateway::{Metrics, Settings, Store};
use serde_json::json;
use std::time::Duration;

pub async fn run(what: &GatewayWhat, connection: &ConnectionArgs, output: &Output) -> Result<(), CommandError> {
    match what {
        GatewayWhat::Serve(args) if connection.demo => serve_demo(args, connection).await,
        GatewayWhat::Serve(args) => serve(args, connection).await,
        GatewayWhat::Agent { what } => agent(what, connection, output).await,
    }
}

fn failed(e: impl std::fmt::Display) -> CommandError {
    CommandError::Gateway(e.to_string())
}

/// The config file's `[gateway]` table.
fn file(connection: &ConnectionArgs) -> Result<File, CommandError> {
    match esimdash_front::config::gateway_section(connection)? {
        (Some(table), path) => File::of(table, path.as_deref()).map_err(CommandError::Usage),
        (None, _) => Ok(File::default()),
    }
}

/// Where `/metrics` is served, if anywhere: a loopback address, or another only when said
/// public (it asks no token, and names agents and their spend).
fn metrics_address(args: &GatewayServeArgs, file: &File) -> Result<Option<std::net::SocketAddr>, CommandError> {
    let at = args.metrics_listen.or(file.metrics_listen);
    match at {
        Some(addr) if !(addr.ip().is_loopback() || args.metrics_public || file.metrics_public) => {
            Err(CommandError::Usage(format!(
                "--metrics-listen {addr} is not a loopback address, and /metrics asks no token: whoever reaches it reads agents' names, requests and spend. Use 127.0.0.1, or add --metrics-public (metrics_public = true) for a private network"
            )))
        }
        _ => Ok(at),
    }
}

/// The store named by `--store`, the file, or the default place (made if missing).
fn store_spec(place: &GatewayPlace, file: &File) -> Result<String, CommandError> {
    if let Some(spec) = place.store.clone().or_else(|| file.store.clone()) {
        return Ok(spec);
    }
    let path = esimdash_gateway::config::default_store()
        .ok_or_else(|| failed("no --store given and no home directory to keep the store in"))?;
    Ok(path.display().to_string())
}

async fn open(place: &GatewayPlace, connection: &ConnectionArgs) -> Result<Store, CommandError> {
    let file = file(connection)?;
    Store::open(&store_spec(place, &file)?).await.map_err(failed)
}

/// `gateway serve --demo`: a sandbox in this process as the upstream (the demo reseller's key),
/// a store of its own in a folder gone at the end, and three agents made for it, their tokens
/// printed: a team to try, touching no real account and no store of the user's.
async fn serve_demo(args: &GatewayServeArgs, connection: &ConnectionArgs) -> Result<(), CommandError> {
    // A mistake in the settings is said before any demo agent is made and printed.
    metrics_address(args, &file(connection)?)?;
    let sandbox = super::start_demo().await.map_err(failed)?;
    let dir = tempfile::tempdir()?;
    let mut connection = connection.clone();
    connection.demo = false;
    connection.base_url = Some(sandbox.base_url());
    connection.auth = None;
    connection.access_code = Some("ak_demo_acme".to_string());
    connection.secret_key = Some("sk_demo_acme".to_string());
    let mut args = args.clone();
    args.place.store = Some(dir.path().join("gateway.db").display().to_string());
    let store = open(&args.place, &connection).await?;
    let mut seats = String::from("demo agents (tokens of this run only):\n");
    for (name, role, cap) in [
        ("ana", Role::SUPPORT, Some(rust_decimal::Decimal::TEN)),
        ("vic", Role::VIEWER, None),
        ("ada", Role::ADMIN, None),
    ] {
        let token = add_agent(&store, name, role, cap).await?;
        let cap = cap.map_or_else(
            || "no cap of its own".to_string(),
            |c| format!("{} USD a day", format_amount(c)),
        );
        // A line each, so that 80 columns show them whole.
        seats.push_str(&format!(
            "  {name} ({}, {cap}):\n    ESIMDASH_ACCESS_CODE={}\n    ESIMDASH_SECRET_KEY={}\n",
            role.name(),
            token.access_code,
            token.secret_key
        ));
    }
    announce(format_args!("{seats}"));
    serve(&args, &connection).await
}

/// A new agent in `store`, and its token (shown once by the caller).
async fn add_agent(
    store: &Store,
    name: &str,
    role: Role,
    daily_cap: Option<rust_decimal::Decimal>,
) -> Result<Token, CommandError> {
    let token = Token::new().map_err(failed)?;
    let agent = Agent {
        name: name.to_string(),
        access_code: token.access_code.clone(),
        secret_hash: hash_secret(&token.secret_key),
        role,
        daily_cap,
        created_at: chrono::Utc::now().timestamp(),
        revoked_at: None,
    };
    store.add_agent(agent).await.map_err(failed)?;
    Ok(token)
}

async fn serve(args: &GatewayServeArgs, connection: &ConnectionArgs) -> Result<(), CommandError> {
    let file = file(connection)?;
    let mut connection = connection.clone();
    if let Some(upstream) = args.upstream.clone().or_else(|| file.upstream.clone()) {
        connection.base_url = Some(upstream);
    }
    let mut reseller = esimdash_front::config::resolve(&connection)?;
    if let Some(limit) = file.rate_limit {
        reseller.options.rate_limit = limit;
    }
    // The gateway's journal is its own: the seat's audit trail is not written from here.
    reseller.options.audit = None;
    let rate_limit = reseller.options.rate_limit;
    let upstream = Client::new(reseller.base_url.clone(), &reseller.credentials, reseller.options)?;
    let store = store_spec(&args.place, &file)?;
    let settings = Settings {
        listen: args.listen.or(file.listen).unwrap_or_else(|| DEFAULT_LISTEN.into()),
        index_dir: file.index_dir.clone().or_else(|| default_index_dir(&store)),
        store,
        team_daily_cap: file.team_daily_cap,
        support_can_buy: file.support_can_buy,
        allow_http: file.allow_http,
        account: reseller.credentials.account(),
        rate_limit,
        read_fresh: file.read_fresh_secs.map_or(READ_FRESH, Duration::from_secs),
        tls: file.tls().map_err(CommandError::Usage)?,
    };
    let metrics_at = metrics_address(args, &file)?;
    // Every agent's assistant reaches the tools of `esimdash mcp` at /mcp, under its token.
    let assistant = super::mcp::AtGateway {
        prefs: esimdash_front::config::preferences(&connection)?,
    };
    let running = esimdash_gateway::start_with(settings.clone(), upstream, Some(assistant))
        .await
        .map_err(|e| match e {
            // An address in use, plain http off loopback, certificates that do not load: the
            // set-up's, as a mistake in the config is (exit 2).
            esimdash_gateway::StartError::Setup(why) => CommandError::Usage(why),
            esimdash_gateway::StartError::Failed(why) => failed(why),
        })?;
    announce(format_args!(
        "esimdash gateway: serving {}://{}/api/v1 to agents\nupstream   {}\nstore      {}\nagents:    esimdash gateway agent add NAME --role support --daily-cap 50{}\nstop:      Ctrl-C\n",
        settings.scheme(),
        running.addr,
        reseller.base_url.as_str(),
        esimdash_gateway::store::shown(&settings.store),
        args.place.store.as_deref().map_or(String::new(), |s| format!(
            " --store {}",
            esimdash_gateway::store::shown(s)
        ))
    ));
    let metrics = match metrics_at {
        Some(addr) => Some(serve_metrics(addr, running.metrics()).await?),
        None => None,
    };
    let mut signals = esimdash_api::signals::Stops::new();
    let stop = signals.next().await;
    tracing::info!("gateway stopping ({})", stop.name());
    if let Some(metrics) = metrics {
        metrics.abort();
    }
    running.stop().await;
    announce(format_args!("gateway stopped\n"));
    Ok(())
}

/// What the server says of itself on stdout. A server outlives whoever reads that (a closed
/// pipe, a terminal gone): a write that fails is dropped, never a reason to stop serving.
fn announce(text: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_fmt(text).and_then(|()| out.flush());
}

/// `/metrics` at `addr`, through the same bounded server as `esimdash metrics --listen`.
async fn serve_metrics(
    addr: std::net::SocketAddr,
    metrics: Metrics,
) -> Result<tokio::task::JoinHandle<()>, CommandError> {
    let document = super::listen::Document::new("/metrics", "text/plain; version=0.0.4", move || {
        let metrics = metrics.clone();
        async move { metrics.render().await }
    });
    let listener = tokio::net::TcpListener::bind(addr).await?;
    announce(format_args!("metrics    http://{}/metrics\n", listener.local_addr()?));
    Ok(tokio::spawn(super::listen::serve(
        listener,
        document,
        super::listen::Bounds::SCRAPES,
    )))
}

async fn agent(what: &AgentWhat, connection: &ConnectionArgs, output: &Output) -> Result<(), CommandError> {
    match what {
        AgentWhat::Add {
            name,
            role,
            daily_cap,
            place,
        } => {
            check_name(name).map_err(CommandError::Usage)?;
            let role: Role = role.parse().map_err(CommandError::Usage)?;
            if role == Role::VIEWER && daily_cap.is_some() {
                return Err(CommandError::Usage(
                    "a viewer pays for nothing, so a daily cap means nothing on its seat: give the cap to a support or admin agent, or leave --daily-cap out".to_string(),
                ));
            }
            // The config file read once: for the store, and for the address the seat is told.
            let file = file(connection)?;
            let store = Store::open(&store_spec(place, &file)?).await.map_err(failed)?;
            let token = add_agent(&store, name, role, *daily_cap).await?;
            if output.is_json() {
                return output.print_json(&json!({
                    "name": name,
                    "role": role.name(),
                    "dailyCap": daily_cap.map(format_amount),
                    "accessCode": token.access_code,
                    "secretKey": token.secret_key,
                }));
            }
            let cap = daily_cap.map_or_else(
                || "no cap of its own".to_string(),
                |c| format!("daily cap {} USD", format_amount(c)),
            );
            // Where the gateway serves as configured here (its [gateway] listen and TLS): the
            // address a seat on this machine uses, else the one the team reaches it by.
            let scheme = if file.tls().ok().flatten().is_some() {
                "https"
            } else {
                "http"
            };
            let listen = file.listen.unwrap_or_else(|| DEFAULT_LISTEN.into());
            outln!(
                "agent {name} added ({}, {cap}). Its token, shown this once:\n  access code  {}\n  secret key   {}\nOn the agent's seat: ESIMDASH_BASE_URL={scheme}://{listen}/api/v1 ESIMDASH_ACCESS_CODE={} ESIMDASH_SECRET_KEY=<the secret key> esimdash",
                role.name(),
                token.access_code,
                token.secret_key,
                token.access_code
            );
            Ok(())
        }
        AgentWhat::List { place } => list(&open(place, connection).await?, output).await,
        AgentWhat::Revoke { name, place } => {
            let store = open(place, connection).await?;
            if !store
                .revoke(name, chrono::Utc::now().timestamp())
                .await
                .map_err(failed)?
            {
                return Err(CommandError::NotFound(format!("no agent named {name:?}")));
            }
            said(output, name, "revoked: its token is refused from its next request on")
        }
        AgentWhat::SetCap { name, cap, place } => {
            let cap = match cap.trim() {
                "none" => None,
                text => Some(esimdash_domain::money::parse_decimal(text).map_err(CommandError::Usage)?),
            };
            let store = open(place, connection).await?;
            if !store.set_cap(name, cap).await.map_err(failed)? {
                return Err(CommandError::NotFound(format!("no agent named {name:?}")));
            }
            let now = cap.map_or_else(
                || "has no daily cap of its own now".to_string(),
                |c| format!("may spend {c} USD a day from now on"),
            );
            said(output, name, &now)
        }
    }
}

fn said(output: &Output, name: &str, what: &str) -> Result<(), CommandError> {
    if output.is_json() {
        return output.print_json(&json!({ "name": name, "done": what }));
    }
    outln!("agent {name} {what}");
    Ok(())
}

async fn list(store: &Store, output: &Output) -> Result<(), CommandError> {
    let agents = store.agents().await.map_err(failed)?;
    let time = |t: i64| {
        chrono::DateTime::from_timestamp(t, 0)
            .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
            .unwrap_or_default()
    };
    if output.is_json() {
        let rows: Vec<_> = agents
            .iter()
            .map(|a| {
                json!({
                    "name": a.name,
                    "role": a.role.name(),
                    "dailyCap": a.daily_cap.map(format_amount),
                    "accessCode": a.access_code,
                    "createdAt": time(a.created_at),
                    "revokedAt": a.revoked_at.map(time),
                })
            })
            .collect();
        return output.print_json(&json!({ "agents": rows }));
    }
    if agents.is_empty() {
        outln!("no agents yet: esimdash gateway agent add NAME --role viewer|support|admin");
        return Ok(());
    }
    let mut table = Table::of(&["NAME", "ROLE", "DAILY CAP", "ACCESS CODE", "STATE"]).right(&["DAILY CAP"]);
    for a in &agents {
        table.row(vec![
            a.name.clone(),
            a.role.name().to_string(),
            a.daily_cap.map_or_else(|| "-".to_string(), format_amount),
            a.access_code.clone(),
            a.revoked_at
                .map_or_else(|| "active".to_string(), |t| format!("revoked {}", time(t))),
        ]);
    }
    out!("{}", table.render());
    Ok(())
}
