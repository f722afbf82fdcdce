//! `esimdash check balance|attention`: one line and an exit status by the monitoring-plugin
//! conventions (Nagios, Icinga, Sensu, Zabbix's plugins): `ESIMDASH BALANCE WARNING - 85.00 USD |
//! balance=85.00;100:;20:`, exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (the API unreachable,
//! the credentials refused, an answer that cannot be read, thresholds that make no sense, a
//! threshold missing). Thresholds in the performance data are in the plugins' range syntax, so
//! that a grapher or a second opinion alerts exactly when the check does.

use crate::cli::CheckWhat;
use crate::commands::CommandError;
use crate::commands::output::outln;
use crate::config::Preferences;
use esimdash_api::Client;
use esimdash_domain::money::format_amount;
use rust_decimal::Decimal;

/// A check's outcome, as the monitoring system reads it from the exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Ok = 0,
    Warning = 1,
    Critical = 2,
    Unknown = 3,
}

impl State {
    fn word(self) -> &'static str {
        match self {
            State::Ok => "OK",
            State::Warning => "WARNING",
            State::Critical => "CRITICAL",
            State::Unknown => "UNKNOWN",
        }
    }
}

/// Runs the check and prints its line; a state other than OK comes back as
/// `CommandError::Check`, whose exit status it is (and which prints nothing more).
pub async fn run(client: &Client, what: &CheckWhat, prefs: &Preferences) -> Result<(), CommandError> {
    let (name, outcome) = match what {
        CheckWhat::Balance { warning, critical } => ("BALANCE", balance(client, *warning, *critical).await),
        CheckWhat::Attention { warning, critical } => {
            ("ATTENTION", attention(client, *warning, *critical, prefs).await)
        }
    };
    let (state, text, perfdata) = outcome.unwrap_or_else(|why| (State::Unknown, why, None));
    outln!("{}", plugin_line(name, state, &text, perfdata.as_deref()));
    match state {
        State::Ok => Ok(()),
        other => Err(CommandError::Check(other as u8)),
    }
}

/// A check's state, what it says and its performance data.
type Outcome = Result<(State, String, Option<String>), String>;

/// `ESIMDASH {name} {state} - {text}`, then ` | {perfdata}`: the one line a monitoring system
/// reads. `text` may hold what is not ours (a server's message, a value typed on the command
/// line), so it is folded onto the line and its `|` become `/`: the plugins' parsers take
/// everything after the first `|` as performance data, and a server must not add any.
fn plugin_line(name: &str, state: State, text: &str, perfdata: Option<&str>) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "/");
    let text = esimdash_domain::text::sanitize(&text);
    match perfdata {
        Some(perfdata) => format!("ESIMDASH {name} {} - {text} | {perfdata}", state.word()),
        None => format!("ESIMDASH {name} {} - {text}", state.word()),
    }
}

/// `ESIMDASH CHECK UNKNOWN - {why}`: a check that could not start (a usage mistake, no
/// credentials), said before it knows what it checks.
pub fn unknown_line(why: &str) -> String {
    plugin_line("CHECK", State::Unknown, why, None)
}

/// The range that alerts exactly from `n` up (a count's "at least n"): a plugin's range `N`
/// alerts above N, so "at least n" is `n-1` for a whole count; every count alerts at 0.
fn at_least(n: u64) -> String {
    n.checked_sub(1)
        .map_or_else(|| "~:-1".to_string(), |below| below.to_string())
}

/// Below `warning`: WARNING; below `critical`: CRITICAL.
async fn balance(client: &Client, warning: Decimal, critical: Decimal) -> Outcome {
    if critical > warning {
        return Err(format!(
            "--critical {critical} is above --warning {warning}: a balance goes critical below the warning level"
        ));
    }
    let balance = client.balance().await.map_err(|e| e.to_string())?;
    let state = if balance < critical {
        State::Critical
    } else if balance < warning {
        State::Warning
    } else {
        State::Ok
    };
    let amount = format_amount(balance);
    // `100:` is the plugins' "alert below 100", which is what the check does.
    let perfdata = format!("balance={amount};{warning}:;{critical}:");
    Ok((state, format!("{amount} USD"), Some(perfdata)))
}

/// At least `warning` eSIMs needing attention: WARNING; at least `critical`: CRITICAL. Read
/// from the usable eSIMs only (the server's `active` filter), every page of them.
async fn attention(client: &Client, warning: u64, critical: u64, prefs: &Preferences) -> Outcome {
    if critical < warning {
        return Err(format!(
            "--critical {critical} is below --warning {warning}: more eSIMs needing attention are worse"
        ));
    }
    let rule = prefs.attention;
    let (count, _) = super::attention::count(client, rule, chrono::Utc::now())
        .await
        .map_err(|e| e.to_string())?;
    let state = if count >= critical {
        State::Critical
    } else if count >= warning {
        State::Warning
    } else {
        State::Ok
    };
    Ok((
        state,
        format!("{count} eSIMs need attention ({})", rule.describe()),
        Some(format!(
            "attention={count};{};{}",
            at_least(warning),
            at_least(critical)
        )),
    ))
}
