//! How a command gives its result: tables and sentences for people, JSON for scripts (`--json`,
//! errors too), or CSV for a list (`--csv`, to stdout or a file).

use super::error::CommandError;
use crate::cli::{Cli, Command, OutputArgs};
use serde_json::Value;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// `print!` that ends the command quietly on a closed pipe (see `write_out`).
macro_rules! out {
    ($($arg:tt)*) => { $crate::commands::output::write_out(format_args!($($arg)*)) };
}

/// `println!` for sentences, which may quote the server or the trail: terminal-safe
/// (`text::sanitize_lines`), and ending the command quietly on a closed pipe (see
/// `write_out`). Tables and QR drawings, made safe cell by cell, go through `out!`.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::commands::output::write_out(format_args!(
            "{}\n",
            esimdash_domain::text::sanitize_lines(&format!($($arg)*))
        ))
    };
}

pub(crate) use {out, outln};

/// How a command's result is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Form {
    Human,
    Json,
    /// To this file (`-o`), else to stdout.
    Csv(Option<PathBuf>),
}

/// A command's output: its form, and the earlier payments settled during the command (the
/// client's notices), which every JSON document it prints carries as `settledEarlier`, its
/// error too.
#[derive(Debug, Clone)]
pub struct Output {
    pub form: Form,
    settled: Arc<Mutex<Vec<Value>>>,
}

impl Output {
    pub fn new(form: Form) -> Output {
        Output {
            form,
            settled: Arc::default(),
        }
    }

    /// What the command line asks for, with nothing settled yet.
    pub fn of(cli: &Cli) -> Output {
        Output::new(Form::of(cli))
    }

    pub fn is_json(&self) -> bool {
        self.form == Form::Json
    }

    /// Keeps an earlier payment settled during this command, for `settledEarlier`.
    pub fn settled(&self, value: Value) {
        esimdash_domain::sync::lock(&self.settled).push(value);
    }

    /// Adds the earlier payments settled during this command to a JSON object printed for
    /// `--json`.
    pub fn add_settled_earlier(&self, value: &mut Value) {
        let settled = esimdash_domain::sync::lock(&self.settled);
        if let (false, Value::Object(map)) = (settled.is_empty(), value) {
            map.insert("settledEarlier".to_string(), Value::Array(settled.clone()));
        }
    }

    /// One JSON document on stdout, with the earlier payments settled during this command.
    pub(crate) fn print_json(&self, value: &impl serde::Serialize) -> Result<(), CommandError> {
        let mut value = serde_json::to_value(value).map_err(|e| CommandError::Usage(e.to_string()))?;
        self.add_settled_earlier(&mut value);
        // One compact line a document: what `jq`, `grep` and line-based scripts take best.
        let text = esimdash_domain::text::json_line(&value).map_err(|e| CommandError::Usage(e.to_string()))?;
        outln!("{text}");
        Ok(())
    }
}

impl Form {
    /// What the command line asks for. `--csv` applies to a list; a command that shows one
    /// record (`plans --slug`, `esims --iccid`) shows it to people.
    fn of(cli: &Cli) -> Form {
        if cli.json {
            return Form::Json;
        }
        let csv = match &cli.command {
            Some(
                Command::Plans { output, .. }
                | Command::Orders { output, .. }
                | Command::Esims { output, .. }
                | Command::Report { output, .. },
            ) => Some(output),
            _ => None,
        };
        match csv {
            Some(OutputArgs { csv: true, output }) => Form::Csv(output.clone()),
            _ => Form::Human,
        }
    }
}

/// Writes to stdout. When the reader has gone (a closed pipe: `esimdash … | head`), the command
/// ends quietly, as Unix tools do, where `print!` would panic; what it did before printing
/// (a payment, and its line in the trail) is done already.
pub(crate) fn write_out(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("esimdash: could not write the result: {e}");
        std::process::exit(74);
    }
}
