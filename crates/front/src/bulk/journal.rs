//! The bulk journal: one JSON line per step, flushed to disk before a row's payment leaves
//! ("paying row R under key K") and after its outcome. The payment itself goes through the
//! client, which writes the audit trail and settles what a killed session left open; the
//! journal ties each row to its payments' keys, so that a re-run knows which rows were placed,
//! and which payment to ask the trail about.
//!
//! A row is known by what it pays (its eSIM or plan, slug, quantity, and which twin it is), and
//! the journal is the account's, one per kind, not the file's: a file moved, copied, renamed or
//! downloaded again is the same rows and pays nothing twice, and a file edited between runs
//! in place (a row fixed, one added) goes on where it stopped. A run that places every row of
//! its file *closes* the batch of rows it paid; a row placed by a closed batch, or from other
//! rows at another path, is paid again only on purpose (`--again`), and the refusal says when
//! and from which file it was paid. It lives beside the audit trail and is locked
//! while a run uses it: two runs never pay side by side.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

/// One line of the journal: a field that is `None` is left out of it.
#[serde_with::skip_serializing_none]
#[derive(Debug, Default, Serialize, Deserialize)]
struct Line {
    row: Option<String>,
    line: Option<u64>,
    #[serde(default)]
    key: String,
    at: Option<DateTime<Utc>>,
    outcome: Option<Written>,
    /// The content of the file the row was paid from (`batch_of`).
    batch: Option<String>,
    /// That file's path when it was paid: for the user's eyes only, never compared.
    file: Option<String>,
    /// The batches whose every row is placed: their rows are paid again only with `--again`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    closed: Vec<String>,
}

/// What became of a row's payment, as the journal keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "is", rename_all = "snake_case")]
pub enum Written {
    Placed {
        order: String,
    },
    /// Refused (nothing moved): paid again at the next run.
    Failed {
        error: String,
    },
    /// No answer, and the order list could not tell: not paid again without `--again`.
    Unknown {
        error: String,
    },
}

/// A row's last payment: its key, and its outcome once written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    pub key: String,
    pub outcome: Option<Written>,
    /// When it was sent.
    pub at: Option<DateTime<Utc>>,
    /// The file's content it was paid from, and the path it had then.
    pub batch: Option<String>,
    pub file: Option<String>,
    /// It was paid by an earlier run, not the one this run goes on with: its file was placed
    /// whole after it, or it was paid from other rows at another path. Paying the row again
    /// is a new payment, made on purpose.
    pub earlier_run: bool,
    /// The row's last placement, when a later attempt did not place.
    placed_before: Option<Box<Attempt>>,
}

impl Attempt {
    /// "on 2026-11-26 09:12 from /home/ana/rows.csv".
    pub fn when_and_where(&self) -> String {
        let when = self.at.map_or_else(
            || "earlier".to_string(),
            |at| format!("on {}", at.with_timezone(&chrono::Local).format("%Y-%m-%d %H:%M")),
        );
        match &self.file {
            Some(file) => format!("{when} from {}", esimdash_domain::text::sanitize(file)),
            None => when,
        }
    }
}

/// The file a run pays: its content (`batch_of` its rows) and where it is now.
#[derive(Debug, Clone)]
pub struct Source {
    pub batch: String,
    pub file: String,
    /// Written for this run alone (the dashboard's marks): rows other runs paid are not its
    /// business here; the rule against repeats within minutes, read from the trail, guards
    /// them as it guards a single top-up.
    pub own_run: bool,
}

impl Source {
    /// `rows`: the identity of every row (`Row::identity`): the same rows in any order, under
    /// any name, are the same file, unless `own_run`: a file written for one run alone (the
    /// dashboard's marks), which no other file goes on with.
    pub fn of<'a>(kind: &str, rows: impl Iterator<Item = &'a str>, file: &Path, own_run: bool) -> Self {
        use sha2::{Digest, Sha256};
        let mut rows: Vec<&str> = rows.collect();
        rows.sort_unstable();
        let mut hash = Sha256::new();
        hash.update(kind.as_bytes());
        for row in rows {
            hash.update([0]);
            hash.update(row.as_bytes());
        }
        let file = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
        if own_run {
            hash.update([1]);
            hash.update(file.as_os_str().as_encoded_bytes());
        }
        Self {
            batch: esimdash_domain::text::hex(&hash.finalize()[..12]),
            file: file.display().to_string(),
            own_run,
        }
    }
}

/// Where and when a key's payment was made.
#[derive(Debug, Clone, Default)]
struct Paid {
    batch: Option<String>,
    file: Option<String>,
    at: Option<DateTime<Utc>>,
}

pub struct Journal {
    path: PathBuf,
    /// `None`: a dry run, which only reads.
    file: Option<File>,
    /// Held while a paying run uses the journal (a file of its own: compacting replaces the
    /// journal's file, and a lock on the old one would keep nobody out).
    _lock: Option<File>,
    source: Source,
    rows: HashMap<String, Attempt>,
    /// Which row each key paid, to file an outcome line under its row.
    row_of: HashMap<String, String>,
    /// Every key of every attempt, the last of each row's and the earlier ones, with the file
    /// it was paid from (its batch and path) and when.
    keys: HashMap<String, Paid>,
    /// When each batch was closed.
    closed: HashMap<String, DateTime<Utc>>,
    lines: usize,
}

/// Where the account's journal of `kind` is kept.
pub fn path_for(dir: &Path, account: &str, kind: &str) -> PathBuf {
    dir.join("bulk").join(format!("{account}-{kind}.jsonl"))
}

/// Why a journal cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("another esimdash is paying bulk rows from this account now (its journal {} is locked); nothing was paid", .0.display())]
    Busy(PathBuf),
    #[error("the journal {}: {}", .0.display(), .1)]
    Io(PathBuf, std::io::Error),
}

/// The name an earlier version gave the journal of `file`: `…-<kind>-<hash of kind and path>`.
fn legacy_name_of(kind: &str, file: &Path) -> String {
    use sha2::{Digest, Sha256};
    let file = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    let mut hash = Sha256::new();
    hash.update(kind.as_bytes());
    hash.update([0]);
    hash.update(file.as_os_str().as_encoded_bytes());
    esimdash_domain::text::hex(&hash.finalize()[..8])
}

/// The file hash in an earlier version's journal name, `<24 hex>-<kind>-<16 hex>.jsonl`.
fn legacy_file_hash(name: &str, kind: &str) -> Option<String> {
    let stem = name.strip_suffix(".jsonl")?;
    let (account, rest) = stem.split_once('-')?;
    let hash = rest.strip_prefix(kind)?.strip_prefix('-')?;
    let hex = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_hexdigit());
    (hex(account, 24) && hex(hash, 16)).then(|| hash.to_string())
}

/// How long a file edited in place (other rows, the same path) goes on with its earlier run.
const EDIT_HOURS: i64 = 24;

/// A journal this many times longer than its rows is rewritten with one line per row.
const COMPACT_AT: usize = 4;

impl Journal {
    /// Opens (or starts) the journal at `path` for a run of `source`, locked for this run when
    /// `lock` (a dry run only reads it, and never keeps a paying run out).
    pub fn open(path: &Path, lock: bool, source: Source) -> Result<Self, JournalError> {
        let failed = |e| JournalError::Io(path.to_path_buf(), e);
        let mut journal = Self {
            path: path.to_path_buf(),
            file: None,
            _lock: None,
            source,
            rows: HashMap::new(),
            row_of: HashMap::new(),
            keys: HashMap::new(),
            closed: HashMap::new(),
            lines: 0,
        };
        if lock {
            match esimdash_files::hold_if_free(&path.with_extension("lock")).map_err(failed)? {
                Some(held) => journal._lock = Some(held),
                None => return Err(JournalError::Busy(path.to_path_buf())),
            }
        } else if !path.exists() {
            return Ok(journal);
        }
        let bytes = match esimdash_files::read_regular(path) {
            Err(e) if lock && e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            read => read.map_err(failed)?,
        };
        // A line torn by a full disk may end inside a character: read as it is, and skipped.
        let text = String::from_utf8_lossy(&bytes);
        for line in text.lines() {
            // A line cut short by a kill is the last one, and was never acted on: its payment
            // had not been started (the line is on disk before it is).
            if let Ok(line) = serde_json::from_str::<Line>(line) {
                journal.apply(line);
            }
            journal.lines += 1;
        }
        if lock {
            if journal.lines > COMPACT_AT * journal.rows.len() + 1000 {
                journal.compact().map_err(failed)?;
            }
            let mut file = esimdash_files::open_append(path).map_err(failed)?;
            if !text.is_empty() && !text.ends_with('\n') {
                file.write_all(b"\n").map_err(failed)?;
            }
            journal.file = Some(file);
        }
        Ok(journal)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The row's last payment, if it had one.
    pub fn attempt(&self, row: &str) -> Option<Attempt> {
        let last = self.rows.get(row)?;
        // Refused since (nothing moved): where the row stands is its last placement.
        let attempt = match (&last.outcome, &last.placed_before) {
            (Some(Written::Failed { .. }), Some(placed)) => placed.as_ref(),
            _ => last,
        };
        let same_file = self.of_this_file(attempt);
        if self.source.own_run && !same_file {
            return None;
        }
        Some(Attempt {
            earlier_run: self.is_closed(attempt) || !same_file,
            ..attempt.clone()
        })
    }

    /// Whether the attempt was paid from this file: the same rows, or the same path within a
    /// day (a file edited in place to go on; a month's file written over last month's at the
    /// same path is another file).
    fn of_this_file(&self, attempt: &Attempt) -> bool {
        let recent = attempt
            .at
            .is_some_and(|at| Utc::now() - at < chrono::Duration::hours(EDIT_HOURS));
        attempt.batch.as_ref() == Some(&self.source.batch)
            || (recent && attempt.file.as_ref() == Some(&self.source.file))
    }

    /// Whether the attempt's batch was closed after it was sent.
    fn is_closed(&self, attempt: &Attempt) -> bool {
        let closed = attempt.batch.as_ref().and_then(|b| self.closed.get(b));
        closed.is_some_and(|closed| attempt.at.is_none_or(|at| at <= *closed))
    }

    /// The payment keys of this file's runs (every attempt, the last of each row's and the
    /// earlier ones): the rule against repeats does not count them as payments made elsewhere.
    pub fn keys(&self) -> HashSet<&str> {
        self.keys
            .iter()
            .filter(|(_, p)| p.batch.as_ref() == Some(&self.source.batch) || p.file.as_ref() == Some(&self.source.file))
            .map(|(k, _)| k.as_str())
            .collect()
    }

    /// Written before the row's payment is sent under `key`.
    pub fn paying(&mut self, row: &str, line: u64, key: &str) -> Result<(), JournalError> {
        self.append(Line {
            row: Some(row.to_string()),
            line: Some(line),
            key: key.to_string(),
            at: Some(Utc::now()),
            batch: Some(self.source.batch.clone()),
            file: Some(self.source.file.clone()),
            ..Line::default()
        })
    }

    /// What became of the payment under `key`.
    pub fn outcome(&mut self, key: &str, outcome: Written) -> Result<(), JournalError> {
        self.append(Line {
            key: key.to_string(),
            at: Some(Utc::now()),
            outcome: Some(outcome),
            ..Line::default()
        })
    }

    /// Takes in, once, the journals of versions that kept one per address and file
    /// (`<account>-<kind>-<file hash>.jsonl`): an upgrade pays no placed row again. Only the
    /// payments of this account (`ours`: the keys its trail knows) are taken; the rows of the
    /// old journal of `file` itself go on as this file's, the others are "paid by an earlier
    /// run".
    pub fn adopt_legacy(
        &mut self,
        dir: &Path,
        kind: &str,
        ours: &HashSet<&str>,
        file: &Path,
    ) -> Result<(), JournalError> {
        // Only into a journal that has no line yet: taken in once.
        if self.lines > 0 {
            return Ok(());
        }
        let own = legacy_name_of(kind, file);
        let Ok(entries) = std::fs::read_dir(dir.join("bulk")) else {
            return Ok(());
        };
        let mut adopted = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(hash) = legacy_file_hash(&name, kind) else {
                continue;
            };
            let Ok(bytes) = esimdash_files::read_regular(&entry.path()) else {
                continue;
            };
            // The old journal of this very file goes on as this file's run, as it did then.
            let (batch, from) = if hash == own {
                (Some(self.source.batch.clone()), self.source.file.clone())
            } else {
                (None, "a journal of an earlier esimdash".to_string())
            };
            let mut keys = HashSet::new();
            for line in String::from_utf8_lossy(&bytes).lines() {
                let Ok(mut line) = serde_json::from_str::<Line>(line) else {
                    continue;
                };
                if line.row.is_some() && ours.contains(line.key.as_str()) {
                    keys.insert(line.key.clone());
                    line.file = Some(from.clone());
                    line.batch.clone_from(&batch);
                } else if !keys.contains(&line.key) {
                    continue;
                }
                adopted.push(line);
            }
        }
        // In one write and one sync: an old journal may hold many rows.
        let failed = |e| JournalError::Io(self.path.clone(), e);
        let mut text = String::new();
        for line in &adopted {
            text.push_str(&serde_json::to_string(line).map_err(|e| failed(e.into()))?);
            text.push('\n');
        }
        if let Some(journal) = &mut self.file {
            journal.write_all(text.as_bytes()).map_err(failed)?;
            journal.sync_data().map_err(failed)?;
        }
        self.lines += adopted.len();
        for line in adopted {
            self.apply(line);
        }
        Ok(())
    }

    /// Every row of the file is placed: the batches they were paid in are closed, and paying
    /// these rows again takes `--again`.
    pub fn close<'a>(&mut self, rows: impl Iterator<Item = &'a str>) -> Result<(), JournalError> {
        let mut batches: Vec<String> = rows
            .filter_map(|r| self.rows.get(r))
            .filter(|a| !self.is_closed(a))
            .filter_map(|a| a.batch.clone())
            .collect::<HashSet<_>>()
            .into_iter()
            .collect();
        if batches.is_empty() {
            return Ok(());
        }
        batches.sort_unstable();
        self.append(Line {
            at: Some(Utc::now()),
            closed: batches,
            ..Line::default()
        })
    }

    fn append(&mut self, line: Line) -> Result<(), JournalError> {
        let failed = |e| JournalError::Io(self.path.clone(), e);
        let mut text = serde_json::to_string(&line).map_err(|e| failed(e.into()))?;
        text.push('\n');
        // One write, then on disk before anything else happens.
        if let Some(file) = &mut self.file {
            file.write_all(text.as_bytes()).map_err(failed)?;
            file.sync_data().map_err(failed)?;
        }
        self.apply(line);
        Ok(())
    }

    fn apply(&mut self, line: Line) {
        if !line.closed.is_empty() {
            let at = line.at.unwrap_or_else(Utc::now);
            for batch in line.closed {
                self.closed.insert(batch, at);
            }
            return;
        }
        if line.key.is_empty() {
            return;
        }
        match (line.row, line.outcome) {
            (Some(row), outcome) => {
                let paid = Paid {
                    batch: line.batch.clone(),
                    file: line.file.clone(),
                    at: line.at,
                };
                self.keys.insert(line.key.clone(), paid);
                self.row_of.insert(line.key.clone(), row.clone());
                // A placement is never forgotten for a later attempt that did not place: a
                // file placed whole, paid again on purpose and refused, stays paid.
                let placed_before = self.rows.remove(&row).and_then(|earlier| {
                    if matches!(earlier.outcome, Some(Written::Placed { .. })) {
                        Some(Box::new(Attempt {
                            placed_before: None,
                            ..earlier
                        }))
                    } else {
                        earlier.placed_before
                    }
                });
                self.rows.insert(
                    row,
                    Attempt {
                        key: line.key,
                        outcome,
                        at: line.at,
                        batch: line.batch,
                        file: line.file,
                        earlier_run: false,
                        placed_before,
                    },
                );
            }
            (None, Some(outcome)) => {
                let attempt = self.row_of.get(&line.key).and_then(|row| self.rows.get_mut(row));
                if let Some(attempt) = attempt.filter(|a| a.key == line.key) {
                    attempt.outcome = Some(outcome);
                }
            }
            // A key kept by compaction, of an attempt no longer a row's last.
            (None, None) => {
                let paid = Paid {
                    batch: line.batch,
                    file: line.file,
                    at: line.at,
                };
                self.keys.insert(line.key, paid);
            }
        }
    }

    /// Rewrites the journal with each row's last payment (and the closed batches) alone: a
    /// journal read at every run must not grow with every run. Written whole, so a kill leaves
    /// one whole journal or the other.
    fn compact(&mut self) -> std::io::Result<()> {
        let mut text = String::new();
        // A closed batch no row's last payment belongs to any more closes nothing.
        let live: HashSet<&String> = self.rows.values().filter_map(|a| a.batch.as_ref()).collect();
        let mut closed: Vec<(&String, &DateTime<Utc>)> = self.closed.iter().filter(|(b, _)| live.contains(b)).collect();
        closed.sort();
        let mut rows: Vec<(&String, &Attempt)> = self.rows.iter().collect();
        rows.sort_by_key(|(_, a)| a.at);
        let mut kept = HashSet::new();
        for (row, last) in rows {
            // The placement a later attempt did not undo first, then the last attempt.
            for a in last.placed_before.as_deref().into_iter().chain([last]) {
                kept.insert(a.key.as_str());
                let line = Line {
                    row: Some(row.clone()),
                    key: a.key.clone(),
                    at: a.at,
                    outcome: a.outcome.clone(),
                    batch: a.batch.clone(),
                    file: a.file.clone(),
                    ..Line::default()
                };
                text.push_str(&serde_json::to_string(&line).map_err(std::io::Error::other)?);
                text.push('\n');
            }
        }
        // Earlier keys within the repeat window: the rule against repeats still knows them as
        // this file's payments (older ones are past it).
        let window = chrono::Duration::from_std(esimdash_api::REPEAT_WINDOW).unwrap_or_default();
        let recent = Utc::now() - window;
        for (key, paid) in self
            .keys
            .iter()
            .filter(|(k, p)| !kept.contains(k.as_str()) && p.at.is_some_and(|at| at > recent))
        {
            let line = Line {
                key: key.clone(),
                at: paid.at,
                batch: paid.batch.clone(),
                file: paid.file.clone(),
                ..Line::default()
            };
            text.push_str(&serde_json::to_string(&line).map_err(std::io::Error::other)?);
            text.push('\n');
        }
        // The closing lines last: each closes the rows paid before it, as it did.
        for (batch, at) in closed {
            let line = Line {
                at: Some(*at),
                closed: vec![batch.clone()],
                ..Line::default()
            };
            text.push_str(&serde_json::to_string(&line).map_err(std::io::Error::other)?);
            text.push('\n');
        }
        esimdash_files::write_whole(&self.path, |out| out.write_all(text.as_bytes()))?;
        self.lines = text.lines().count();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn source(name: &str, rows: &[&str]) -> Source {
        Source::of("topup", rows.iter().copied(), Path::new(name), false)
    }

    #[test]
    fn a_file_is_its_rows_whatever_its_name_or_order() {
        let a = source("/one/rows.csv", &["x#1", "y#1"]);
        let b = source("/archive/copy.csv", &["y#1", "x#1"]);
        assert_eq!(a.batch, b.batch);
        assert_ne!(a.file, b.file);
        assert_ne!(a.batch, source("/one/rows.csv", &["x#1", "y#2"]).batch);
    }

    #[test]
    fn a_reopened_journal_knows_each_rows_last_payment_and_one_run_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_for(dir.path(), "acct", "topup");
        let rows = ["a#1", "b#1", "c#1"];
        let src = || source("/nowhere/rows.csv", &rows);
        assert!(Journal::open(&path, false, src()).unwrap().attempt("a#1").is_none());
        assert!(!path.exists(), "a dry run leaves no journal behind");
        let mut journal = Journal::open(&path, true, src()).unwrap();
        assert!(matches!(Journal::open(&path, true, src()), Err(JournalError::Busy(_))));
        assert!(
            Journal::open(&path, false, src()).is_ok(),
            "a dry run reads it all the same"
        );
        journal.paying("a#1", 2, "k1").unwrap();
        journal.outcome("k1", Written::Failed { error: "402".into() }).unwrap();
        journal.paying("a#1", 2, "k2").unwrap();
        journal.paying("b#1", 3, "k3").unwrap();
        journal.outcome("k3", Written::Placed { order: "B1".into() }).unwrap();
        drop(journal);
        // A kill in the middle of a line leaves it torn: it is skipped, and the next is whole.
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(br#"{"row":"c#1","line":4,"ke"#).unwrap();
        drop(file);
        let mut journal = Journal::open(&path, true, src()).unwrap();
        let a = journal.attempt("a#1").unwrap();
        assert_eq!((a.key.as_str(), &a.outcome), ("k2", &None), "the last attempt, open");
        assert_eq!(
            journal.attempt("b#1").unwrap().outcome,
            Some(Written::Placed { order: "B1".into() })
        );
        assert!(journal.attempt("c#1").is_none());
        journal.paying("c#1", 4, "k4").unwrap();
        drop(journal);
        let journal = Journal::open(&path, true, src()).unwrap();
        assert_eq!(journal.attempt("c#1").unwrap().key, "k4");
        let b = journal.attempt("b#1").unwrap();
        assert_eq!(
            b.outcome,
            Some(Written::Placed { order: "B1".into() }),
            "its outcome read back"
        );
        assert!(
            b.when_and_where().ends_with("from /nowhere/rows.csv"),
            "{}",
            b.when_and_where()
        );
        assert!(!b.earlier_run, "the run goes on");
        drop(journal);
        // Edited in place (a row added): the same run goes on. Other rows at another path: the
        // rows it shares were paid by an earlier run.
        let edited = Journal::open(&path, false, source("/nowhere/rows.csv", &["b#1", "d#1"])).unwrap();
        assert!(!edited.attempt("b#1").unwrap().earlier_run);
        let other = Journal::open(&path, false, source("/elsewhere/more.csv", &["b#1", "d#1"])).unwrap();
        assert!(other.attempt("b#1").unwrap().earlier_run);
    }

    #[test]
    fn a_file_placed_whole_is_closed_wherever_it_moves_and_a_long_journal_is_compacted() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_for(dir.path(), "acct", "topup");
        let rows = ["a#1", "b#1"];
        let mut journal = Journal::open(&path, true, source("/in/rows.csv", &rows)).unwrap();
        for (n, row) in rows.iter().enumerate() {
            let key = format!("k{n}");
            journal.paying(row, 2, &key).unwrap();
            journal
                .outcome(&key, Written::Placed { order: format!("O{n}") })
                .unwrap();
        }
        assert!(
            !journal.attempt("a#1").unwrap().earlier_run,
            "not before the file is placed whole"
        );
        journal.close(rows.iter().copied()).unwrap();
        assert!(journal.attempt("a#1").unwrap().earlier_run);
        drop(journal);
        let moved = Journal::open(&path, false, source("/archive/rows.csv", &rows)).unwrap();
        let a = moved.attempt("a#1").unwrap();
        assert!(a.earlier_run && a.when_and_where().contains("/in/rows.csv"), "{a:?}");
        // A row refused 1 200 times yesterday: the journal is rewritten short, and still knows
        // it all. Then a's payment again on purpose, refused: a stays placed.
        let yesterday = Utc::now() - chrono::Duration::hours(30);
        let mut text = String::new();
        for n in 0..1200 {
            let key = format!("z{n}");
            let paying = Line {
                row: Some("z#1".into()),
                key: key.clone(),
                at: Some(yesterday),
                batch: Some("other".into()),
                ..Line::default()
            };
            let refused = Line {
                key,
                outcome: Some(Written::Failed { error: "no".into() }),
                ..Line::default()
            };
            for line in [paying, refused] {
                text.push_str(&serde_json::to_string(&line).unwrap());
                text.push('\n');
            }
        }
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(text.as_bytes()).unwrap();
        drop(file);
        let mut journal = Journal::open(&path, true, source("/in/rows.csv", &rows)).unwrap();
        journal.paying("a#1", 2, "again").unwrap();
        journal
            .outcome("again", Written::Failed { error: "402".into() })
            .unwrap();
        drop(journal);
        let journal = Journal::open(&path, true, source("/in/rows.csv", &rows)).unwrap();
        let lines = std::fs::read_to_string(&path).unwrap().lines().count();
        assert!(lines < 10, "{lines} lines after compaction");
        let a = journal.attempt("a#1").unwrap();
        assert!(a.earlier_run && a.key == "k0", "the placement, not the refusal: {a:?}");
        assert!(journal.keys().contains("again"), "a key of the repeat window is kept");
        assert_eq!(journal.attempt("z#1").unwrap().key, "z1199");
    }

    #[test]
    fn an_earlier_versions_journals_are_taken_in_once_so_an_upgrade_pays_nothing_again() {
        let dir = tempfile::tempdir().unwrap();
        let bulk = dir.path().join("bulk");
        create_legacy(
            &bulk,
            &legacy_name_of("topup", Path::new("/in/rows.csv")),
            &[("a#1", "k1"), ("b#1", "k2")],
        );
        create_legacy(
            &bulk,
            &legacy_name_of("topup", Path::new("/in/other.csv")),
            &[("c#1", "k3"), ("d#1", "theirs")],
        );
        let ours: HashSet<&str> = ["k1", "k2", "k3"].into();
        let path = path_for(dir.path(), "acct", "topup");
        let mut journal = Journal::open(&path, true, source("/in/rows.csv", &["a#1", "b#1"])).unwrap();
        journal
            .adopt_legacy(dir.path(), "topup", &ours, Path::new("/in/rows.csv"))
            .unwrap();
        let a = journal.attempt("a#1").unwrap();
        assert!(
            matches!(a.outcome, Some(Written::Placed { .. })) && !a.earlier_run,
            "goes on: {a:?}"
        );
        assert!(
            journal.attempt("c#1").unwrap().earlier_run,
            "another file's row: paid before"
        );
        assert!(
            journal.attempt("d#1").is_none(),
            "another account's payment is not taken"
        );
        drop(journal);
        let journal = Journal::open(&path, true, source("/in/rows.csv", &["a#1", "b#1"])).unwrap();
        assert!(journal.attempt("b#1").is_some(), "kept in the new journal");
    }

    #[test]
    fn a_file_written_over_at_the_same_path_after_a_day_is_another_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_for(dir.path(), "acct", "topup");
        let line = Line {
            row: Some("a#1".into()),
            key: "k1".into(),
            at: Some(Utc::now() - chrono::Duration::days(30)),
            outcome: Some(Written::Placed { order: "O1".into() }),
            batch: Some("last-month".into()),
            file: Some("/in/rows.csv".into()),
            ..Line::default()
        };
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("{}\n", serde_json::to_string(&line).unwrap())).unwrap();
        let journal = Journal::open(&path, false, source("/in/rows.csv", &["a#1", "b#1"])).unwrap();
        let a = journal.attempt("a#1").unwrap();
        assert!(a.earlier_run, "paid last month: again only on purpose: {a:?}");
        let same_rows = Journal::open(
            &path,
            false,
            Source {
                batch: "last-month".into(),
                ..source("/x.csv", &[])
            },
        )
        .unwrap();
        assert!(
            !same_rows.attempt("a#1").unwrap().earlier_run,
            "the same rows go on, whatever their age"
        );
    }

    fn create_legacy(bulk: &Path, hash: &str, rows: &[(&str, &str)]) {
        std::fs::create_dir_all(bulk).unwrap();
        let mut text = String::new();
        for (row, key) in rows {
            text.push_str(&format!(
                r#"{{"row":"{row}","line":2,"key":"{key}","at":"2026-11-01T10:00:00Z"}}"#
            ));
            text.push('\n');
            text.push_str(&format!(
                r#"{{"key":"{key}","outcome":{{"is":"placed","order":"O-{key}"}}}}"#
            ));
            text.push('\n');
        }
        std::fs::write(bulk.join(format!("0123456789abcdef01234567-topup-{hash}.jsonl")), text).unwrap();
    }

    #[test]
    fn the_journal_of_100_000_rows_is_read_in_one_pass() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("large.jsonl");
        let mut text = String::new();
        for i in 0..100_000 {
            let paying = Line {
                row: Some(format!("r{i}#1")),
                line: Some(i + 2),
                key: format!("k{i}"),
                ..Line::default()
            };
            let placed = Line {
                key: format!("k{i}"),
                outcome: Some(Written::Placed { order: format!("B{i}") }),
                ..Line::default()
            };
            for line in [paying, placed] {
                text.push_str(&serde_json::to_string(&line).unwrap());
                text.push('\n');
            }
        }
        std::fs::write(&path, text).unwrap();
        let started = std::time::Instant::now();
        let journal = Journal::open(&path, false, source("/in/large.csv", &[])).unwrap();
        let took = started.elapsed();
        assert_eq!(
            journal.attempt("r99999#1").unwrap().outcome,
            Some(Written::Placed { order: "B99999".into() })
        );
        // Each outcome found its row by a scan of the rows once: minutes at this size.
        assert!(took < std::time::Duration::from_secs(10), "{took:?}");
    }
}
