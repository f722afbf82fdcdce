//! The gateway's figures in the Prometheus text format (the same form as `esimdash metrics`):
//! this replica's counters (`counters`), today's spend against the caps (from the store, so
//! every replica tells the same), and how much of the list the team index covers.

use crate::state::Gateway;
use esimdash_domain::prometheus::{family, label};
use std::fmt::Write;

/// The figures now.
pub(crate) async fn render(gateway: &Gateway) -> String {
    let mut text = String::new();
    gateway.counters.write(&mut text);
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
