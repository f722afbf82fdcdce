//! Parses the command line, starts logging, and dispatches: the dashboard (no command), a
//! one-shot command, or the sandbox. `--demo` points the first two at an in-process sandbox.

use clap::Parser;
use esimdash::api::{BaseUrl, Client, ClientOptions, Credentials};
use esimdash::cli::{Cli, Command};
use esimdash::commands::{self, CommandError};
use esimdash::sandbox::{self, RunningSandbox, SandboxConfig};
use esimdash::{config, inventory, logging, tui};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let log_path = logging::init(cli.log_file.as_deref());
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("esimdash: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    runtime.block_on(run(cli, log_path))
}

async fn run(cli: Cli, log_path: Option<PathBuf>) -> ExitCode {
    if let Some(Command::Sandbox(args)) = &cli.command {
        return match commands::run_sandbox(args).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("esimdash sandbox: {e}");
                ExitCode::from(1)
            }
        };
    }
    if let Some(result) = cli.command.as_ref().and_then(|c| commands::run_local(c, cli.json)) {
        return match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(&e, cli.json),
        };
    }
    // The demo sandbox serves for as long as this function runs.
    let demo = if cli.demo {
        match sandbox::spawn(&SandboxConfig::default(), ([127, 0, 0, 1], 0).into()).await {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("esimdash: cannot start the demo sandbox: {e}");
                return ExitCode::from(1);
            }
        }
    } else {
        None
    };
    let (client, account) = match connect(&cli, demo.as_ref()) {
        Ok(c) => c,
        Err(e) => return fail(&e, cli.json),
    };
    match &cli.command {
        None => {
            let settings = match config::dashboard_settings(&cli.connection) {
                Ok(s) => s,
                Err(e) => return fail(&CommandError::Config(e), cli.json),
            };
            match tui::run(
                client,
                tui::Options {
                    demo: cli.demo,
                    keymap: settings.keymap,
                    mouse: settings.mouse,
                    clipboard: settings.clipboard,
                    log_path,
                    preferences: settings.preferences,
                    inventory: account
                        .filter(|_| settings.inventory_cache && !cli.no_cache)
                        .and_then(|account| {
                            let dir = inventory::store::default_dir()?;
                            Some(tui::InventoryFile {
                                path: inventory::store::path_in(&dir, &account),
                                account,
                            })
                        }),
                },
            )
            .await
            {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("esimdash: the terminal failed: {e}");
                    ExitCode::from(1)
                }
            }
        }
        Some(command) => {
            let result = match config::preferences(&cli.connection) {
                Ok(prefs) => commands::run(command, &client, &prefs, cli.json).await,
                Err(e) => Err(CommandError::Config(e)),
            };
            match result {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => fail(&e, cli.json),
            }
        }
    }
}

/// The client for the demo sandbox, or from flags, environment and config file.
/// The client, and which account it is for (a key naming its saved inventory index; `None`
/// for the demo, whose sandbox is new every run).
fn connect(cli: &Cli, demo: Option<&RunningSandbox>) -> Result<(Client, Option<String>), CommandError> {
    let (base_url, credentials, mut options) = match demo {
        Some(sandbox) => (
            BaseUrl::parse(&sandbox.base_url()).map_err(|e| CommandError::Usage(e.to_string()))?,
            Credentials::pair("ak_demo_acme", "sk_demo_acme"),
            ClientOptions {
                read_only: config::read_only_reason(&cli.connection, None)?,
                audit: config::audit_trail("demo"),
                ..ClientOptions::default()
            },
        ),
        None => {
            let settings = config::resolve(&cli.connection)?;
            (settings.base_url, settings.credentials, settings.options)
        }
    };
    if cli.command.is_none() {
        // The dashboard shows a countdown for every 429 instead of sleeping through it.
        options.max_retry_wait = Duration::ZERO;
    }
    let account = demo
        .is_none()
        .then(|| inventory::store::account_key(base_url.as_str(), credentials.access_code.as_deref().unwrap_or("")));
    Ok((Client::new(base_url, &credentials, options)?, account))
}

fn fail(error: &CommandError, as_json: bool) -> ExitCode {
    if let CommandError::Io(e) = error
        && e.kind() == std::io::ErrorKind::BrokenPipe
    {
        // The reader (`| head`) has all it wanted: nothing to report, as with any Unix tool.
        return ExitCode::from(141);
    }
    if as_json {
        eprintln!("{}", error.to_json());
    } else {
        eprintln!("esimdash: {error}");
    }
    ExitCode::from(error.exit_code())
}
