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

use chrono::{DateTime, Utc};
pub use esimdash_api::requests::*;
use std::path::PathBuf;

/// The most request files read (the newest kept; decided ones are only a record).
const MOST_FILES: usize = 2_000;

/// The most a request file may weigh.
const MOST_BYTES: u64 = 16 * 1024;

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
    use chrono::Utc;
    use esimdash_domain::purchase::Spend;
    use rust_decimal::Decimal;

    fn proposal_for(spend: &Spend) -> Request {
        Proposal {
            account: "acct",
            spend,
            plan_name: "France 1GB\u{202E}",
            unit_price: Decimal::new(250, 2),
            total: Decimal::new(500, 2),
            reason: "the customer asked",
            proposed_by: "assistant",
            unsure: None,
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
