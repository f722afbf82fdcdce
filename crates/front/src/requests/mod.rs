//! Payments an assistant proposed and a person decides (`esimdash mcp`'s write tools,
//! `esimdash requests|approve|refuse`). A request is what would be paid (the eSIM or a new
//! order, the plan, the quantity, the total), why, by whom and until when, bound by a digest of
//! those; only a person's decision, written here under the account's request lock, lets it be
//! paid, and then through the one payment path under the idempotency key written with the
//! decision. What became of the payment is the audit trail's to say (by that key), never
//! written twice.
//!
//! One file a request, `requests/<account>/<id>.json` in the state folder, written whole; the
//! lock `requests/<account>.lock` (a `flock`: a killed holder lets go) is held from reading a
//! request to the end of its payment, so that two approvals at once pay once.

pub mod approval;

use chrono::{DateTime, Duration, Utc};
use esimdash_api::audit::{Outcome, PaymentRecord};
use esimdash_domain::iccid::Iccid;
use esimdash_domain::money::format_amount;
use esimdash_domain::purchase::Spend;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// How long a proposal waits for a person: past it, it must be proposed again (at that
/// moment's price and offer).
pub const LIFETIME: Duration = Duration::minutes(30);

/// The most requests waiting at once in one account: an assistant that proposes without end
/// is refused, not let to bury the real ones.
pub const MOST_PENDING: usize = 50;

/// The most request files read (the newest kept; decided ones are only a record).
const MOST_FILES: usize = 2_000;

/// The most a request file may weigh.
const MOST_BYTES: u64 = 16 * 1024;

/// The most characters of the stated reason kept.
pub const MOST_REASON: usize = 500;

/// A proposed payment and, once a person decided, the decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Request {
    pub id: String,
    /// `topup` or `order`.
    pub action: String,
    pub iccid: Option<String>,
    pub slug: String,
    pub plan_name: String,
    pub quantity: u32,
    /// USD, each and in all, as the catalog priced it when proposed.
    pub unit_price: Decimal,
    pub total: Decimal,
    pub reason: String,
    pub proposed_by: String,
    pub proposed_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// `digest(account, what, total)`: what a person approves is what is paid.
    pub digest: String,
    pub decision: Option<Decision>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Decision {
    pub by: String,
    pub at: DateTime<Utc>,
    #[serde(flatten)]
    pub kind: Decided,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decided", rename_all = "camelCase")]
pub enum Decided {
    /// Approved: paid under this idempotency key (its outcome is in the trail).
    Approved {
        key: String,
    },
    Refused {
        why: String,
    },
}

/// Where a request stands, from its file and the trail.
#[derive(Debug, Clone, PartialEq)]
pub enum Standing {
    Pending,
    Expired,
    Refused {
        why: String,
    },
    /// Approved, and the trail has no line of its payment sent: its approver stopped before
    /// sending (approving it again pays it, under the same key).
    ApprovedNotSent,
    /// Sent, and no answer recorded yet: being paid now, or its process stopped mid-payment
    /// (the next esimdash of this account settles it).
    Paying,
    Paid {
        order_no: String,
    },
    NotPlaced,
    /// Its answer was lost and the order list did not settle it.
    Unknown {
        why: String,
    },
}

impl Standing {
    /// The word scripts read (`status` in JSON).
    pub fn key(&self) -> &'static str {
        match self {
            Standing::Pending => "pending",
            Standing::Expired => "expired",
            Standing::Refused { .. } => "refused",
            Standing::ApprovedNotSent => "approved",
            Standing::Paying => "paying",
            Standing::Paid { .. } => "paid",
            Standing::NotPlaced => "not_placed",
            Standing::Unknown { .. } => "unknown",
        }
    }
}

impl Request {
    /// What it would pay, typed again (a file edited by hand to hold no ICCID is refused).
    pub fn spend(&self) -> Result<Spend, String> {
        match (self.action.as_str(), &self.iccid) {
            ("topup", Some(iccid)) => {
                let iccid = Iccid::parse(iccid).map_err(|e| format!("request {}: {e}", self.id))?;
                Ok(Spend::topup(iccid, &self.slug, self.quantity))
            }
            ("order", None) => Ok(Spend::order(&self.slug, self.quantity)),
            _ => Err(format!("request {} names no payment esimdash knows", self.id)),
        }
    }

    /// Where it stands at `now`, its payment as the trail's `records` tell it.
    pub fn standing(&self, records: &[PaymentRecord], now: DateTime<Utc>) -> Standing {
        match &self.decision {
            None if now >= self.expires_at => Standing::Expired,
            None => Standing::Pending,
            Some(Decision {
                kind: Decided::Refused { why },
                ..
            }) => Standing::Refused { why: why.clone() },
            Some(Decision {
                kind: Decided::Approved { key },
                ..
            }) => match records.iter().find(|r| &r.key == key) {
                Some(record) => match &record.outcome {
                    Some(Outcome::Placed { order_no }) => Standing::Paid {
                        order_no: order_no.clone(),
                    },
                    Some(Outcome::NotPlaced) if record.sent_at.is_none() => Standing::ApprovedNotSent,
                    Some(Outcome::NotPlaced) => Standing::NotPlaced,
                    Some(Outcome::NotFound) => Standing::Unknown {
                        why: "its answer was lost and the order list showed no such order: most likely not placed"
                            .to_string(),
                    },
                    Some(Outcome::Ambiguous { orders }) => Standing::Unknown {
                        why: format!("its answer was lost; it may be one of the orders {}", orders.join(", ")),
                    },
                    None if record.sent_at.is_some() => Standing::Paying,
                    None => Standing::ApprovedNotSent,
                },
                None => Standing::ApprovedNotSent,
            },
        }
    }

    /// What a person is asked to approve, in one paragraph.
    pub fn summary(&self) -> String {
        let target = self
            .iccid
            .as_ref()
            .map_or_else(String::new, |i| format!(" for eSIM {i}"));
        format!(
            "{} {} × {} ({}){target}: {} USD each, {} USD in all.\nProposed by {} at {}: {}",
            if self.iccid.is_some() { "Top up" } else { "Buy" },
            self.quantity,
            self.plan_name,
            self.slug,
            format_amount(self.unit_price),
            format_amount(self.total),
            self.proposed_by,
            self.proposed_at.with_timezone(&chrono::Local).format("%H:%M"),
            self.reason
        )
    }

    /// The request as scripts and assistants read it (`requests --json`, `request_status`).
    pub fn json(&self, standing: &Standing) -> serde_json::Value {
        let mut value = serde_json::json!({
            "id": self.id,
            "action": self.action,
            "iccid": self.iccid,
            "slug": self.slug,
            "planName": self.plan_name,
            "quantity": self.quantity,
            "unitPrice": format_amount(self.unit_price),
            "total": format_amount(self.total),
            "currency": "USD",
            "reason": self.reason,
            "proposedBy": self.proposed_by,
            "proposedAt": self.proposed_at,
            "expiresAt": self.expires_at,
            "digest": self.digest,
            "status": standing.key(),
        });
        if let Some(decision) = &self.decision {
            value["decidedBy"] = serde_json::json!(decision.by);
            value["decidedAt"] = serde_json::json!(decision.at);
        }
        match standing {
            Standing::Refused { why } | Standing::Unknown { why } => value["why"] = serde_json::json!(why),
            Standing::Paid { order_no } => value["orderNo"] = serde_json::json!(order_no),
            _ => {}
        }
        value
    }
}

/// The digest a request is bound by: the account, what is paid and its total. An approval
/// pays only when the payment checked at that moment has the same.
pub fn digest(account: &str, spend: &Spend, total: Decimal) -> String {
    use sha2::Digest;
    let iccid = spend.what.iccid().map_or("", Iccid::as_str);
    let what = format!(
        "esimdash request\0{account}\0{}\0{iccid}\0{}\0{}\0{}",
        spend.what.action(),
        spend.slug,
        spend.qty,
        format_amount(total)
    );
    esimdash_domain::text::hex(&sha2::Sha256::digest(what.as_bytes())[..16])
}

/// A new request's id: `rq-` and 12 random letters and digits (only these ever name a file).
pub fn new_id() -> String {
    const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyz23456789";
    let letters: String = (0..12)
        .map(|_| char::from(ALPHABET[fastrand::usize(..ALPHABET.len())]))
        .collect();
    format!("rq-{letters}")
}

/// Whether `id` has a request id's shape: anything else names no file.
pub fn is_id(id: &str) -> bool {
    id.len() == 15 && id.starts_with("rq-") && id[3..].bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// A new request, proposed now.
pub struct Proposal<'a> {
    pub account: &'a str,
    pub spend: &'a Spend,
    pub plan_name: &'a str,
    pub unit_price: Decimal,
    pub total: Decimal,
    pub reason: &'a str,
    pub proposed_by: &'a str,
}

impl Proposal<'_> {
    pub fn request(&self, now: DateTime<Utc>) -> Request {
        let clean = |s: &str| esimdash_domain::text::sanitize(s).into_owned();
        Request {
            id: new_id(),
            action: self.spend.what.action().to_string(),
            iccid: self.spend.what.iccid().map(|i| i.as_str().to_string()),
            slug: self.spend.slug.clone(),
            plan_name: clean(self.plan_name),
            quantity: self.spend.qty,
            unit_price: self.unit_price,
            total: self.total,
            reason: clean(&self.reason.chars().take(MOST_REASON).collect::<String>()),
            proposed_by: clean(self.proposed_by),
            proposed_at: now,
            expires_at: now + LIFETIME,
            digest: digest(self.account, self.spend, self.total),
            decision: None,
        }
    }
}

/// One account's requests in the state folder.
#[derive(Debug, Clone)]
pub struct Requests {
    dir: PathBuf,
    lock: PathBuf,
    /// The account's id, which the digests bind.
    account: String,
}

/// Held while a request is decided and paid.
pub struct Held {
    _file: std::fs::File,
}

#[derive(Debug, thiserror::Error)]
pub enum RequestsError {
    #[error("the requests in {path} could not be read or written: {source}")]
    Io { path: String, source: std::io::Error },
    #[error("no request {0:?} in this account")]
    NotFound(String),
    #[error("the request file {0} is not one esimdash wrote (refused, nothing paid)")]
    Unreadable(String),
    #[error("{MOST_PENDING} requests wait for a person already: approve or refuse them first")]
    TooMany,
    #[error("another esimdash has been deciding a request of this account for {0} s; try again")]
    Busy(u64),
}

impl Requests {
    /// The requests of the account `account` (its id in the state folder) kept in `state`.
    pub fn at(state: &std::path::Path, account: &str) -> Self {
        let root = state.join("requests");
        Self {
            dir: root.join(account),
            lock: root.join(format!("{account}.lock")),
            account: account.to_string(),
        }
    }

    /// The account's id, which the digests bind.
    pub fn account(&self) -> &str {
        &self.account
    }

    /// The requests of the client's account, where it has a state folder.
    pub fn of(client: &esimdash_api::Client) -> Option<Self> {
        client.state_place().map(|(dir, account)| Self::at(&dir, &account))
    }

    fn io(&self, source: std::io::Error) -> RequestsError {
        RequestsError::Io {
            path: self.dir.display().to_string(),
            source,
        }
    }

    fn path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    /// Writes a new request; refused while too many wait.
    pub fn propose(&self, request: &Request, now: DateTime<Utc>) -> Result<(), RequestsError> {
        let waiting = self
            .list()?
            .iter()
            .filter(|r| r.decision.is_none() && now < r.expires_at)
            .count();
        if waiting >= MOST_PENDING {
            return Err(RequestsError::TooMany);
        }
        let bytes = serde_json::to_vec_pretty(request).map_err(|e| self.io(std::io::Error::other(e)))?;
        let mut file = esimdash_files::create_new(&self.path(&request.id)).map_err(|e| self.io(e))?;
        std::io::Write::write_all(&mut file, &bytes)
            .and_then(|()| file.sync_all())
            .map_err(|e| self.io(e))
    }

    /// The request `id`.
    pub fn read(&self, id: &str) -> Result<Request, RequestsError> {
        if !is_id(id) {
            return Err(RequestsError::NotFound(
                esimdash_domain::text::sanitize(id).into_owned(),
            ));
        }
        let path = self.path(id);
        let bytes = match esimdash_files::read_regular_at_most(&path, MOST_BYTES) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Err(RequestsError::Unreadable(path.display().to_string())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(RequestsError::NotFound(id.to_string())),
            Err(e) => return Err(self.io(e)),
        };
        match serde_json::from_slice::<Request>(&bytes) {
            Ok(request) if request.id == id => Ok(request),
            _ => Err(RequestsError::Unreadable(path.display().to_string())),
        }
    }

    /// Every request kept (the newest `MOST_FILES`), newest first; a file that is not one is
    /// skipped with a warning.
    pub fn list(&self) -> Result<Vec<Request>, RequestsError> {
        let entries = match std::fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(self.io(e)),
        };
        // The newest files first: past `MOST_FILES`, the oldest are a record nobody waits on.
        let mut ids: Vec<(std::time::SystemTime, String)> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let id = e.file_name().to_str()?.strip_suffix(".json")?.to_string();
                let modified = e.metadata().ok()?.modified().ok()?;
                is_id(&id).then_some((modified, id))
            })
            .collect();
        ids.sort_unstable_by(|a, b| b.cmp(a));
        ids.truncate(MOST_FILES);
        let mut requests: Vec<Request> = ids
            .iter()
            .filter_map(|(_, id)| {
                self.read(id)
                    .inspect_err(|e| tracing::warn!(%e, "a request skipped"))
                    .ok()
            })
            .collect();
        requests.sort_by(|a, b| b.proposed_at.cmp(&a.proposed_at).then_with(|| a.id.cmp(&b.id)));
        Ok(requests)
    }

    /// The account's request lock, waited for at most `patience`.
    pub async fn hold(&self, patience: std::time::Duration) -> Result<Held, RequestsError> {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            if let Some(file) = esimdash_files::hold_if_free(&self.lock).map_err(|e| self.io(e))? {
                return Ok(Held { _file: file });
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(RequestsError::Busy(patience.as_secs()));
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Writes a person's decision on a request (the lock held: `_held`).
    pub fn decide(&self, _held: &Held, request: &Request, decision: Decision) -> Result<Request, RequestsError> {
        let decided = Request {
            decision: Some(decision),
            ..request.clone()
        };
        let bytes = serde_json::to_vec_pretty(&decided).map_err(|e| self.io(std::io::Error::other(e)))?;
        esimdash_files::write_whole(&self.path(&request.id), |out| out.write_all(&bytes)).map_err(|e| self.io(e))?;
        Ok(decided)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proposal_for(spend: &Spend) -> Request {
        Proposal {
            account: "acct",
            spend,
            plan_name: "France 1GB\u{202E}",
            unit_price: Decimal::new(250, 2),
            total: Decimal::new(500, 2),
            reason: "the customer asked",
            proposed_by: "assistant",
        }
        .request(Utc::now())
    }

    #[tokio::test]
    async fn a_request_is_written_read_and_decided_once_under_the_lock() {
        let dir = tempfile::tempdir().unwrap();
        let store = Requests::at(dir.path(), "acct");
        let spend = Spend::order("fr-1gb", 2);
        let request = proposal_for(&spend);
        assert!(is_id(&request.id), "{}", request.id);
        assert_eq!(request.plan_name, "France 1GB\u{FFFD}", "shown text only");
        store.propose(&request, Utc::now()).unwrap();
        assert_eq!(store.read(&request.id).unwrap(), request);
        assert_eq!(store.list().unwrap(), std::slice::from_ref(&request));
        assert!(matches!(
            store.read("../../etc/passwd"),
            Err(RequestsError::NotFound(_))
        ));
        assert!(matches!(store.read("rq-aaaaaaaaaaaa"), Err(RequestsError::NotFound(_))));

        let held = store.hold(std::time::Duration::from_secs(1)).await.unwrap();
        let second = store.hold(std::time::Duration::from_millis(100)).await;
        assert!(matches!(second, Err(RequestsError::Busy(_))), "one holder at a time");
        let decision = Decision {
            by: "ana".into(),
            at: Utc::now(),
            kind: Decided::Approved { key: "k1".into() },
        };
        store.decide(&held, &request, decision).unwrap();
        let read = store.read(&request.id).unwrap();
        assert_eq!(read.standing(&[], Utc::now()), Standing::ApprovedNotSent);
        assert_eq!(request.standing(&[], request.expires_at), Standing::Expired);
    }

    #[test]
    fn the_digest_binds_account_what_and_total() {
        let payload = "898822806660240987";
        let iccid = Iccid::parse(&format!(
            "{payload}{}",
            esimdash_domain::iccid::luhn_check_digit(payload)
        ))
        .unwrap();
        let topup = Spend::topup(iccid, "fr-1gb", 1);
        let base = digest("a", &topup, Decimal::ONE);
        assert_ne!(base, digest("b", &topup, Decimal::ONE));
        assert_ne!(base, digest("a", &topup, Decimal::TWO));
        assert_ne!(base, digest("a", &Spend::order("fr-1gb", 1), Decimal::ONE));
        assert_eq!(
            base,
            digest("a", &topup, Decimal::new(100, 2)),
            "1 and 1.00 are one price"
        );
    }

    #[test]
    fn too_many_pending_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let store = Requests::at(dir.path(), "acct");
        let spend = Spend::order("fr-1gb", 1);
        for _ in 0..MOST_PENDING {
            store.propose(&proposal_for(&spend), Utc::now()).unwrap();
        }
        assert!(matches!(
            store.propose(&proposal_for(&spend), Utc::now()),
            Err(RequestsError::TooMany)
        ));
    }
}
