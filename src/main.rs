//! Parses the command line, starts logging, and dispatches: the dashboard (no command), a
//! one-shot command, or the sandbox. `--demo` points the first two at an in-process sandbox.

#![warn(clippy::too_many_lines)]

use esimdash::cli::{Cli, Command};
use esimdash::commands::{self, CommandError, Output};
use esimdash::logging;
use esimdash_front::config;
use esimdash_front::session::{Accounts, Opened};
use esimdash_tui as tui;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = command_line();
    let log_path = logging::init(cli.log_file.as_deref());
    // A one-shot command waits on one request at a time: one thread does, and starts sooner
    // than a pool (docs/performance.md). The dashboard and what serves until stopped get the pool.
    let one_shot = matches!(&cli.command, Some(c) if !c.serves()) && !cli.connection.demo;
    let runtime = if one_shot {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    } else {
        tokio::runtime::Runtime::new()
    };
    let runtime = match runtime {
        Ok(r) => r,
        Err(e) => {
            eprintln!("esimdash: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    runtime.block_on(run(cli, log_path))
}

async fn run(cli: Cli, log_path: Option<PathBuf>) -> ExitCode {
    let output = Output::of(&cli);
    #[cfg(feature = "sandbox")]
    if let Some(Command::Sandbox(args)) = &cli.command {
        return match commands::run_sandbox(args).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("esimdash sandbox: {e}");
                ExitCode::from(1)
            }
        };
    }
    #[cfg(feature = "gateway")]
    if let Some(Command::Gateway { what }) = &cli.command {
        return ended(commands::run_gateway(what, &cli.connection, &output).await, &output);
    }
    if let Some(result) = cli.command.as_ref().and_then(|c| commands::run_local(c, &output)) {
        return ended(result, &output);
    }
    // The demo sandbox serves for as long as this function runs.
    let demo = if cli.connection.demo {
        match commands::start_demo().await {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("esimdash: {e}");
                return ExitCode::from(1);
            }
        }
    } else {
        None
    };
    let accounts = match &demo {
        Some(sandbox) => Accounts::Demo {
            base_url: sandbox.base_url(),
            args: cli.connection.clone(),
        },
        None => Accounts::Config(cli.connection.clone()),
    };
    let opened = match accounts.open(None, cli.command.is_none()) {
        Ok(o) => o,
        Err(e) => return checked(&cli, Err(e.into()), &output),
    };
    match &cli.command {
        None => dashboard(&cli, opened, accounts, log_path, &output).await,
        Some(command) => {
            let result = match config::preferences(&cli.connection) {
                Ok(prefs) => {
                    let at = index_dir(&cli, &prefs).zip(opened.index_key.clone());
                    let saved = commands::Saved {
                        index: at
                            .as_ref()
                            .map(|(dir, account)| esimdash_inventory::kept::at(dir, account)),
                        at,
                    };
                    if let Some(index) = saved.index.clone() {
                        // Every eSIM the command reads goes into the saved index as it comes.
                        let tap = move |read: &esimdash_api::EsimsRead<'_>| index.feed(read.esims, read.place);
                        opened.client.on_esims_read(std::sync::Arc::new(tap));
                    }
                    let result = commands::run_session(command, &opened.client, &prefs, &saved, &output).await;
                    if let Some(index) = &saved.index {
                        if !index.flush() {
                            tracing::warn!("the last pages read were not all kept in the inventory index");
                        }
                        if let Some(trouble) = index.trouble() {
                            commands::say(&trouble);
                        }
                    }
                    result
                }
                Err(e) => Err(CommandError::Config(e)),
            };
            checked(&cli, result, &output)
        }
    }
}

/// This process's command line; on a mistake, clap's message and exit status.
fn command_line() -> Cli {
    Cli::try_from_args(std::env::args_os()).unwrap_or_else(|e| {
        // A monitoring check's mistake is UNKNOWN (3) by the plugin conventions, said on
        // the one line the monitor reads; clap's own status (2) would read as CRITICAL.
        if e.use_stderr() && std::env::args_os().skip(1).any(|a| a == "check") {
            let text = e.to_string();
            // The first paragraph: the mistake and what it names (the missing flags are on
            // the lines under it), without the usage and the tips after it.
            let mistake = text.split("\n\n").next().unwrap_or_default();
            let mistake = mistake.trim_start_matches("error: ");
            println!("{}", commands::check_unknown_line(mistake));
            let _ = e.print();
            std::process::exit(3);
        }
        e.exit()
    })
}

/// A check that could not run (no credentials, a config file in error) is UNKNOWN, said on its
/// one line, as monitoring systems read it; any other command ends as usual.
fn checked(cli: &Cli, result: Result<(), CommandError>, output: &Output) -> ExitCode {
    match (&cli.command, result) {
        (Some(Command::Check { .. }), Err(e)) if !matches!(e, CommandError::Check(_)) => {
            println!("{}", commands::check_unknown_line(&e.to_string()));
            ExitCode::from(3)
        }
        (_, result) => ended(result, output),
    }
}

/// The dashboard on the account opened, with what the config file says of keys, mouse,
/// clipboard and the saved index. A mistake there stops it before the terminal is taken.
async fn dashboard(
    cli: &Cli,
    opened: Opened,
    accounts: Accounts,
    log_path: Option<PathBuf>,
    output: &Output,
) -> ExitCode {
    let settings = match config::dashboard_settings(&cli.connection) {
        Ok(s) => s,
        Err(e) => return fail(&CommandError::Config(e), output),
    };
    let keymap = match tui::keymap::Keymap::from_config(&settings.keys) {
        Ok(k) => k,
        Err(e) => return fail(&CommandError::Config(e), output),
    };
    let index_dir = index_dir(cli, &settings.preferences);
    let profiles = accounts.names(settings.profiles);
    let options = tui::Options {
        demo: cli.connection.demo,
        keymap,
        mouse: settings.mouse,
        clipboard: settings.clipboard,
        log_path,
        preferences: settings.preferences,
        index_dir,
        accounts,
        profiles,
    };
    match tui::run(opened, options).await {
        Ok(tui::Outcome::Done) => ExitCode::SUCCESS,
        // As the commands: a script that opened the dashboard learns the key was refused.
        Ok(tui::Outcome::CredentialsRefused) => ExitCode::from(commands::EXIT_CREDENTIALS_REFUSED),
        Err(e) => {
            eprintln!("esimdash: the terminal failed: {e}");
            ExitCode::from(1)
        }
    }
}

/// Where the account's inventory index is kept, unless `--no-cache` or `inventory_cache = false`.
fn index_dir(cli: &Cli, prefs: &config::Preferences) -> Option<PathBuf> {
    (prefs.inventory_cache && !cli.no_cache)
        .then(esimdash_inventory::store::default_dir)
        .flatten()
}

fn ended(result: Result<(), CommandError>, output: &Output) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(&e, output),
    }
}

fn fail(error: &CommandError, output: &Output) -> ExitCode {
    if let CommandError::Check(state) = error {
        // Its line is printed already, as monitoring systems read it.
        return ExitCode::from(*state);
    }
    if let CommandError::Io(e) = error
        && e.kind() == std::io::ErrorKind::BrokenPipe
    {
        // The reader (`| head`) has all it wanted: nothing to report, as with any Unix tool.
        return ExitCode::from(141);
    }
    // Written without panicking: after a hang-up there is no terminal to write to.
    let mut stderr = std::io::stderr();
    let _ = if output.is_json() {
        let mut json = error.to_json();
        output.add_settled_earlier(&mut json);
        writeln!(
            stderr,
            "{}",
            esimdash_domain::text::json_line(&json).unwrap_or_else(|_| json.to_string())
        )
    } else {
        // The server's words and the trail's may be quoted: shown as text, never obeyed.
        writeln!(
            stderr,
            "esimdash: {}",
            esimdash_domain::text::sanitize_lines(&error.to_string())
        )
    };
    ExitCode::from(error.exit_code())
}
