//! Payments whose session ended before their outcome was known (killed, hung up, Ctrl-C) are
//! settled by the next session of the same account, before it does anything else: sent again
//! under their own idempotency key where the server honours keys (it replays the stored answer
//! or carries the payment out: never a second debit), else looked up in the order list. What
//! became of each is written to the audit trail and told to the user (`Notice::Settled`).
//!
//! The same place keeps the rule against paying twice by accident: the same payment asked
//! again within minutes of one that was placed (or may have been) is not sent without a
//! second, explicit confirmation.

use super::client::Client;
use super::error::ApiError;
use super::lock::{self, AccountLock};
use super::model::Order;
use super::payment::Payment;
use crate::audit::{self, Entry, Outcome, PaymentRecord, Stage, Trail};
use chrono::{DateTime, Utc};
use esimdash_domain::iccid::{EsimIccid, Iccid};
use esimdash_domain::purchase::Spend;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

/// The same payment within this long of an earlier one needs a second confirmation.
pub const REPEAT_WINDOW: Duration = Duration::from_secs(10 * 60);
/// Sent again under its key only while the server still keeps it (docs/api-contract.md: 24 hours),
/// with an hour to spare for clocks that disagree.
const KEY_KEPT: Duration = Duration::from_secs(23 * 3600);

/// What the client tells whoever drives it (a command prints it, the dashboard shows it).
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// Another esimdash process is paying from this account: this payment waits for it.
    WaitingForLock,
    Settled(Box<Settled>),
    /// A line of a payment's could not be written to the audit trail (a full disk): the trail
    /// lacks it, in words. What the payment did is told as usual; this is its only trace.
    TrailUnwritten(String),
    /// A request waits this long for the key's rate budget (spent by this process, or by the
    /// other esimdash processes of the account that share it).
    WaitingForBudget(std::time::Duration),
}

/// Who hears the notices.
pub type Listener = Arc<dyn Fn(Notice) + Send + Sync>;

/// An earlier payment, and what became of it now.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    pub record: PaymentRecord,
    pub result: Result<Found, String>,
}

/// What settling found.
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    /// It never left: its session ended before sending.
    NeverSent,
    /// Sent again under its key: the server had carried it out (`replayed`) or did so now.
    Resent { order_no: String, replayed: bool },
    /// Sent again under its key (the order list showed no order of it), and the answer did not
    /// echo the key: the server may not have honoured it, so if the first had reached it,
    /// this is a second order. `others`: the orders that could be the first.
    ResentUnconfirmed { order_no: String, others: Vec<String> },
    /// Sent again under its key and refused: nothing was paid.
    Refused(String),
    /// Sent again and refused, the answer not confirming the key: the refusal may be a node's
    /// that ignores keys, so only the order list (which showed no order of it) says that
    /// nothing was paid.
    RefusedUnconfirmed(String),
    /// The order list shows its order.
    Placed { order_no: String },
    /// The order list shows no such order.
    NotPlaced,
    /// The order list shows several orders that could each be it.
    Ambiguous(Vec<String>),
}

impl Settled {
    /// "An earlier top-up of 8944… (fr-topup-1gb × 1), sent 14:02 and interrupted, was placed: order B1…".
    pub fn sentence(&self) -> String {
        let r = &self.record;
        let what = match (&r.action[..], &r.iccid) {
            ("topup", Some(iccid)) => format!("top-up of {iccid}"),
            _ => "order".to_string(),
        };
        let total = r.total.as_ref().map_or_else(String::new, |t| format!(", {t} USD"));
        let when = r.sent_at.unwrap_or(r.asked_at).with_timezone(&chrono::Local);
        let sent = if r.sent_at.is_some() { "sent" } else { "asked" };
        let head = format!(
            "An earlier {what} ({} × {}{total}), {sent} {} and interrupted,",
            r.slug,
            r.quantity,
            when.format("%Y-%m-%d %H:%M")
        );
        let tail = match &self.result {
            Ok(Found::NeverSent) => "was never sent: nothing was paid.".to_string(),
            Ok(Found::Resent {
                order_no,
                replayed: true,
            }) => {
                format!(
                    "was placed: order {order_no} (sent again under its key; the server had carried it out, nothing was paid twice)."
                )
            }
            Ok(Found::Resent {
                order_no,
                replayed: false,
            }) => {
                format!("is placed now: order {order_no} (it had not reached the server; sent again under its key).")
            }
            Ok(Found::ResentUnconfirmed { order_no, others }) if others.is_empty() => format!(
                "is placed now: order {order_no} (the order list showed no order of it, so it was sent again; the server's answer did not confirm its key, so check Orders for a second one)."
            ),
            Ok(Found::ResentUnconfirmed { order_no, others }) => format!(
                "was sent again and placed as order {order_no}, but the server's answer did not confirm its key: possibly a second order, as {} could be the first; check them in Orders.",
                others.join(", ")
            ),
            Ok(Found::Refused(why)) => format!("was sent again under its key and refused ({why}): nothing was paid."),
            Ok(Found::RefusedUnconfirmed(why)) => format!(
                "was sent again and refused ({why}); the answer did not confirm its key, but the order list showed no order of it: most likely nothing was paid. Check Orders."
            ),
            Ok(Found::Placed { order_no }) => format!("was placed: order {order_no} (the order list shows it)."),
            Ok(Found::NotPlaced) => "was not placed: the order list shows no such order.".to_string(),
            Ok(Found::Ambiguous(orders)) if orders.len() == 1 => format!(
                "may have been placed: the order list shows an order that could be it ({}), or the same payment made by another esimdash (this server does not honour keys, so esimdash cannot tell); check it in Orders.",
                orders[0]
            ),
            Ok(Found::Ambiguous(orders)) => format!(
                "may have been placed: the order list shows {} orders that could each be it ({}); check them in Orders.",
                orders.len(),
                orders.join(", ")
            ),
            Err(why) => format!("could not be settled yet ({why}); esimdash tries again at the next start."),
        };
        format!("{head} {tail}")
    }

    /// Whether money moved for it: `Some(true)`, `Some(false)`, or `None` when unknown.
    pub fn money_moved(&self) -> Option<bool> {
        match &self.result {
            Ok(Found::Resent { .. } | Found::ResentUnconfirmed { .. } | Found::Placed { .. }) => Some(true),
            Ok(Found::NeverSent | Found::Refused(_) | Found::RefusedUnconfirmed(_) | Found::NotPlaced) => Some(false),
            Ok(Found::Ambiguous(_)) | Err(_) => None,
        }
    }

    /// For `--json`: the payment, what became of it, and whether money moved.
    pub fn to_json(&self) -> serde_json::Value {
        let r = &self.record;
        let (outcome, order) = match &self.result {
            Ok(Found::NeverSent) => ("never_sent", None),
            Ok(Found::Resent {
                order_no,
                replayed: true,
            }) => ("placed_replayed", Some(order_no)),
            Ok(Found::Resent {
                order_no,
                replayed: false,
            }) => ("placed_now", Some(order_no)),
            Ok(Found::ResentUnconfirmed { order_no, .. }) => ("placed_now_unconfirmed", Some(order_no)),
            Ok(Found::Refused(_)) => ("refused", None),
            Ok(Found::RefusedUnconfirmed(_)) => ("refused_unconfirmed", None),
            Ok(Found::Placed { order_no }) => ("placed", Some(order_no)),
            Ok(Found::NotPlaced) => ("not_placed", None),
            Ok(Found::Ambiguous(_)) => ("ambiguous", None),
            Err(_) => ("unsettled", None),
        };
        serde_json::json!({
            "action": r.action,
            "iccid": r.iccid,
            "slug": r.slug,
            "quantity": r.quantity,
            "total": r.total,
            "idempotencyKey": r.key,
            "sentAt": r.sent_at,
            "outcome": outcome,
            "orderNo": order,
            "candidates": match &self.result {
                Ok(Found::Ambiguous(o) | Found::ResentUnconfirmed { others: o, .. }) if !o.is_empty() => Some(o),
                _ => None,
            },
            "moneyMoved": self.money_moved().map_or(serde_json::json!("unknown"), serde_json::Value::from),
            "message": self.sentence(),
        })
    }
}

impl Client {
    fn trail(&self) -> Option<&Trail> {
        self.options().audit.as_ref()
    }

    fn lock_path(&self, trail: &Trail) -> std::path::PathBuf {
        lock::path_for(&trail.path, &self.who().account)
    }

    /// Where this account's files beside the trail go, and the account's short name for their
    /// names (`None` without a trail).
    pub fn state_place(&self) -> Option<(std::path::PathBuf, String)> {
        let trail = self.trail()?;
        let dir = trail
            .path
            .parent()
            .unwrap_or_else(|| std::path::Path::new("."))
            .to_path_buf();
        Some((dir, audit::account_id(&self.who().account)))
    }

    /// This account's payments as the trail tells them (none without a trail).
    fn records(&self) -> Vec<PaymentRecord> {
        self.payment_records().unwrap_or_else(|e| {
            tracing::error!(%e, "the audit trail could not be read");
            Vec::new()
        })
    }

    /// This account's payments as the trail tells them, or why it cannot be read: what must
    /// not take an unreadable trail for an empty one (a bulk run deciding what was paid).
    pub fn payment_records(&self) -> Result<Vec<PaymentRecord>, String> {
        let Some(trail) = self.trail() else {
            return Ok(Vec::new());
        };
        audit::read(&trail.path)
            .map(|read| audit::payments(&read.entries, self.who()))
            .map_err(|e| format!("the audit trail {} could not be read: {e}", trail.path.display()))
    }

    /// Waits for this account's payment lock (`None` without a trail: tests), as long as
    /// another process's payment may take (two requests and a lookup), then gives up.
    pub(super) async fn lock_account(&self, endpoint: super::Endpoint) -> Result<Option<AccountLock>, ApiError> {
        let Some(trail) = self.trail() else { return Ok(None) };
        let path = self.lock_path(trail);
        let patience = self.options().request_timeout * 3 + Duration::from_secs(10);
        let failed = |detail: String| ApiError::Lock {
            endpoint,
            path: path.display().to_string(),
            detail,
        };
        let take = AccountLock::take(&path, || self.notify(Notice::WaitingForLock));
        match tokio::time::timeout(patience, take).await {
            Ok(taken) => taken.map(Some).map_err(|e| failed(e.to_string())),
            Err(_) => Err(failed(format!(
                "another esimdash has been paying from this account for {} s; nothing was sent, try again",
                patience.as_secs()
            ))),
        }
    }

    /// At the start of a session: settles every payment of this account that has no outcome,
    /// unless another process is paying right now (it holds the lock, and may be the one that
    /// sent them). Each is told as a `Notice::Settled`.
    pub async fn settle_earlier(&self) {
        let Some(trail) = self.trail() else { return };
        // Most starts: nothing open, and the trail is not read at all.
        if trail.open_marks(&self.who().account).none_but(None) {
            return;
        }
        match AccountLock::try_take(&self.lock_path(trail)) {
            Ok(Some(_lock)) => drop(self.settle_unsettled(None).await),
            Ok(None) => tracing::info!("another esimdash is paying from this account; it settles its own"),
            Err(e) => tracing::warn!(%e, "the payment lock could not be taken; nothing settled"),
        }
    }

    /// Settles, under the account's lock, every payment without an outcome but `except` (the
    /// one being paid now); what became of each. The trail is read only when a mark says a
    /// payment is open (or it was never read through with marks in use).
    pub(super) async fn settle_unsettled(&self, except: Option<&str>) -> Vec<Settled> {
        let Some(trail) = self.trail() else { return Vec::new() };
        let code = &self.who().account;
        let marks = trail.open_marks(code);
        if marks.none_but(except) {
            return Vec::new();
        }
        let records = self.records();
        let mut claimed = claimed_orders(&records);
        let told: HashSet<String> = records
            .iter()
            .filter(|r| r.outcome.is_some())
            .map(|r| audit::mark_name(&r.key))
            .collect();
        for stale in marks.names.iter().filter(|n| told.contains(*n)) {
            trail.set_open(code, stale, false);
        }
        let mut settled = Vec::new();
        let open = records
            .iter()
            .filter(|r| r.outcome.is_none() && Some(r.key.as_str()) != except);
        for record in open {
            let result = self.settle(record, &claimed).await;
            match &result {
                Ok(
                    Found::Resent { order_no, .. }
                    | Found::ResentUnconfirmed { order_no, .. }
                    | Found::Placed { order_no },
                ) => {
                    claimed.insert(order_no.clone());
                }
                Ok(_) => {}
                // Tried again at the next start: marked, whether or not it was before.
                Err(_) => trail.set_open(code, &record.key, true),
            }
            let one = Settled {
                record: record.clone(),
                result,
            };
            self.notify(Notice::Settled(Box::new(one.clone())));
            settled.push(one);
        }
        trail.mark_scanned(code);
        settled
    }

    /// What became of one open payment. The order list is read first, whatever the server's
    /// past answers said of keys: an order of it there is never sent again. Only when the list
    /// shows none is it sent again under its key (where the server honours keys), and an
    /// answer without the key's echo is told as possibly a second order.
    async fn settle(&self, record: &PaymentRecord, claimed: &HashSet<String>) -> Result<Found, String> {
        let Some(sent_at) = record.sent_at else {
            self.record(&self.settled_entry(record, "never sent: nothing was paid"));
            return Ok(Found::NeverSent);
        };
        let payment = payment_of(record).ok_or_else(|| "the trail does not say what it bought".to_string())?;
        let candidates = self.candidates(record, &payment, sent_at, claimed).await?;
        let found = match candidates.as_slice() {
            [] if age(sent_at) < self.options().request_timeout => {
                // Its answer may still be on its way: too early to say it was not placed.
                return Err("it was sent moments ago and the order list does not show it yet".to_string());
            }
            [] if self.may_resend(sent_at) && self.sealed(record) => {
                return self.resend_open(record, &payment, sent_at, claimed).await;
            }
            [] => Found::NotPlaced,
            // One new order of it: its own where the server honours keys; without keys another
            // esimdash (another seat) paying the same could have placed it: listed, not claimed.
            [one] if self.honours_keys() => Found::Placed { order_no: one.clone() },
            many => Found::Ambiguous(many.to_vec()),
        };
        let mut e = self.settled_entry(record, "the order list shows no such order");
        match &found {
            Found::Placed { order_no } => {
                e.outcome = Some("the order list shows it placed".to_string());
                e.order_no = Some(order_no.clone());
            }
            Found::Ambiguous(orders) => {
                e.outcome = Some("the order list shows orders that could each be it".to_string());
                e.candidates = Some(orders.clone());
            }
            _ => e.found = Some(false),
        }
        self.record(&e);
        Ok(found)
    }

    /// The seal this session writes on a payment's lines (`audit::seal`).
    pub(super) fn seal(&self, key: &str, action: &str, iccid: Option<&EsimIccid>, slug: &str, quantity: u32) -> String {
        audit::seal(self.secret(), self.who(), key, action, iccid, slug, quantity)
    }

    /// Whether an open payment's line was written by an esimdash holding this account's
    /// secret: only such a payment is sent again from the trail (older versions wrote no
    /// seal: theirs are settled from the order list alone).
    fn sealed(&self, record: &PaymentRecord) -> bool {
        let seal = self.seal(
            &record.key,
            &record.action,
            record.iccid.as_ref(),
            &record.slug,
            record.quantity,
        );
        record.seal.as_deref().is_some_and(|s| !s.is_empty() && s == seal)
    }

    /// Whether an open payment may be sent again under its key: the server honours keys, the
    /// key is still kept, the session may write and is not stopping.
    fn may_resend(&self, sent_at: DateTime<Utc>) -> bool {
        self.read_only().is_none() && age(sent_at) < KEY_KEPT && self.honours_keys() && !crate::signals::stopping()
    }

    /// The order numbers that could be the payment's: of its plan (and eSIM), new since it was
    /// sent (against the orders read before it), and no other payment's.
    async fn candidates(
        &self,
        record: &PaymentRecord,
        payment: &Payment,
        sent_at: DateTime<Utc>,
        claimed: &HashSet<String>,
    ) -> Result<Vec<String>, String> {
        let before: Option<HashSet<&str>> = record
            .orders_before
            .as_ref()
            .map(|b| b.iter().map(String::as_str).collect());
        let baseline = match &before {
            Some(before) => Baseline::Before(before),
            None => Baseline::Since(sent_at),
        };
        let orders = self
            .orders_that_could_be(payment, &baseline, claimed)
            .await
            .map_err(|e| format!("the order list could not be read: {e}"))?;
        Ok(orders
            .into_iter()
            .map(|o| o.record.provider_order_no.to_string())
            .collect())
    }

    /// The orders that could be `payment`'s, read from the order list (one read): of its plan
    /// (and eSIM), new against `baseline`, and none the trail gives to another payment
    /// (`claimed`). What every lookup of a payment's outcome reads: after a lost answer, before
    /// a resend, when settling.
    pub(super) async fn orders_that_could_be(
        &self,
        payment: &Payment,
        baseline: &Baseline<'_>,
        claimed: &HashSet<String>,
    ) -> Result<Vec<Order>, ApiError> {
        let orders = self.recent_orders_for(payment.slug(), payment.iccid()).await?;
        Ok(new_orders(&orders, baseline, claimed, payment.iccid())
            .into_iter()
            .cloned()
            .collect())
    }

    /// Sends an open payment the order list does not show once more under its key. An answer
    /// that echoes the key tells (replayed, or carried out now); one that does not may be a
    /// second order: the list is read again, and every order that could be it is named.
    async fn resend_open(
        &self,
        record: &PaymentRecord,
        payment: &Payment,
        sent_at: DateTime<Utc>,
        claimed: &HashSet<String>,
    ) -> Result<Found, String> {
        let (placed, replayed) = match self.send_payment(payment, record.attempts + 1).await {
            Ok(answer) => answer,
            Err(e) if e.refuses_a_resend() => {
                let why = e.server_message().map_or_else(|| e.to_string(), str::to_string);
                return Ok(if self.seen_key_echo() == Some(true) {
                    Found::Refused(why)
                } else {
                    Found::RefusedUnconfirmed(why)
                });
            }
            // Still in progress at the server (409), lost again, or no word on the first.
            Err(e) => return Err(e.to_string()),
        };
        let order_no = placed.order.record.provider_order_no.to_string();
        if self.seen_key_echo() == Some(true) {
            return Ok(Found::Resent { order_no, replayed });
        }
        let mut others = self
            .candidates(record, payment, sent_at, claimed)
            .await
            .unwrap_or_default();
        others.retain(|o| *o != order_no);
        Ok(Found::ResentUnconfirmed { order_no, others })
    }

    /// A "settled" line of `record`, with what became of it in words.
    fn settled_entry(&self, record: &PaymentRecord, outcome: &str) -> Entry {
        let mut e = Entry::new(self.who(), Stage::Settled, &record.action);
        e.iccid.clone_from(&record.iccid);
        e.slug = Some(record.slug.clone());
        e.quantity = Some(record.quantity);
        e.total.clone_from(&record.total);
        e.idempotency_key = Some(record.key.clone());
        e.outcome = Some(outcome.to_string());
        e.settled = Some(true);
        e
    }

    /// The payment just like this one (account, eSIM or plan, slug, quantity) that was placed or
    /// may have been: asked within the last minutes, or settled just now (`settled`: whatever
    /// its age, the user has only now heard of it).
    pub(super) fn earlier_same(&self, payment: &Payment, settled: &[Settled]) -> Option<PaymentRecord> {
        let same = |r: &PaymentRecord| r.key != payment.key && pays_the_same(r, &payment.spend);
        let just_now = settled
            .iter()
            .find(|s| same(&s.record) && s.money_moved() != Some(false))
            .map(|s| s.record.clone());
        just_now.or_else(|| repeated(&self.records(), &payment.spend, Some(&payment.key)))
    }

    /// The orders that the trail records for other payments of this account: never taken as
    /// the outcome of this one.
    pub(super) fn orders_of_other_payments(&self, key: &str) -> HashSet<String> {
        let records: Vec<PaymentRecord> = self.records().into_iter().filter(|r| r.key != key).collect();
        claimed_orders(&records)
    }
}

/// The newest payment of `records` (but `except`) that paying `spend` now would repeat: the
/// same, asked within the repeat window, and sent or told an outcome that may have paid.
pub fn repeated(records: &[PaymentRecord], spend: &Spend, except: Option<&str>) -> Option<PaymentRecord> {
    records
        .iter()
        .rev()
        .find(|r| Some(r.key.as_str()) != except && pays_the_same(r, spend) && counts_as_repeated(r))
        .cloned()
}

/// Whether `record` pays what `spend` pays: the same eSIM (or a new one), slug and quantity.
pub fn pays_the_same(record: &PaymentRecord, spend: &Spend) -> bool {
    record.action == spend.what.action()
        && record.iccid.as_deref() == spend.what.iccid().map(Iccid::as_str)
        && record.slug == spend.slug
        && record.quantity == spend.qty
}

/// Whether paying the same as `record` again needs a second confirmation: it was asked within
/// the repeat window, and was sent (or told an outcome) that may have paid.
pub fn counts_as_repeated(record: &PaymentRecord) -> bool {
    age(record.asked_at) < REPEAT_WINDOW
        && record.outcome.as_ref().is_none_or(Outcome::may_have_paid)
        && (record.sent_at.is_some() || record.outcome.is_some())
}

/// The order numbers the trail gives as some payment's outcome.
fn claimed_orders(records: &[PaymentRecord]) -> HashSet<String> {
    records
        .iter()
        .filter_map(|r| match &r.outcome {
            Some(Outcome::Placed { order_no }) => Some(order_no.clone()),
            _ => None,
        })
        .collect()
}

/// What tells a payment's order from older ones.
pub(super) enum Baseline<'a> {
    /// The plan's order numbers read before it was sent.
    Before(&'a HashSet<&'a str>),
    /// Without those (an older trail): orders created since it was sent, give or take minutes.
    Since(DateTime<Utc>),
}

/// The orders that could be a payment's: of its plan (and eSIM), new against `baseline`, and
/// no other payment's.
pub(super) fn new_orders<'a>(
    orders: &'a [Order],
    baseline: &Baseline<'_>,
    claimed: &HashSet<String>,
    iccid: Option<&Iccid>,
) -> Vec<&'a Order> {
    let margin = chrono::Duration::minutes(5);
    orders
        .iter()
        .filter(|o| {
            let no = o.record.provider_order_no.as_str();
            let new = match baseline {
                Baseline::Before(before) => !before.contains(no),
                Baseline::Since(sent_at) => o.created_at.at().is_some_and(|t| t >= *sent_at - margin),
            };
            new && !claimed.contains(no) && iccid.is_none_or(|i| o.iccid.is_empty() || o.iccid.as_str() == i.as_str())
        })
        .collect()
}

/// The payment a trail record stands for, under its own key.
fn payment_of(record: &PaymentRecord) -> Option<Payment> {
    // The trail is a file: an ICCID in it that is not one stands for no payment we can settle.
    let spend = match (&record.action[..], &record.iccid) {
        ("topup", Some(iccid)) => Spend::topup(iccid.valid().ok()?.clone(), &record.slug, record.quantity),
        ("order", _) => Spend::order(&record.slug, record.quantity),
        _ => return None,
    };
    let total = record.total.as_deref().and_then(|t| t.parse().ok());
    let payment = Payment::with_key(spend, total, record.key.clone());
    Some(match &record.gateway_request {
        Some(id) => payment.proposed(super::payment::Proposed {
            id: id.clone(),
            by: String::new(),
            at_gateway: true,
        }),
        None => payment,
    })
}

fn age(at: DateTime<Utc>) -> Duration {
    (Utc::now() - at).to_std().unwrap_or_default()
}
