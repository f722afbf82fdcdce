//! Reads passed on for the team under one upstream budget: identical reads in flight are sent
//! once and their answer shared, an answer serves the same read again for a few seconds (until
//! a payment changes the account), and each agent's reads that do reach the API are held to
//! its share of the key's budget: over it, the agent is told to wait (429 with Retry-After)
//! rather than spend the others' share.

use esimdash_api::relay::Relayed;
use esimdash_api::{ApiError, Client, Endpoint};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::OnceCell;

/// The window the shares are counted in: the key's limit is per minute.
const WINDOW: Duration = Duration::from_secs(60);

type Answer = Result<Relayed, ApiError>;

pub(crate) struct Reads {
    /// Reads under way, by what they ask: a second asker waits for the first's answer.
    in_flight: Mutex<HashMap<String, Arc<OnceCell<Answer>>>>,
    /// Answers kept for `fresh`, by what they asked.
    kept: Mutex<HashMap<String, (Instant, Relayed)>>,
    /// Counts the times money moved (`forget`): a read sent before that is not kept after it.
    generation: std::sync::atomic::AtomicU64,
    fresh: Duration,
    shares: Mutex<Shares>,
    /// The key's requests per minute, which the shares divide.
    limit: u32,
}

/// How an agent's read was answered.
pub(crate) enum Read {
    /// `upstream`: this read went to the API (else another's answer served it).
    Answered { answer: Answer, upstream: bool },
    /// Over its share: wait this long.
    OverShare { wait: Duration, share: u32 },
}

#[derive(Default)]
struct Shares {
    window_start: Option<Instant>,
    /// Reads sent upstream this window, per agent.
    sent: HashMap<String, u32>,
    /// When each agent last asked for a read: the active ones share the budget.
    last_asked: HashMap<String, Instant>,
}

impl Reads {
    pub(crate) fn new(limit: u32, fresh: Duration) -> Self {
        Self {
            in_flight: Mutex::default(),
            kept: Mutex::default(),
            generation: std::sync::atomic::AtomicU64::new(0),
            fresh,
            shares: Mutex::default(),
            limit: limit.max(1),
        }
    }

    /// What a read is known by: the same question has the same key.
    pub(crate) fn key(endpoint: Endpoint, query: Option<&str>) -> String {
        format!("{} {}?{}", endpoint.method, endpoint.path, query.unwrap_or_default())
    }

    /// An answer made here rather than read (a lookup the team index answered), kept as a read's.
    pub(crate) fn keep(&self, key: String, answer: Relayed) {
        esimdash_domain::sync::lock(&self.kept).insert(key, (Instant::now(), answer));
    }

    /// `endpoint` with `query`, for `agent`.
    pub(crate) async fn get(&self, upstream: &Client, agent: &str, endpoint: Endpoint, query: Option<&str>) -> Read {
        let key = Self::key(endpoint, query);
        if let Some(answer) = self.kept_answer(&key) {
            return Read::Answered {
                answer: Ok(answer),
                upstream: false,
            };
        }
        let (cell, first) = {
            let mut in_flight = esimdash_domain::sync::lock(&self.in_flight);
            match in_flight.get(&key) {
                Some(cell) => (cell.clone(), false),
                None => {
                    let cell = Arc::new(OnceCell::new());
                    in_flight.insert(key.clone(), cell.clone());
                    (cell, true)
                }
            }
        };
        let send = || upstream.relay(endpoint, query, None, None);
        if !first {
            // Should the first asker go (its agent hung up), the cell lets one of the others send it.
            let answer = cell.get_or_init(send).await.clone();
            return Read::Answered {
                answer,
                upstream: false,
            };
        }
        let _in_flight = InFlight { reads: self, key: &key };
        if let Err((wait, share)) = self.take_share(agent) {
            // Out of the map before anyone else waits on it: a share refused is this agent's alone.
            drop(_in_flight);
            return Read::OverShare { wait, share };
        }
        let generation = self.generation.load(std::sync::atomic::Ordering::SeqCst);
        let answer = cell.get_or_init(send).await.clone();
        if let Ok(a) = &answer
            && a.status == 200
            && generation == self.generation.load(std::sync::atomic::Ordering::SeqCst)
        {
            esimdash_domain::sync::lock(&self.kept).insert(key.clone(), (Instant::now(), a.clone()));
        }
        Read::Answered { answer, upstream: true }
    }

    pub(crate) fn kept_answer(&self, key: &str) -> Option<Relayed> {
        let mut kept = esimdash_domain::sync::lock(&self.kept);
        let now = Instant::now();
        kept.retain(|_, (at, _)| now.duration_since(*at) < self.fresh);
        kept.get(key).map(|(_, answer)| answer.clone())
    }

    /// A payment changed the account: no answer read before it is given again.
    pub(crate) fn forget(&self) {
        self.generation.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        esimdash_domain::sync::lock(&self.kept).clear();
    }

    /// Counts a read against the agent's share of this window: the key's limit divided among
    /// the agents that asked within the last minute. `Err`: how long until the next window.
    fn take_share(&self, agent: &str) -> Result<(), (Duration, u32)> {
        let mut shares = esimdash_domain::sync::lock(&self.shares);
        let now = Instant::now();
        let start = *shares.window_start.get_or_insert(now);
        if now.duration_since(start) >= WINDOW {
            shares.window_start = Some(now);
            shares.sent.clear();
        }
        shares.last_asked.insert(agent.to_string(), now);
        shares.last_asked.retain(|_, at| now.duration_since(*at) < WINDOW);
        let active = u32::try_from(shares.last_asked.len()).unwrap_or(u32::MAX).max(1);
        let share = (self.limit / active).max(1);
        let sent = shares.sent.entry(agent.to_string()).or_default();
        if *sent >= share {
            let left = WINDOW.saturating_sub(now.duration_since(shares.window_start.unwrap_or(now)));
            return Err((left.max(Duration::from_secs(1)), share));
        }
        *sent += 1;
        Ok(())
    }
}

/// A read under way: out of the map when its asker is done, or gone.
struct InFlight<'a> {
    reads: &'a Reads,
    key: &'a str,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        esimdash_domain::sync::lock(&self.reads.in_flight).remove(self.key);
    }
}
