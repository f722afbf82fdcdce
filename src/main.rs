//! Parses the command line, starts logging, and dispatches.

use clap::{CommandFactory, Parser};
use esimdash::api::Client;
use esimdash::cli::{Cli, Command};
use esimdash::commands::{self, CommandError};
use esimdash::{config, logging};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init(cli.log_file.as_deref());
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("esimdash: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    runtime.block_on(run(cli))
}

async fn run(cli: Cli) -> ExitCode {
    let command = match &cli.command {
        Some(Command::Sandbox(args)) => {
            return match commands::run_sandbox(args).await {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("esimdash sandbox: {e}");
                    ExitCode::from(1)
                }
            };
        }
        Some(command) => command,
        None => {
            // The dashboard arrives with its own issue; until then, show what there is.
            let _ = Cli::command().print_help();
            return ExitCode::from(2);
        }
    };
    let result = async {
        let settings = config::resolve(&cli.connection)?;
        let client = Client::new(settings.base_url, &settings.credentials, settings.options)?;
        commands::run(command, &client, cli.json).await
    }
    .await;
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            report(&e, cli.json);
            ExitCode::from(e.exit_code())
        }
    }
}

fn report(error: &CommandError, as_json: bool) {
    if as_json {
        eprintln!("{}", error.to_json());
    } else {
        eprintln!("esimdash: {error}");
    }
}
