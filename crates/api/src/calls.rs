//! The latest requests a client sent, each with when and what came back: what a triage's
//! escalation pack lists, so that the provider's support sees what was asked and answered.
//! Only the latest are kept (a bound), and a reader is told when older ones were let go.

use chrono::{DateTime, Utc};
use std::collections::VecDeque;
use std::sync::Mutex;

/// How many requests are kept.
const KEPT: usize = 200;

/// A request as sent: when, the method and URL as shown (no secret), and the answer's status
/// or why none came.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Call {
    pub at: DateTime<Utc>,
    pub request: String,
    pub answer: String,
}

/// Requests since a mark, and how many of them were let go before they could be read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Calls {
    pub calls: Vec<Call>,
    pub let_go: u64,
}

#[derive(Debug, Default)]
pub(crate) struct Log(Mutex<Kept>);

#[derive(Debug, Default)]
struct Kept {
    calls: VecDeque<Call>,
    made: u64,
}

impl Log {
    pub(crate) fn note(&self, call: Call) {
        let mut kept = esimdash_domain::sync::lock(&self.0);
        if kept.calls.len() == KEPT {
            kept.calls.pop_front();
        }
        kept.calls.push_back(call);
        kept.made += 1;
    }

    pub(crate) fn made(&self) -> u64 {
        esimdash_domain::sync::lock(&self.0).made
    }

    pub(crate) fn since(&self, mark: u64) -> Calls {
        let kept = esimdash_domain::sync::lock(&self.0);
        let wanted = kept.made.saturating_sub(mark);
        let have = kept.calls.len() as u64;
        let skip = have.saturating_sub(wanted);
        Calls {
            calls: kept.calls.iter().skip(skip as usize).cloned().collect(),
            let_go: wanted.saturating_sub(have),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(n: u64) -> Call {
        Call {
            at: Utc::now(),
            request: format!("GET /{n}"),
            answer: "200".into(),
        }
    }

    #[test]
    fn the_calls_since_a_mark_are_the_latest_and_a_gap_is_said() {
        let log = Log::default();
        log.note(call(0));
        let mark = log.made();
        for n in 1..=3 {
            log.note(call(n));
        }
        let since = log.since(mark);
        assert_eq!(
            since.calls.iter().map(|c| c.request.as_str()).collect::<Vec<_>>(),
            ["GET /1", "GET /2", "GET /3"]
        );
        assert_eq!(since.let_go, 0);
        for n in 0..KEPT as u64 {
            log.note(call(n));
        }
        let since = log.since(mark);
        assert_eq!(since.calls.len(), KEPT);
        assert_eq!(since.let_go, 3);
    }
}
