//! The audit trail: one JSON line per stage of every request that moves money or changes the
//! profile, appended to `audit.jsonl` in the XDG state directory (mode 0600). The API client
//! writes it, so no screen or command can pay without a line; the "sent" line is on disk before
//! the request leaves. It never holds the secret key.

use chrono::{DateTime, Utc};
use esimdash_domain::iccid::EsimIccid;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The stages of one request, in the order they happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// A caller asked for it (after the user confirmed).
    Asked,
    /// It is about to leave: written and flushed first.
    Sent,
    /// The server answered 2xx.
    Answered,
    /// Not done: the server refused it, or the client did (read-only).
    Refused,
    /// No answer came; it may or may not have been carried out.
    Unknown,
    /// After an unknown outcome: what the order list showed.
    LookedUp,
    /// A later session settled a payment whose own session ended without its outcome (killed,
    /// hung up): sent again under its key, looked up in the order list, or never sent at all.
    Settled,
}

impl Stage {
    pub fn label(self) -> &'static str {
        match self {
            Stage::Asked => "asked",
            Stage::Sent => "sent",
            Stage::Answered => "answered",
            Stage::Refused => "refused",
            Stage::Unknown => "unknown",
            Stage::LookedUp => "looked up",
            Stage::Settled => "settled",
        }
    }
}

/// One line of the trail: a field that is `None` is left out of the line.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub time: DateTime<Utc>,
    pub stage: Stage,
    pub profile: String,
    pub api_host: String,
    pub access_code: String,
    /// The account the guards know it by (`account_of`); `None` on a line of a version that
    /// knew an account by its access code alone.
    pub account: Option<String>,
    /// The local user who ran esimdash.
    pub user: String,
    /// `topup`, `order` or `profile`.
    pub action: String,
    pub iccid: Option<EsimIccid>,
    pub slug: Option<String>,
    pub quantity: Option<u32>,
    /// USD, as a decimal string.
    pub total: Option<String>,
    /// What came of it, in words: "placed", "replayed", the server's refusal, the lookup's finding.
    pub outcome: Option<String>,
    pub order_no: Option<String>,
    pub balance_after: Option<String>,
    /// On an "answered" line: what the payment cost, when that is not the `total` confirmed.
    pub charged: Option<String>,
    pub idempotency_key: Option<String>,
    /// Whether the server echoed the key (it honours keys).
    pub key_echoed: Option<bool>,
    /// 2 for the one resend of a lost answer under the same key.
    pub attempt: Option<u32>,
    /// A profile change: the fields sent.
    pub changes: Option<serde_json::Value>,
    /// On the first "sent" line of a payment: the plan's order numbers that existed before it,
    /// so that a later session can tell its order apart in the order list.
    pub orders_before: Option<Vec<String>>,
    /// On a "looked up" or "settled" line: whether it tells the outcome.
    pub settled: Option<bool>,
    /// On a "looked up" or "settled" line: `false` when the order list showed no such order.
    pub found: Option<bool>,
    /// On a "settled" line: the orders that could each be this payment, when the order list
    /// could not tell which.
    pub candidates: Option<Vec<String>>,
    /// On a payment's lines: `seal`, which only a holder of the account's secret can write. A
    /// payment is sent again from the trail only where its line carries it: the trail is a
    /// record, and a line anyone could add is no instruction to pay.
    pub seal: Option<String>,
    /// On a payment's lines, when an assistant proposed it and a person (`user`) approved it:
    /// the request's id and its proposer.
    pub request: Option<String>,
    pub proposed_by: Option<String>,
    /// The request is kept at the team's gateway: a resend names it there, as the first did.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub request_at_gateway: bool,
}

/// The seal of a payment's line (`Entry::seal`): an HMAC with the account's secret over what a
/// resend would send and where.
pub fn seal(
    secret: &secrecy::SecretString,
    who: &Who,
    key: &str,
    action: &str,
    iccid: Option<&EsimIccid>,
    slug: &str,
    quantity: u32,
) -> String {
    use hmac::{KeyInit, Mac};
    use secrecy::ExposeSecret;
    let Ok(mut mac) = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.expose_secret().as_bytes()) else {
        return String::new();
    };
    let what = format!(
        "esimdash payment\0{}\0{key}\0{action}\0{}\0{slug}\0{quantity}",
        who.account,
        iccid.map_or("", EsimIccid::as_str)
    );
    mac.update(what.as_bytes());
    esimdash_domain::text::hex(&mac.finalize().into_bytes()[..16])
}

impl Entry {
    /// The account the guards know this line's payment by.
    pub fn account(&self) -> &str {
        self.account.as_deref().unwrap_or(&self.access_code)
    }

    /// Whether this line is `who`'s: by the account it names, or on a line of an older
    /// version (no account named) by the access code it was sent with.
    pub fn is_of(&self, who: &Who) -> bool {
        match &self.account {
            Some(account) => *account == who.account,
            None => !who.access_code.is_empty() && crate::credentials::trimmed(&self.access_code) == who.access_code,
        }
    }

    /// Whether this line tells a payment's outcome: answered, refused, settled, or looked up
    /// with an answer from the order list.
    pub fn tells_outcome(&self) -> bool {
        match self.stage {
            Stage::Answered | Stage::Refused | Stage::Settled => true,
            Stage::LookedUp => self.settled == Some(true) || self.order_no.is_some(),
            Stage::Asked | Stage::Sent | Stage::Unknown => false,
        }
    }

    /// A line of `stage` for `action`, the rest empty.
    pub fn new(who: &Who, stage: Stage, action: &str) -> Self {
        Self {
            time: Utc::now(),
            stage,
            profile: who.profile.clone(),
            api_host: who.api_host.clone(),
            access_code: who.access_code.clone(),
            account: Some(who.account.clone()),
            user: who.user.clone(),
            action: action.to_string(),
            iccid: None,
            slug: None,
            quantity: None,
            total: None,
            outcome: None,
            order_no: None,
            balance_after: None,
            charged: None,
            idempotency_key: None,
            key_echoed: None,
            attempt: None,
            changes: None,
            orders_before: None,
            settled: None,
            found: None,
            candidates: None,
            seal: None,
            request: None,
            proposed_by: None,
            request_at_gateway: false,
        }
    }
}

/// Whose requests these are: the same on every line of a session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Who {
    pub profile: String,
    pub api_host: String,
    pub access_code: String,
    /// What the money guards know the account by (`account_of`).
    pub account: String,
    pub user: String,
}

/// The account as the money guards know it: `Credentials::account`, or with `scope` (the demo's
/// sandbox, new with each process) that account on that server instance.
pub fn account_of(account: &str, scope: Option<&str>) -> String {
    match scope {
        Some(scope) => format!("{account} on {scope}"),
        None => account.to_string(),
    }
}

/// The local user's name, from the environment as `id -un` would give it.
pub fn local_user() -> String {
    ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|u| !u.trim().is_empty()))
        .unwrap_or_else(|| "unknown".to_string())
}

/// `esimdash/audit.jsonl` in the XDG state directory (`~/.local/state`), or the local data
/// directory where a system has no state directory.
pub fn default_path() -> Option<PathBuf> {
    dirs::state_dir()
        .or_else(dirs::data_local_dir)
        .map(|d| d.join("esimdash").join("audit.jsonl"))
}

/// A `--since` as a day (`YYYY-MM-DD`, midnight UTC) or an RFC 3339 time: what the trail and a
/// team gateway's journal are read from.
pub fn since(text: &str) -> Result<DateTime<Utc>, String> {
    let text = text.trim();
    if let Ok(day) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(day.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc());
    }
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .map_err(|_| format!("{text:?}: expected YYYY-MM-DD or an RFC 3339 time"))
}

/// Where the trail is written, and for which profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trail {
    pub path: PathBuf,
    pub profile: String,
}

impl Trail {
    /// Appends one line and flushes it to disk before returning. The line goes out in one
    /// write to a file opened for appending, so lines of two processes never interleave; a last
    /// line left without its newline (a full disk, a crash) is closed off first, so that this
    /// entry stands on its own line.
    pub fn append(&self, entry: &Entry) -> std::io::Result<()> {
        // A payment is marked open before its first line, and the mark goes once a line tells
        // its outcome: so a session starts by looking at a directory, not by reading the trail.
        let open = self.open_mark(entry);
        if let (Some(mark), Stage::Asked) = (&open, entry.stage) {
            esimdash_files::create_or_keep(mark)?;
        }
        self.append_line(entry)?;
        if let Some(mark) = open.filter(|_| entry.tells_outcome()) {
            match std::fs::remove_file(&mark) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    tracing::warn!(path = %mark.display(), %e, "an open-payment mark could not be removed");
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The directory where the open payments of one account are marked.
    fn open_dir(&self, account: &str) -> PathBuf {
        let dir = self.path.parent().unwrap_or_else(|| Path::new("."));
        dir.join("open").join(account_id(account))
    }

    /// The mark of a payment's entry (none for a profile change).
    fn open_mark(&self, entry: &Entry) -> Option<PathBuf> {
        let key = entry.idempotency_key.as_deref()?;
        matches!(entry.action.as_str(), "topup" | "order")
            .then(|| self.mark(entry.account(), key))
            .flatten()
    }

    fn mark(&self, account: &str, key: &str) -> Option<PathBuf> {
        let name = mark_name(key);
        (!name.is_empty()).then(|| self.open_dir(account).join(name))
    }

    /// Marks a payment open again (one whose outcome could not be told yet), or forgets its
    /// mark (one whose outcome the trail tells: a mark left behind when its removal failed).
    pub fn set_open(&self, account: &str, key: &str, open: bool) {
        let Some(mark) = self.mark(account, key) else {
            return;
        };
        let done = if open {
            esimdash_files::create_or_keep(&mark)
        } else {
            std::fs::remove_file(&mark)
        };
        if let Err(e) = done.or_else(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                Ok(())
            } else {
                Err(e)
            }
        }) {
            tracing::warn!(path = %mark.display(), %e, "an open-payment mark could not be changed");
        }
    }

    /// The open marks of an account, and whether its trail was read through once with marks
    /// in use (a trail kept before marks existed may hold open payments no mark names).
    pub fn open_marks(&self, account: &str) -> OpenMarks {
        let mut marks = OpenMarks::default();
        let Ok(entries) = std::fs::read_dir(self.open_dir(account)) else {
            return marks;
        };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == SCANNED {
                marks.scanned = true;
            } else {
                marks.names.push(name);
            }
        }
        marks
    }

    /// Notes that the account's whole trail was read and every open payment in it marked.
    pub fn mark_scanned(&self, account: &str) {
        let path = self.open_dir(account).join(SCANNED);
        if let Err(e) = esimdash_files::create_or_keep(&path) {
            tracing::warn!(path = %path.display(), %e, "could not note that the trail was read");
        }
    }

    fn append_line(&self, entry: &Entry) -> std::io::Result<()> {
        let mut file = esimdash_files::open_append(&self.path)?;
        let mut line = Vec::with_capacity(512);
        if ends_torn(&mut file)? {
            line.push(b'\n');
        }
        serde_json::to_writer(&mut line, entry).map_err(std::io::Error::other)?;
        line.push(b'\n');
        file.write_all(&line)?;
        file.sync_data()
    }

    /// Whether an earlier answer for this account (at whatever address) echoed an idempotency
    /// key. (The latest answer that tells: a server can stop honouring keys.)
    pub fn server_echoed_keys(&self, who: &Who) -> bool {
        read(&self.path).is_ok_and(|read| {
            read.entries
                .iter()
                .rev()
                .find(|e| e.key_echoed.is_some() && e.is_of(who))
                .is_some_and(|e| e.key_echoed == Some(true))
        })
    }
}

/// Beside the open marks: the account's trail was read through once (`Trail::mark_scanned`).
const SCANNED: &str = ".scanned";

/// What `Trail::open_marks` found.
#[derive(Debug, Default)]
pub struct OpenMarks {
    pub scanned: bool,
    /// One per open payment, named by `mark_name` of its key.
    pub names: Vec<String>,
}

impl OpenMarks {
    /// Whether nothing but `except`'s payment can be open: the trail need not be read.
    pub fn none_but(&self, except: Option<&str>) -> bool {
        let own = except.map(mark_name);
        self.scanned && self.names.iter().all(|n| Some(n) == own.as_ref())
    }
}

/// A payment's mark file name: its key, kept a plain file name (the key is ours,
/// "esimdash-…", but the trail is a file anyone could edit).
pub fn mark_name(key: &str) -> String {
    key.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-').collect()
}

/// A short name for an account, for the names of the files that guard its money (its lock, its
/// open marks, its bulk journals): a hash of the account as the guards know it (`account_of`:
/// its secret, `Credentials::account`), and of nothing else. The address it was reached by is not
/// part of it: `localhost:8080`, `127.0.0.1:8080` and `http://LOCALHOST:8080/api/v1/` are one
/// account, and so one lock and one rule against paying twice.
pub fn account_id(account: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    hash.update(b"esimdash account\0");
    hash.update(account.as_bytes());
    esimdash_domain::text::hex(&hash.finalize()[..12])
}

/// Whether the file's last byte is not a newline (an entry cut short).
fn ends_torn(file: &mut std::fs::File) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    if file.metadata()?.len() == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8];
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

/// The trail as read: its entries, and the lines that are not entries (by number), which are
/// reported, never dropped silently.
#[derive(Debug, Default)]
pub struct Read {
    pub entries: Vec<Entry>,
    pub unreadable: Vec<usize>,
    /// Of those, the lines cut short as they were written (a full disk, a crash).
    pub torn: Vec<usize>,
}

/// Reads the whole trail; a missing file is an empty trail.
pub fn read(path: &Path) -> std::io::Result<Read> {
    let text = match esimdash_files::read_regular(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Read::default()),
        Err(e) => return Err(e),
    };
    let mut read = Read::default();
    for (n, line) in text.split(|b| *b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Entry>(line) {
            Ok(entry) => read.entries.push(entry),
            Err(e) => {
                if e.is_eof() {
                    read.torn.push(n + 1);
                }
                read.unreadable.push(n + 1);
            }
        }
    }
    Ok(read)
}

/// One payment (a top-up or an order) as the trail tells it: all its lines, by idempotency key.
#[derive(Debug, Clone, PartialEq)]
pub struct PaymentRecord {
    pub key: String,
    /// `topup` or `order`.
    pub action: String,
    pub iccid: Option<EsimIccid>,
    pub slug: String,
    pub quantity: u32,
    pub total: Option<String>,
    pub asked_at: DateTime<Utc>,
    /// When it first left, if it ever did.
    pub sent_at: Option<DateTime<Utc>>,
    /// How many times it was sent.
    pub attempts: u32,
    pub orders_before: Option<Vec<String>>,
    /// Its outcome, once a line tells it; `None`: its session ended before knowing.
    pub outcome: Option<Outcome>,
    /// The seal of the line it was asked with (`Entry::seal`).
    pub seal: Option<String>,
    /// The request kept at a team's gateway that it pays (named again on a resend).
    pub gateway_request: Option<String>,
}

/// What became of a payment, as its last telling line says.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Placed: this order.
    Placed { order_no: String },
    /// Not carried out: refused, or never sent.
    NotPlaced,
    /// The order list showed no such order after its answer was lost: most likely not placed,
    /// but the rule against paying twice still counts it.
    NotFound,
    /// The order list showed more than one order that could be it.
    Ambiguous { orders: Vec<String> },
}

impl Outcome {
    /// Whether money may have moved for it.
    pub fn may_have_paid(&self) -> bool {
        !matches!(self, Outcome::NotPlaced)
    }
}

/// The payments of one account (whatever address they went to), oldest first.
pub fn payments(entries: &[Entry], who: &Who) -> Vec<PaymentRecord> {
    let mut records: Vec<PaymentRecord> = Vec::new();
    let mut index = std::collections::HashMap::new();
    let ours = entries
        .iter()
        .filter(|e| matches!(e.action.as_str(), "topup" | "order") && e.is_of(who));
    for e in ours {
        let Some(key) = &e.idempotency_key else { continue };
        let i = *index.entry(key.clone()).or_insert_with(|| {
            records.push(PaymentRecord {
                key: key.clone(),
                action: e.action.clone(),
                iccid: e.iccid.clone(),
                slug: e.slug.clone().unwrap_or_default(),
                quantity: e.quantity.unwrap_or(1),
                total: e.total.clone(),
                asked_at: e.time,
                sent_at: None,
                attempts: 0,
                orders_before: None,
                outcome: None,
                seal: e.seal.clone(),
                gateway_request: e.request.clone().filter(|_| e.request_at_gateway),
            });
            records.len() - 1
        });
        let record = &mut records[i];
        match e.stage {
            Stage::Asked | Stage::Unknown => {}
            Stage::Sent => {
                // Whatever an earlier line said, it has left now.
                record.outcome = None;
                record.sent_at.get_or_insert(e.time);
                record.attempts += 1;
                if record.orders_before.is_none() {
                    record.orders_before.clone_from(&e.orders_before);
                }
            }
            Stage::Answered => {
                record.outcome = Some(Outcome::Placed {
                    order_no: e.order_no.clone().unwrap_or_default(),
                });
            }
            Stage::Refused => record.outcome = Some(Outcome::NotPlaced),
            Stage::LookedUp | Stage::Settled => {
                if let Some(outcome) = told(e) {
                    record.outcome = Some(outcome);
                }
            }
        }
    }
    records
}

/// What a "looked up" or "settled" line tells, if it tells the outcome.
fn told(e: &Entry) -> Option<Outcome> {
    if let Some(order_no) = &e.order_no {
        return Some(Outcome::Placed {
            order_no: order_no.clone(),
        });
    }
    if e.settled != Some(true) {
        return None;
    }
    match (&e.candidates, e.found) {
        (Some(orders), _) if !orders.is_empty() => Some(Outcome::Ambiguous { orders: orders.clone() }),
        (_, Some(false)) => Some(Outcome::NotFound),
        _ => Some(Outcome::NotPlaced),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who() -> Who {
        Who {
            profile: "live".into(),
            api_host: "api.example".into(),
            access_code: "ak_1".into(),
            account: "key-1".into(),
            user: "ana".into(),
        }
    }

    #[test]
    fn lines_are_appended_private_and_read_back_with_bad_lines_counted() {
        let dir = tempfile::tempdir().unwrap();
        let trail = Trail {
            path: dir.path().join("state/esimdash/audit.jsonl"),
            profile: "live".into(),
        };
        let mut sent = Entry::new(&who(), Stage::Sent, "topup");
        sent.total = Some("12.50".into());
        trail.append(&sent).unwrap();
        let mut answered = Entry::new(&who(), Stage::Answered, "topup");
        answered.key_echoed = Some(true);
        trail.append(&answered).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&trail.path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let mut file = std::fs::OpenOptions::new().append(true).open(&trail.path).unwrap();
        file.write_all(b"{\"truncated\n").unwrap();
        let read = read(&trail.path).unwrap();
        assert_eq!(read.entries, vec![sent, answered]);
        assert_eq!(read.unreadable, vec![3]);
        assert_eq!(read.torn, vec![3], "a line cut short is told apart");
        // The next entry closes the torn line off and stands on its own line.
        let mut after = Entry::new(&who(), Stage::Settled, "topup");
        after.settled = Some(true);
        trail.append(&after).unwrap();
        let read = super::read(&trail.path).unwrap();
        assert_eq!(read.entries.len(), 3);
        assert_eq!(read.entries[2], after);
        assert_eq!(read.unreadable, vec![3]);
        assert!(trail.server_echoed_keys(&who()));
        let other = Who {
            access_code: "ak_2".into(),
            account: "key-2".into(),
            ..who()
        };
        assert!(!trail.server_echoed_keys(&other));
    }
}
