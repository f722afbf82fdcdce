//! `esimdash check balance|attention`: one line and an exit status by the monitoring-plugin
//! conventions (Nagios, Icinga, Sensu, Zabbix's plugins): `ESIMDASH BALANCE WARNING - 85.00 USD |
//! balance=85.00;100:;20:`, exit 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (the API unreachable,
//! the credentials refused, an answer that cannot be read, thresholds that make no sense, a
//! threshold missing). Thresholds in the performance data are in the plugins' range syntax, so
//! that a grapher or a second opinion alerts exactly when the check does.

use crate::cli::CheckWhat;
use crate::commands::output::outln;
use crate::commands::{CommandError, Saved};
use esimdash_api::Client;
use esimdash_domain::money::format_amount;
use esimdash_front::config::Preferences;
use rust_decimal::Decimal;

/// A check's outcome, as the monitoring system reads it from the exit status (worse is more:
/// UNKNOWN stays apart, as it never comes from a comparison).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
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
pub async fn run(client: &Client, what: &CheckWhat, prefs: &Preferences, saved: &Saved) -> Result<(), CommandError> {
    let (name, outcome) = match what {
        CheckWhat::Balance {
            warning,
            critical,
            runway_warning,
            runway_critical,
            orders,
        } => {
            let amount = warning.zip(*critical);
            let runway = runway_warning.zip(*runway_critical);
            let max_age = super::attention::max_age(orders.max_age, prefs);
            ("BALANCE", balance(client, (amount, runway), max_age, saved).await)
        }
        CheckWhat::Attention {
            warning,
            critical,
            picture,
        } => {
            let means = super::attention::means(picture, prefs);
            let levels = (*warning, *critical);
            ("ATTENTION", attention(client, levels, means, prefs, saved).await)
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

/// Alert levels: below the first WARNING, below the second CRITICAL.
type Levels = (Decimal, Decimal);

/// The state of `value` against levels it must stay above.
fn below(value: Decimal, (warning, critical): Levels) -> State {
    if value < critical {
        State::Critical
    } else if value < warning {
        State::Warning
    } else {
        State::Ok
    }
}

/// Levels the right way round (critical at most warning), else why not, naming the flags
/// (`{flags}warning`, `{flags}critical`).
fn ordered(levels: Option<Levels>, flags: &str, of: &str) -> Result<(), String> {
    match levels {
        Some((warning, critical)) if critical > warning => Err(format!(
            "{flags}critical {critical} is above {flags}warning {warning}: {of} goes critical below the warning level"
        )),
        _ => Ok(()),
    }
}

/// The balance below its levels (`amount`, USD), and the days it lasts at the last seven days'
/// pace below theirs (`runway`, told from orders kept no longer than `max_age`): the worse of
/// the two.
async fn balance(
    client: &Client,
    (amount, runway): (Option<Levels>, Option<Levels>),
    max_age: chrono::Duration,
    saved: &Saved,
) -> Outcome {
    ordered(amount, "--", "a balance")?;
    ordered(runway, "--runway-", "a runway")?;
    let balance = client.balance().await.map_err(|e| e.to_string())?;
    let shown = format_amount(balance);
    let mut state = State::Ok;
    let mut text = format!("{shown} USD");
    let mut perfdata = Vec::new();
    if let Some(levels) = amount {
        state = state.max(below(balance, levels));
        // `100:` is the plugins' "alert below 100", which is what the check does.
        perfdata.push(format!("balance={shown};{}:;{}:", levels.0, levels.1));
    } else {
        perfdata.push(format!("balance={shown}"));
    }
    if let Some(levels) = runway {
        let now = chrono::Utc::now();
        let told = super::money::runway(client, saved, balance, now, max_age).await;
        let (r, orders_read) = match told {
            Ok(told) => (told.runway, told.orders_read),
            // The balance's own state still holds: a runway not told never hides a CRITICAL.
            Err(e) => {
                let state = if state == State::Ok { State::Unknown } else { state };
                text.push_str(&format!(", runway not known: {e}"));
                return Ok((state, text, Some(perfdata.join(" "))));
            }
        };
        match r.days {
            Some(days) => {
                state = state.max(below(days, levels));
                let today = now.with_timezone(&chrono::Local).date_naive();
                // The figure the levels are held against, as it is: "~3 days" beside a
                // CRITICAL for "below 3" (2.9) would contradict itself.
                let until = r.until.map_or_else(String::new, |u| {
                    format!(" (until {})", esimdash_front::format::money::day(u, today))
                });
                text.push_str(&format!(
                    ", lasts {days} days{until} at {} USD a day",
                    format_amount(esimdash_domain::money::round_cents(r.per_day))
                ));
                perfdata.push(format!("runway_days={days};{}:;{}:", levels.0, levels.1));
            }
            // Nothing spent: the balance lasts, and there is no number of days to graph.
            None => text.push_str(&format!(
                ", nothing spent in the last {} days",
                esimdash_ledger::sums::PACE_DAYS
            )),
        }
        let age = (now - orders_read).num_seconds().max(0);
        text.push_str(&super::money::orders_age(now, orders_read).map_or_else(String::new, |a| format!(", {a}")));
        perfdata.push(format!("orders_age={age}s"));
    }
    Ok((state, text, Some(perfdata.join(" "))))
}

/// At least `warning` eSIMs needing attention: WARNING; at least `critical`: CRITICAL. From
/// the kept picture when young enough (its age in the text and as `age` in the performance
/// data), else the usable eSIMs read live within the budget (`super::attention::counted`).
async fn attention(
    client: &Client,
    (warning, critical): (u64, u64),
    means: super::attention::Means,
    prefs: &Preferences,
    saved: &Saved,
) -> Outcome {
    if critical < warning {
        return Err(format!(
            "--critical {critical} is below --warning {warning}: more eSIMs needing attention are worse"
        ));
    }
    let rule = prefs.attention;
    let counted = super::attention::counted(client, saved.index.as_ref(), rule, means, chrono::Utc::now()).await?;
    let count = counted.count;
    let (from, age) = match counted.age {
        Some(age) => (
            format!(", from the kept picture, {} old", esimdash_domain::text::age(age)),
            format!(" age={}s", age.num_seconds()),
        ),
        None => (", read now".to_string(), " age=0s".to_string()),
    };
    let state = if count >= critical {
        State::Critical
    } else if count >= warning {
        State::Warning
    } else {
        State::Ok
    };
    Ok((
        state,
        format!("{count} eSIMs need attention ({}){from}", rule.describe()),
        Some(format!(
            "attention={count};{};{}{age}",
            at_least(warning),
            at_least(critical)
        )),
    ))
}
