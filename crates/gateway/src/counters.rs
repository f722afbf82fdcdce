//! What the gateway counts on this replica since it started: requests, refusals and payments
//! per agent, failed sign-ins, the upstream budget used; written out by `metrics`.

use esimdash_domain::prometheus::{family, label};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
/// Why a request was refused, as the metrics label it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Refusal {
    Role,
    Cap,
    Repeat,
    Share,
}

impl Refusal {
    fn name(self) -> &'static str {
        match self {
            Refusal::Role => "role",
            Refusal::Cap => "cap",
            Refusal::Repeat => "repeat",
            Refusal::Share => "share",
        }
    }
}

#[derive(Default)]
pub(crate) struct Counters(Mutex<Counted>);

#[derive(Default)]
struct Counted {
    requests: BTreeMap<String, u64>,
    refusals: BTreeMap<(String, Refusal), u64>,
    payments: BTreeMap<(String, &'static str), u64>,
    /// Charges past what their payment held, by agent.
    over_held: BTreeMap<String, u64>,
    failed_sign_ins: u64,
    /// Reads sent to the API, and reads answered by another's read or a kept answer.
    upstream_reads: u64,
    shared_reads: u64,
    upstream_payments: u64,
    upstream_rate_limited: u64,
}

impl Counters {
    fn with(&self, count: impl FnOnce(&mut Counted)) {
        count(&mut esimdash_domain::sync::lock(&self.0));
    }

    pub(crate) fn request(&self, agent: &str) {
        self.with(|c| *c.requests.entry(agent.to_string()).or_default() += 1);
    }

    pub(crate) fn refused(&self, agent: &str, why: Refusal) {
        self.with(|c| *c.refusals.entry((agent.to_string(), why)).or_default() += 1);
    }

    pub(crate) fn over_held(&self, agent: &str) {
        self.with(|c| *c.over_held.entry(agent.to_string()).or_default() += 1);
    }

    pub(crate) fn failed_sign_in(&self) {
        self.with(|c| c.failed_sign_ins += 1);
    }

    pub(crate) fn read(&self, upstream: bool, status: Option<u16>) {
        self.with(|c| {
            if upstream {
                c.upstream_reads += 1;
            } else {
                c.shared_reads += 1;
            }
            if status == Some(429) {
                c.upstream_rate_limited += 1;
            }
        });
    }

    pub(crate) fn payment(&self, agent: &str, stage: &'static str, status: Option<u16>) {
        self.with(|c| {
            c.upstream_payments += 1;
            *c.payments.entry((agent.to_string(), stage)).or_default() += 1;
            if status == Some(429) {
                c.upstream_rate_limited += 1;
            }
        });
    }
}

impl Counters {
    /// The counted figures, in the Prometheus text format.
    pub(crate) fn write(&self, text: &mut String) {
        esimdash_domain::sync::lock(&self.0).write(text);
    }
}

impl Counted {
    fn write(&self, text: &mut String) {
        family(text, "esimdash_gateway_requests_total", "counter", "Requests by agent.");
        for (agent, n) in &self.requests {
            let _ = writeln!(
                text,
                "esimdash_gateway_requests_total{{agent=\"{}\"}} {n}",
                label(agent)
            );
        }
        family(
            text,
            "esimdash_gateway_refusals_total",
            "counter",
            "Requests refused, by agent and reason (role, cap, repeat, share).",
        );
        for ((agent, why), n) in &self.refusals {
            let (agent, why) = (label(agent), why.name());
            let _ = writeln!(
                text,
                "esimdash_gateway_refusals_total{{agent=\"{agent}\",reason=\"{why}\"}} {n}"
            );
        }
        family(
            text,
            "esimdash_gateway_payments_total",
            "counter",
            "Payments sent, by agent and outcome.",
        );
        for ((agent, stage), n) in &self.payments {
            let agent = label(agent);
            let _ = writeln!(
                text,
                "esimdash_gateway_payments_total{{agent=\"{agent}\",outcome=\"{stage}\"}} {n}"
            );
        }
        family(
            text,
            "esimdash_gateway_charges_over_held_total",
            "counter",
            "Payments the API charged more than the price the gateway read and held, by agent.",
        );
        for (agent, n) in &self.over_held {
            let _ = writeln!(
                text,
                "esimdash_gateway_charges_over_held_total{{agent=\"{}\"}} {n}",
                label(agent)
            );
        }
        let totals = [
            (
                "failed_sign_ins",
                self.failed_sign_ins,
                "Requests with a token that is no agent's.",
            ),
            ("upstream_reads", self.upstream_reads, "Reads sent to the API."),
            (
                "shared_reads",
                self.shared_reads,
                "Reads answered by another agent's read in flight or a kept answer: no request to the API.",
            ),
            (
                "upstream_payments",
                self.upstream_payments,
                "Payments sent to the API (resends under their key included).",
            ),
            (
                "upstream_rate_limited",
                self.upstream_rate_limited,
                "Answers 429 from the API.",
            ),
        ];
        for (name, n, help) in totals {
            let name = format!("esimdash_gateway_{name}_total");
            family(text, &name, "counter", help);
            let _ = writeln!(text, "{name} {n}");
        }
    }
}
