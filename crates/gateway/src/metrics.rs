//! What the gateway counts, and its figures in the Prometheus text format (the same form as
//! `esimdash metrics`): requests, refusals and payments per agent, today's spend against the
//! caps (from the store, so every replica tells the same), the upstream budget used, and how
//! much of the list the team index covers. Counters are this replica's since it started.

use crate::server::Gateway;
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

/// The figures now.
pub(crate) async fn render(gateway: &Gateway) -> String {
    let mut text = String::new();
    esimdash_domain::sync::lock(&gateway.counters.0).write(&mut text);
    family(
        &mut text,
        "esimdash_gateway_rate_limit",
        "gauge",
        "The key's requests a minute, shared by the agents.",
    );
    let _ = writeln!(text, "esimdash_gateway_rate_limit {}", gateway.settings.rate_limit);
    spend(gateway, &mut text).await;
    if let Some(index) = &gateway.index {
        let (held, total) = index.coverage();
        family(
            &mut text,
            "esimdash_gateway_index_esims",
            "gauge",
            "eSIMs the team index holds.",
        );
        let _ = writeln!(text, "esimdash_gateway_index_esims {held}");
        family(
            &mut text,
            "esimdash_gateway_index_list_total",
            "gauge",
            "eSIMs in the list, as last read.",
        );
        let _ = writeln!(text, "esimdash_gateway_index_list_total {total}");
        family(
            &mut text,
            "esimdash_gateway_index_reads_total",
            "counter",
            "Pages the team index asked the API for.",
        );
        let _ = writeln!(text, "esimdash_gateway_index_reads_total {}", index.pages_read());
    }
    text
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

/// Today's spend per agent and the caps, from the store.
async fn spend(gateway: &Gateway, text: &mut String) {
    let day = crate::store::day_of(crate::now());
    let (Ok(agents), Ok(spent)) = (gateway.store.agents().await, gateway.store.day_totals(&day).await) else {
        family(
            text,
            "esimdash_gateway_store_up",
            "gauge",
            "Whether the store answered.",
        );
        let _ = writeln!(text, "esimdash_gateway_store_up 0");
        return;
    };
    family(
        text,
        "esimdash_gateway_spent_today_usd",
        "gauge",
        "USD charged or held today (UTC), by agent.",
    );
    for agent in &agents {
        let n = spent.get(&agent.name).copied().unwrap_or_default();
        let _ = writeln!(
            text,
            "esimdash_gateway_spent_today_usd{{agent=\"{}\"}} {n}",
            label(&agent.name)
        );
    }
    family(
        text,
        "esimdash_gateway_daily_cap_usd",
        "gauge",
        "Agents' daily caps in USD (agents without one are left out).",
    );
    for agent in &agents {
        if let Some(cap) = agent.daily_cap {
            let _ = writeln!(
                text,
                "esimdash_gateway_daily_cap_usd{{agent=\"{}\"}} {cap}",
                label(&agent.name)
            );
        }
    }
    if let Some(cap) = gateway.settings.team_daily_cap {
        family(
            text,
            "esimdash_gateway_team_daily_cap_usd",
            "gauge",
            "The team's daily cap in USD.",
        );
        let _ = writeln!(text, "esimdash_gateway_team_daily_cap_usd {cap}");
    }
    family(
        text,
        "esimdash_gateway_store_up",
        "gauge",
        "Whether the store answered.",
    );
    let _ = writeln!(text, "esimdash_gateway_store_up 1");
}
