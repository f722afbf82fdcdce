//! `esimdash check balance|attention`: one line and an exit status by the monitoring-plugin
//! conventions (Nagios, Icinga, Sensu, Zabbix's plugins): `ESIMDASH BALANCE WARNING - 85.00 USD |
//! balance=85.00;100;20`, exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (the API unreachable,
//! the credentials refused, an answer that cannot be read, thresholds that make no sense).

use crate::api::Client;
use crate::api::model::EsimQuery;
use crate::api::pages::{Listing, Page};
use crate::cli::CheckWhat;
use crate::commands::CommandError;
use crate::commands::output::outln;
use crate::config::Preferences;
use crate::domain::status::StatusFilter;
use crate::format::money::format_amount;
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
    let (state, text) = outcome.unwrap_or_else(|why| (State::Unknown, why));
    outln!("ESIMDASH {name} {} - {text}", state.word());
    match state {
        State::Ok => Ok(()),
        other => Err(CommandError::Check(other as u8)),
    }
}

/// Why a check could not tell, on one line.
fn unknown(e: impl std::fmt::Display) -> String {
    e.to_string().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Below `warning`: WARNING; below `critical`: CRITICAL.
async fn balance(client: &Client, warning: Decimal, critical: Decimal) -> Result<(State, String), String> {
    if critical > warning {
        return Err(format!(
            "--critical {critical} is above --warning {warning}: a balance goes critical below the warning level"
        ));
    }
    let balance = client.balance().await.map_err(unknown)?;
    let state = if balance < critical {
        State::Critical
    } else if balance < warning {
        State::Warning
    } else {
        State::Ok
    };
    let amount = format_amount(balance);
    Ok((state, format!("{amount} USD | balance={amount};{warning};{critical}")))
}

/// At least `warning` eSIMs needing attention: WARNING; at least `critical`: CRITICAL. Read
/// from the usable eSIMs only (the server's `active` filter), every page of them.
async fn attention(
    client: &Client,
    warning: u64,
    critical: u64,
    prefs: &Preferences,
) -> Result<(State, String), String> {
    if critical < warning {
        return Err(format!(
            "--critical {critical} is below --warning {warning}: more eSIMs needing attention are worse"
        ));
    }
    let rule = prefs.attention;
    let now = chrono::Utc::now();
    let query = EsimQuery {
        status: StatusFilter::Active,
        ..EsimQuery::default()
    };
    let mut count = 0u64;
    Listing::Esims(query)
        .read_all(client, |page, _| {
            if let Page::Esims(esims) = page {
                count += esims.iter().filter(|e| rule.needs_esim(*e, now)).count() as u64;
            }
            Ok::<(), crate::api::ApiError>(())
        })
        .await
        .map_err(unknown)?;
    let state = if count >= critical {
        State::Critical
    } else if count >= warning {
        State::Warning
    } else {
        State::Ok
    };
    Ok((
        state,
        format!(
            "{count} eSIMs need attention ({}) | attention={count};{warning};{critical}",
            rule.describe()
        ),
    ))
}
