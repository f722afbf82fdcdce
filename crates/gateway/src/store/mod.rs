//! Where the gateway keeps its agents and its journal of payments: one SQLite file by default,
//! Postgres for several replicas. Every rule that must hold across replicas (a cap, a repeat,
//! an agent's idempotency key) is checked and recorded in one exclusive transaction here.

mod postgres;
mod requests;
mod schema;
mod sql;
mod sqlite;
mod totals;

use crate::agents::{Agent, Role};
pub use requests::{KeptRequest, Times};
use rust_decimal::Decimal;
use sql::{Row, Sql, Value, exclusive};
use std::collections::{BTreeMap, HashSet};
use std::str::FromStr;
use std::sync::{Arc, Mutex};

#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the gateway's store: {0}")]
    Open(String),
    #[error("the gateway's store failed: {0}")]
    Database(String),
    #[error("{0}")]
    Refused(String),
}

/// The store, shared by every request of this process. Its database calls block, so each runs
/// off the runtime's threads.
#[derive(Clone)]
pub struct Store {
    db: Arc<Mutex<Box<dyn Sql>>>,
    shown: String,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.shown)
    }
}

/// A payment's stage in the journal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stage {
    /// Reserved against the caps and recorded; not sent yet.
    Asked,
    /// Sent upstream; its outcome not known yet.
    Sent,
    /// Placed: `charged` is what the wallet paid.
    Charged,
    /// Not placed: its reservation freed.
    Released,
    /// Sent, and nothing tells whether it was placed: its reservation stays held.
    #[default]
    Unknown,
}

impl Stage {
    /// As the journal and the metrics say it.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Asked => "asked",
            Stage::Sent => "sent",
            Stage::Charged => "charged",
            Stage::Released => "released",
            Stage::Unknown => "unknown",
        }
    }

    fn parse(s: &str) -> Stage {
        match s {
            "asked" => Stage::Asked,
            "sent" => Stage::Sent,
            "charged" => Stage::Charged,
            "released" => Stage::Released,
            _ => Stage::Unknown,
        }
    }

    /// Whether it counts against a cap: all but a released one.
    fn holds_money(self) -> bool {
        self != Stage::Released
    }
}

/// What a payment is, as an agent asked it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    pub agent: String,
    /// `topup` or `order`.
    pub kind: String,
    pub iccid: Option<String>,
    pub slug: String,
    pub qty: u32,
    /// The body sent upstream, as JSON text.
    pub body: String,
    pub agent_key: Option<String>,
    /// What the caps hold for it: the plan's price times the quantity.
    pub amount: Decimal,
}

/// One payment of the journal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Payment {
    pub id: String,
    pub asked: Asked,
    pub upstream_key: String,
    pub stage: Stage,
    pub charged: Option<Decimal>,
    pub asked_at: i64,
    pub sent_at: Option<i64>,
    pub settled_at: Option<i64>,
    /// The upstream's answer, passed on to the agent again when it resends its key.
    pub status: Option<u16>,
    pub answer: Option<String>,
    pub order_no: Option<String>,
    pub note: Option<String>,
}

impl Payment {
    /// A payment as just asked: journalled, not sent. Its key upstream is its own, never an
    /// agent's: two agents' keys cannot meet at the API.
    pub fn asked(id: String, asked: Asked, now: i64) -> Payment {
        Payment {
            upstream_key: format!("esimdash-gateway-{id}"),
            id,
            asked,
            stage: Stage::Asked,
            charged: None,
            asked_at: now,
            sent_at: None,
            settled_at: None,
            status: None,
            answer: None,
            order_no: None,
            note: None,
        }
    }

    /// What it holds against a cap.
    pub fn held(&self) -> Decimal {
        if !self.stage.holds_money() {
            return Decimal::ZERO;
        }
        self.charged.unwrap_or(self.asked.amount)
    }
}

/// The caps a reservation must stay within.
#[derive(Debug, Clone, Copy, Default)]
pub struct Caps {
    pub team: Option<Decimal>,
}

/// Why a payment was not reserved.
#[derive(Debug, Clone, PartialEq)]
pub enum Refusal {
    /// It would take the day's spend past a cap. `whose`: the agent's name, or `None` for the
    /// team's.
    Cap {
        whose: Option<String>,
        cap: Decimal,
        spent: Decimal,
        amount: Decimal,
    },
    /// The same eSIM and plan was paid (or may have been) within the window.
    Repeat(Box<Payment>),
    /// The agent used this idempotency key before: that payment.
    SameKey(Box<Payment>),
}

/// An outcome to record.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    pub stage: Stage,
    pub charged: Option<Decimal>,
    pub status: Option<u16>,
    pub answer: Option<String>,
    pub order_no: Option<String>,
    pub note: Option<String>,
    /// Whether the API's answer echoed the payment's key (`None`: no answer).
    pub key_echoed: Option<bool>,
}

impl Outcome {
    /// Whether it charged more than `payment` held against the caps.
    pub fn over_held(&self, payment: &Payment) -> bool {
        self.stage == Stage::Charged && self.charged.is_some_and(|c| c > payment.asked.amount)
    }
}

/// Which payments an outcome may be recorded over: one never sent (a release of what was only
/// asked), or one sent whose outcome is not known. A charged or released payment is final.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum From {
    Asked,
    Sent,
}

const PAYMENT_COLUMNS: &str = "id, agent, kind, iccid, slug, qty, body, agent_key, reserved, upstream_key, state, \
     charged, asked_at, sent_at, settled_at, status, answer, order_no, note";

const PAYMENT_COLUMN_COUNT: usize = 19;

const AGENT_COLUMNS: &str = "name, access_code, secret_hash, role, daily_cap, created_at, revoked_at";

impl Store {
    /// Opens `spec` (a file path, or a `postgres://` URL) and brings its tables up to date.
    pub async fn open(spec: &str) -> Result<Store, StoreError> {
        let spec = spec.to_string();
        tokio::task::spawn_blocking(move || Self::open_blocking(&spec))
            .await
            .map_err(|e| StoreError::Open(e.to_string()))?
    }

    fn open_blocking(spec: &str) -> Result<Store, StoreError> {
        let mut db: Box<dyn Sql> = if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
            Box::new(postgres::Postgres::open(spec)?)
        } else {
            Box::new(sqlite::Sqlite::open(std::path::Path::new(spec))?)
        };
        schema::migrate(db.as_mut())?;
        let shown = db.describe();
        Ok(Store {
            db: Arc::new(Mutex::new(db)),
            shown,
        })
    }

    /// Runs `work` on the database off the runtime's threads.
    async fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(&mut dyn Sql) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        let db = self.db.clone();
        tokio::task::spawn_blocking(move || {
            let mut db = db.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            work(db.as_mut())
        })
        .await
        .map_err(|e| StoreError::Database(e.to_string()))?
    }

    pub async fn add_agent(&self, agent: Agent) -> Result<(), StoreError> {
        self.run(move |db| {
            exclusive(db, |db| {
                if !db
                    .query("SELECT name FROM agents WHERE name = $1", &[Value::text(&agent.name)])?
                    .is_empty()
                {
                    return Err(StoreError::Refused(format!(
                        "an agent named {:?} exists already",
                        agent.name
                    )));
                }
                db.execute(
                    &format!("INSERT INTO agents ({AGENT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7)"),
                    &agent_values(&agent),
                )?;
                Ok(())
            })
        })
        .await
    }

    pub async fn agents(&self) -> Result<Vec<Agent>, StoreError> {
        self.run(|db| {
            db.query(&format!("SELECT {AGENT_COLUMNS} FROM agents ORDER BY name"), &[])?
                .iter()
                .map(agent_of)
                .collect()
        })
        .await
    }

    pub async fn agent_by_name(&self, name: &str) -> Result<Option<Agent>, StoreError> {
        let name = name.to_string();
        self.run(move |db| {
            db.query(
                &format!("SELECT {AGENT_COLUMNS} FROM agents WHERE name = $1"),
                &[Value::text(name)],
            )?
            .first()
            .map(agent_of)
            .transpose()
        })
        .await
    }

    pub async fn agent_by_code(&self, access_code: &str) -> Result<Option<Agent>, StoreError> {
        let code = access_code.to_string();
        self.run(move |db| {
            db.query(
                &format!("SELECT {AGENT_COLUMNS} FROM agents WHERE access_code = $1"),
                &[Value::text(code)],
            )?
            .first()
            .map(agent_of)
            .transpose()
        })
        .await
    }

    /// Revokes an agent's token; `false` if no such agent.
    pub async fn revoke(&self, name: &str, now: i64) -> Result<bool, StoreError> {
        let name = name.to_string();
        self.run(move |db| {
            db.execute(
                "UPDATE agents SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL",
                &[Value::int(now), Value::text(&name)],
            )?;
            Ok(!db
                .query("SELECT name FROM agents WHERE name = $1", &[Value::text(name)])?
                .is_empty())
        })
        .await
    }

    /// Sets (or with `None` lifts) an agent's daily cap; `false` if no such agent.
    pub async fn set_cap(&self, name: &str, cap: Option<Decimal>) -> Result<bool, StoreError> {
        let name = name.to_string();
        self.run(move |db| {
            let n = db.execute(
                "UPDATE agents SET daily_cap = $1 WHERE name = $2",
                &[Value::Text(cap.map(|c| c.to_string())), Value::text(name)],
            )?;
            Ok(n > 0)
        })
        .await
    }

    /// Records a payment as asked, holding its amount against the caps, unless a cap, the
    /// rule against repeats or the agent's key says no: all checked in one exclusive
    /// transaction, so that no two payments (on any replica) pass a check together.
    pub async fn reserve(
        &self,
        asked: Asked,
        caps: Caps,
        now: i64,
        repeat_window: Option<i64>,
    ) -> Result<Result<Payment, Refusal>, StoreError> {
        self.run(move |db| exclusive(db, |db| reserve_in(db, asked, caps, now, repeat_window)))
            .await
    }

    /// The payment is about to be sent; `false` if it is no longer asked (a replica starting
    /// meanwhile released it as left over): it must not be sent then.
    pub async fn mark_sent(&self, id: &str, now: i64) -> Result<bool, StoreError> {
        let id = id.to_string();
        self.run(move |db| {
            db.execute(
                "UPDATE payments SET state = 'sent', sent_at = $1 WHERE id = $2 AND state = 'asked'",
                &[Value::int(now), Value::text(id)],
            )
            .map(|n| n == 1)
        })
        .await
    }

    /// What became of a payment, recorded only over the stages `from` allows; `false` when
    /// the payment had moved on (another replica settled or sent it meanwhile).
    pub async fn settle(&self, payment: &Payment, outcome: Outcome, now: i64, from: From) -> Result<bool, StoreError> {
        let drift = outcome.over_held(payment).then(|| "open".to_string());
        let id = payment.id.clone();
        let states = match from {
            From::Asked => "state = 'asked'",
            From::Sent => "state IN ('sent', 'unknown')",
        };
        self.run(move |db| {
            exclusive(db, |db| {
                let rows = db.query(
                    &format!("SELECT {PAYMENT_COLUMNS}, day FROM payments WHERE id = $1 AND {states}"),
                    &[Value::text(&id)],
                )?;
                let Some(row) = rows.first() else { return Ok(false) };
                let before = payment_of(row)?;
                let day = row
                    .get(PAYMENT_COLUMN_COUNT)
                    .and_then(Value::as_text)
                    .unwrap_or_default()
                    .to_string();
                let after = Payment {
                    stage: outcome.stage,
                    charged: outcome.charged,
                    ..before.clone()
                };
                db.execute(
                    "UPDATE payments SET state = $1, charged = $2, status = $3, answer = $4, order_no = $5, note = $6, \
                     key_echoed = $7, settled_at = $8, drift = $9 WHERE id = $10",
                    &[
                        Value::text(outcome.stage.name()),
                        Value::Text(outcome.charged.map(|c| c.to_string())),
                        Value::Int(outcome.status.map(i64::from)),
                        Value::Text(outcome.answer),
                        Value::Text(outcome.order_no),
                        Value::Text(outcome.note),
                        Value::Int(outcome.key_echoed.map(i64::from)),
                        Value::int(now),
                        Value::Text(drift),
                        Value::text(&id),
                    ],
                )?;
                let change = after.held() - before.held();
                if !change.is_zero() {
                    totals::add(db, &day, &before.asked.agent, change)?;
                }
                Ok(true)
            })
        })
        .await
    }

    /// Whether the API's last answer to a payment echoed its key: a server that echoes honours
    /// keys (docs/api-contract.md), so a payment may be resent under its key; one that does not
    /// would carry a resend out as a second payment.
    pub async fn api_honours_keys(&self) -> Result<bool, StoreError> {
        self.run(|db| {
            Ok(db
                .query(
                    "SELECT key_echoed FROM payments WHERE key_echoed IS NOT NULL ORDER BY settled_at DESC LIMIT 1",
                    &[],
                )?
                .first()
                .and_then(|r| r.first().and_then(Value::as_int))
                == Some(1))
        })
        .await
    }

    /// The agent's payment under its own idempotency key, if it sent that key before.
    pub async fn payment_by_key(&self, agent: &str, key: &str) -> Result<Option<Payment>, StoreError> {
        let (agent, key) = (agent.to_string(), key.to_string());
        self.run(move |db| {
            db.query(
                &format!("SELECT {PAYMENT_COLUMNS} FROM payments WHERE agent = $1 AND agent_key = $2"),
                &[Value::text(agent), Value::text(key)],
            )?
            .first()
            .map(payment_of)
            .transpose()
        })
        .await
    }

    /// Payments whose outcome is not known (asked, sent, or answered without telling): what a
    /// gateway settles at start.
    pub async fn unsettled(&self) -> Result<Vec<Payment>, StoreError> {
        self.payments("state IN ('asked', 'sent', 'unknown')", vec![]).await
    }

    /// The agent's charges past what they held, not yet confirmed by the order list.
    pub async fn open_drifts(&self, agent: &str) -> Result<Vec<Payment>, StoreError> {
        self.payments("drift = 'open' AND agent = $1", vec![Value::text(agent)])
            .await
    }

    /// The order list confirmed the journal's figure for this charge.
    pub async fn drift_agreed(&self, id: &str) -> Result<(), StoreError> {
        let id = id.to_string();
        self.run(move |db| {
            db.execute("UPDATE payments SET drift = 'agreed' WHERE id = $1", &[Value::text(id)])
                .map(|_| ())
        })
        .await
    }

    /// What the journal knows of payments like `payment` since `since`: the order numbers it
    /// gives to other payments, and whether another one of the same eSIM and plan is still
    /// without an outcome (then an order in the list could be either's).
    pub async fn others_like(&self, payment: &Payment, since: i64) -> Result<(HashSet<String>, bool), StoreError> {
        let others = self
            .payments(
                "asked_at >= $1 AND slug = $2 AND id <> $3",
                vec![
                    Value::int(since),
                    Value::text(&payment.asked.slug),
                    Value::text(&payment.id),
                ],
            )
            .await?;
        let claimed = others.iter().filter_map(|p| p.order_no.clone()).collect();
        let open = others.iter().any(|p| {
            p.asked.iccid == payment.asked.iccid && matches!(p.stage, Stage::Asked | Stage::Sent | Stage::Unknown)
        });
        Ok((claimed, open))
    }

    /// The journal since `since` (Unix seconds), one agent's or everyone's, oldest first.
    pub async fn journal(&self, agent: Option<&str>, since: i64) -> Result<Vec<Payment>, StoreError> {
        match agent {
            Some(a) => {
                self.payments("asked_at >= $1 AND agent = $2", vec![Value::int(since), Value::text(a)])
                    .await
            }
            None => self.payments("asked_at >= $1", vec![Value::int(since)]).await,
        }
    }

    /// What an agent's payments hold on `day` (YYYY-MM-DD, UTC), and the team's.
    pub async fn held_on(&self, agent: &str, day: &str) -> Result<(Decimal, Decimal), StoreError> {
        let (agent, day) = (agent.to_string(), day.to_string());
        self.run(move |db| totals::read_of(db, &day, &agent)).await
    }

    /// What each agent's payments hold on `day`, and the team's (under `totals::TEAM`).
    pub async fn day_totals(&self, day: &str) -> Result<BTreeMap<String, Decimal>, StoreError> {
        let day = day.to_string();
        self.run(move |db| totals::read(db, &day)).await
    }

    async fn payments(&self, filter: &'static str, params: Vec<Value>) -> Result<Vec<Payment>, StoreError> {
        self.run(move |db| {
            db.query(
                &format!("SELECT {PAYMENT_COLUMNS} FROM payments WHERE {filter} ORDER BY asked_at, id"),
                &params,
            )?
            .iter()
            .map(payment_of)
            .collect()
        })
        .await
    }

    pub fn describe(&self) -> &str {
        &self.shown
    }
}

fn reserve_in(
    db: &mut dyn Sql,
    asked: Asked,
    caps: Caps,
    now: i64,
    repeat_window: Option<i64>,
) -> Result<Result<Payment, Refusal>, StoreError> {
    if let Some(key) = &asked.agent_key {
        let same = db.query(
            &format!("SELECT {PAYMENT_COLUMNS} FROM payments WHERE agent = $1 AND agent_key = $2"),
            &[Value::text(&asked.agent), Value::text(key)],
        )?;
        if let Some(row) = same.first() {
            return Ok(Err(Refusal::SameKey(Box::new(payment_of(row)?))));
        }
    }
    if let (Some(window), Some(iccid)) = (repeat_window, &asked.iccid) {
        let earlier = db.query(
            &format!(
                "SELECT {PAYMENT_COLUMNS} FROM payments WHERE iccid = $1 AND slug = $2 AND asked_at >= $3 \
                 AND state <> 'released' ORDER BY asked_at DESC"
            ),
            &[Value::text(iccid), Value::text(&asked.slug), Value::int(now - window)],
        )?;
        if let Some(row) = earlier.first() {
            return Ok(Err(Refusal::Repeat(Box::new(payment_of(row)?))));
        }
    }
    let day = day_of(now);
    let (own, team) = totals::read_of(db, &day, &asked.agent)?;
    let agent_cap = db
        .query(
            "SELECT daily_cap FROM agents WHERE name = $1",
            &[Value::text(&asked.agent)],
        )?
        .first()
        .and_then(|r| r.first().and_then(|v| v.as_text().map(str::to_string)))
        .map(|c| decimal(&c))
        .transpose()?;
    for (whose, cap, spent) in [(Some(asked.agent.clone()), agent_cap, own), (None, caps.team, team)] {
        if let Some(cap) = cap
            && spent + asked.amount > cap
        {
            return Ok(Err(Refusal::Cap {
                whose,
                cap,
                spent,
                amount: asked.amount,
            }));
        }
    }
    let payment = Payment::asked(esimdash_domain::text::hex(&random_id()?), asked, now);
    db.execute(
        &format!(
            "INSERT INTO payments ({PAYMENT_COLUMNS}, day) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, \
             $13, $14, $15, $16, $17, $18, $19, $20)"
        ),
        &payment_values(&payment, &day),
    )?;
    totals::add(db, &day, &payment.asked.agent, payment.held())?;
    Ok(Ok(payment))
}

fn random_id() -> Result<[u8; 12], StoreError> {
    let mut id = [0u8; 12];
    getrandom::fill(&mut id).map_err(|e| StoreError::Database(format!("the system's random source failed: {e}")))?;
    Ok(id)
}

/// A store as it may be shown: a URL's password replaced.
pub fn shown(spec: &str) -> String {
    match url::Url::parse(spec) {
        Ok(mut u) if u.password().is_some() => {
            let _ = u.set_password(Some("***"));
            u.to_string()
        }
        _ => spec.to_string(),
    }
}

/// The UTC day of a time, as the caps count days.
pub fn day_of(unix: i64) -> String {
    chrono::DateTime::from_timestamp(unix, 0)
        .unwrap_or_default()
        .format("%Y-%m-%d")
        .to_string()
}

/// The next midnight, UTC: when the daily caps start again.
pub(crate) fn next_reset(now: i64) -> chrono::DateTime<chrono::Utc> {
    let day = chrono::DateTime::from_timestamp(now, 0)
        .unwrap_or_default()
        .date_naive();
    day.succ_opt()
        .unwrap_or(day)
        .and_hms_opt(0, 0, 0)
        .unwrap_or_default()
        .and_utc()
}

pub(super) fn day_rows(db: &mut dyn Sql, day: &str) -> Result<Vec<Payment>, StoreError> {
    db.query(
        &format!("SELECT {PAYMENT_COLUMNS} FROM payments WHERE day = $1"),
        &[Value::text(day)],
    )?
    .iter()
    .map(payment_of)
    .collect()
}

pub(super) fn decimal(text: &str) -> Result<Decimal, StoreError> {
    Decimal::from_str(text).map_err(|_| StoreError::Database(format!("{text:?} in the store is no amount")))
}

fn agent_values(a: &Agent) -> Vec<Value> {
    vec![
        Value::text(&a.name),
        Value::text(&a.access_code),
        Value::text(&a.secret_hash),
        Value::text(a.role.name()),
        Value::Text(a.daily_cap.map(|c| c.to_string())),
        Value::int(a.created_at),
        Value::Int(a.revoked_at),
    ]
}

/// Reads a row's columns in the order of a column list.
struct Columns<'a>(std::slice::Iter<'a, Value>);

impl<'a> Columns<'a> {
    fn next(&mut self) -> &'a Value {
        const NULL: &Value = &Value::Text(None);
        self.0.next().unwrap_or(NULL)
    }

    fn text(&mut self) -> Option<String> {
        self.next().as_text().map(str::to_string)
    }

    fn int(&mut self) -> Option<i64> {
        self.next().as_int()
    }

    fn amount(&mut self) -> Result<Option<Decimal>, StoreError> {
        self.text().map(|t| decimal(&t)).transpose()
    }
}

fn agent_of(row: &Row) -> Result<Agent, StoreError> {
    let mut c = Columns(row.iter());
    Ok(Agent {
        name: c.text().unwrap_or_default(),
        access_code: c.text().unwrap_or_default(),
        secret_hash: c.text().unwrap_or_default(),
        role: c
            .text()
            .unwrap_or_default()
            .parse::<Role>()
            .map_err(StoreError::Database)?,
        daily_cap: c.amount()?,
        created_at: c.int().unwrap_or_default(),
        revoked_at: c.int(),
    })
}

fn payment_values(p: &Payment, day: &str) -> Vec<Value> {
    let a = &p.asked;
    vec![
        Value::text(&p.id),
        Value::text(&a.agent),
        Value::text(&a.kind),
        Value::Text(a.iccid.clone()),
        Value::text(&a.slug),
        Value::int(i64::from(a.qty)),
        Value::text(&a.body),
        Value::Text(a.agent_key.clone()),
        Value::text(a.amount.to_string()),
        Value::text(&p.upstream_key),
        Value::text(p.stage.name()),
        Value::Text(p.charged.map(|c| c.to_string())),
        Value::int(p.asked_at),
        Value::Int(p.sent_at),
        Value::Int(p.settled_at),
        Value::Int(p.status.map(i64::from)),
        Value::Text(p.answer.clone()),
        Value::Text(p.order_no.clone()),
        Value::Text(p.note.clone()),
        Value::text(day),
    ]
}

fn payment_of(row: &Row) -> Result<Payment, StoreError> {
    let mut c = Columns(row.iter());
    let id = c.text().unwrap_or_default();
    let asked = Asked {
        agent: c.text().unwrap_or_default(),
        kind: c.text().unwrap_or_default(),
        iccid: c.text(),
        slug: c.text().unwrap_or_default(),
        qty: c.int().and_then(|n| u32::try_from(n).ok()).unwrap_or(1),
        body: c.text().unwrap_or_default(),
        agent_key: c.text(),
        amount: c.amount()?.unwrap_or_default(),
    };
    Ok(Payment {
        id,
        asked,
        upstream_key: c.text().unwrap_or_default(),
        stage: Stage::parse(&c.text().unwrap_or_default()),
        charged: c.amount()?,
        asked_at: c.int().unwrap_or_default(),
        sent_at: c.int(),
        settled_at: c.int(),
        status: c.int().and_then(|n| u16::try_from(n).ok()),
        answer: c.text(),
        order_no: c.text(),
        note: c.text(),
    })
}
