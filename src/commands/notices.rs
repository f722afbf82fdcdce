//! What a one-shot command says besides its result: the client's notices (an earlier payment
//! settled, waiting for another esimdash paying from the same account) on stderr, and in
//! `--json` output as `settledEarlier`; and how it ends on a stop signal: at once, unless a
//! payment waits for its answer, which is then waited for (at most the request timeout).

use super::{CommandError, Output};
use esimdash_api::signals::{self, Stop, Stops};
use esimdash_api::{Client, Notice, payments_in_flight};
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

/// A line on stderr, "esimdash: …", terminal-safe: what it names may be the server's or the
/// audit trail's text (a slug with escape codes, a line break), shown, never obeyed. Never
/// fails: after a hang-up there is no terminal.
pub fn say(text: &str) {
    let one_line = text.replace(['\r', '\n'], " ");
    let _ = writeln!(
        std::io::stderr(),
        "esimdash: {}",
        esimdash_domain::text::sanitize(&one_line)
    );
}

/// Prints the client's notices as they come.
pub fn listen(client: &Client, output: &Output) {
    let output = output.clone();
    let budget_told = BudgetTold::default();
    client.on_notice(Arc::new(move |notice| match notice {
        Notice::WaitingForLock => say("another esimdash is paying from this account; waiting for it to finish…"),
        Notice::TrailUnwritten(words) => say(&words),
        Notice::WaitingForBudget(wait) => budget_told.tell(wait, output.is_json()),
        Notice::Settled(settled) => {
            if output.is_json() {
                let value = settled.to_json();
                let line = esimdash_domain::text::json_line(&serde_json::json!({ "settled": value }));
                let _ = writeln!(std::io::stderr(), "{}", line.unwrap_or_default());
                output.settled(value);
            } else {
                say(&settled.sentence());
            }
        }
    }));
}

/// Says that requests wait for the key's budget: once, and again only after a quiet spell, so
/// that a long read's every request does not repeat it (its progress line counts down).
#[derive(Default)]
struct BudgetTold(std::sync::Mutex<Option<std::time::Instant>>);

impl BudgetTold {
    fn tell(&self, wait: Duration, json: bool) {
        let now = std::time::Instant::now();
        let mut last = esimdash_domain::sync::lock(&self.0);
        if last.is_some_and(|at| now.duration_since(at) < Duration::from_secs(60)) {
            return;
        }
        *last = Some(now);
        let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        if json {
            let line = serde_json::json!({ "waiting": { "seconds": seconds, "for": "rate_budget" } });
            let _ = writeln!(std::io::stderr(), "{line}");
            return;
        }
        say(&format!(
            "waiting {seconds} s for the API's rate limit: the key's budget is shared by every esimdash of this account on this machine"
        ));
    }
}

/// Runs `work` until it ends or a stop signal comes. With no payment in flight the signal ends
/// it at once (dropping it removes any file half-written). With one in flight, its answer is
/// waited for, so that its outcome is written to the trail; after a hang-up the terminal is
/// gone, so output goes to /dev/null. `patience` bounds the wait.
pub async fn until_done_or_stopped(
    work: impl Future<Output = Result<(), CommandError>>,
    patience: Duration,
) -> Result<(), CommandError> {
    let mut stops = Stops::new();
    tokio::pin!(work);
    let mut stopped: Option<(Stop, tokio::time::Instant)> = None;
    loop {
        let deadline = async {
            match stopped {
                Some((_, at)) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            result = &mut work => return result,
            stop = stops.next() => {
                if stop == Stop::HangUp {
                    signals::detach_stdio();
                }
                if payments_in_flight() == 0 {
                    return Err(CommandError::Interrupted(stop));
                }
                if stopped.is_none() {
                    say(&format!(
                        "{}: a payment is waiting for its answer; exiting once it is in and recorded (at most {} s)…",
                        stop.name(),
                        patience.as_secs()
                    ));
                    stopped = Some((stop, tokio::time::Instant::now() + patience));
                }
            }
            () = deadline => {
                let (stop, _) = stopped.unwrap_or((Stop::Interrupt, tokio::time::Instant::now()));
                say("no answer came in time; the next esimdash run settles this payment (see `esimdash audit`)");
                return Err(CommandError::Interrupted(stop));
            }
        }
    }
}
