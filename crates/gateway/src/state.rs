//! What every rule of the gateway reads: its store, the upstream client, its settings, the
//! shared reads, the team index, its counters and sign-in tables; and what a seat is (its cap
//! left today, as `gateway/me` and the seat header say it).

use crate::agents::Agent;
use crate::config::Settings;
use crate::counters::{Counters, Refusal};
use crate::index::TeamIndex;
use crate::reads::{Read, Reads};
use crate::refused::Refused;
use crate::sign_in::SignIns;
use crate::store::Store;
use esimdash_api::relay::{Relayed, Seat};
use esimdash_api::{Client, Endpoint};
use esimdash_domain::money::format_amount;
use rust_decimal::Decimal;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

pub(crate) struct Gateway {
    pub store: Store,
    pub upstream: Client,
    pub settings: Settings,
    pub reads: Reads,
    pub index: Option<Arc<TeamIndex>>,
    pub counters: Counters,
    pub sign_ins: SignIns,
    /// Each seat's turn to pay (`turn`).
    turns: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

impl Gateway {
    pub(crate) fn new(store: Store, upstream: Client, settings: Settings, index: Option<Arc<TeamIndex>>) -> Gateway {
        Gateway {
            store,
            reads: Reads::new(settings.rate_limit, settings.read_fresh),
            upstream,
            settings,
            index,
            counters: Counters::default(),
            sign_ins: SignIns::default(),
            turns: Mutex::default(),
        }
    }

    /// The seat's turn to pay: one payment of a seat at a time on this replica.
    pub(crate) fn turn(&self, agent: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut turns = self.turns.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        turns.entry(agent.to_string()).or_default().clone()
    }

    /// A read for an agent (shared, kept or sent), counted.
    pub(crate) async fn read(&self, agent: &str, endpoint: Endpoint, query: Option<&str>) -> Result<Relayed, Refused> {
        match self.reads.get(&self.upstream, agent, endpoint, query).await {
            Read::Answered { answer, upstream } => {
                self.counters.read(upstream, answer.as_ref().ok().map(|a| a.status));
                answer.map_err(|e| Refused::upstream(&e))
            }
            // An agent past its share of the key's budget waits, not the others.
            Read::OverShare { wait, share } => {
                self.counters.refused(agent, Refusal::Share);
                Err(Refused::wait(
                    format!("Rate limit exceeded: your share of the team's budget is {share} reads a minute"),
                    wait,
                ))
            }
        }
    }

    /// What the agent and the team have held today, and what is left of their caps.
    async fn today(&self, agent: &Agent) -> Result<Today, Refused> {
        let now = crate::now();
        let (own, team) = self
            .store
            .held_on(&agent.name, &crate::store::day_of(now))
            .await
            .map_err(|e| Refused::store(&e))?;
        let left = |cap: Option<Decimal>, spent: Decimal| cap.map(|c| (c - spent).max(Decimal::ZERO));
        Ok(Today {
            own,
            left: left(agent.daily_cap, own),
            team_left: left(self.settings.team_daily_cap, team),
            now,
        })
    }

    /// Who the agent is, and what is left of its cap today (the seat header).
    pub(crate) async fn seat(&self, agent: &Agent) -> Option<Seat> {
        let left = match agent.daily_cap {
            Some(_) => self.today(agent).await.ok()?.left,
            None => None,
        };
        Some(Seat {
            name: agent.name.clone(),
            role: agent.role.name().to_string(),
            cap: agent.daily_cap,
            left,
        })
    }

    /// `GET /gateway/me`: who the token is, and what is left of its cap today.
    pub(crate) async fn me(&self, agent: &Agent) -> Result<serde_json::Value, Refused> {
        let today = self.today(agent).await?;
        Ok(serde_json::json!({
            "agent": agent.name,
            "role": agent.role.name(),
            "dailyCap": agent.daily_cap.map(format_amount),
            "spentToday": format_amount(today.own),
            "leftToday": today.left.map(format_amount),
            "teamDailyCap": self.settings.team_daily_cap.map(format_amount),
            "teamLeftToday": today.team_left.map(format_amount),
            "resetsAt": crate::store::next_reset(today.now).to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        }))
    }
}

struct Today {
    own: Decimal,
    left: Option<Decimal>,
    team_left: Option<Decimal>,
    now: i64,
}
