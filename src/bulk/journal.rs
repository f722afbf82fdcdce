//! A bulk file's journal: one JSON line per step, flushed to disk before the step's payment
//! leaves ("paying row R under key K") and after its outcome. The payment itself goes through
//! the client, which writes the audit trail and settles what a killed session left open; the
//! journal ties each row of the file to its payments' keys, so that a re-run knows which rows
//! were placed, and which payment to ask the trail about. It lives beside the audit trail,
//! one per account and file, and is locked while a run uses it: two runs of one file never pay
//! side by side.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use std::fs::{File, TryLockError};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// One line of the journal.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Line {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    row: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    line: Option<u64>,
    key: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    outcome: Option<Written>,
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
}

pub struct Journal {
    path: PathBuf,
    /// `None`: a dry run of a file never paid, which leaves no journal behind.
    file: Option<File>,
    rows: HashMap<String, Attempt>,
    /// Every key of every attempt, the last of each row's and the earlier ones, with its row:
    /// an outcome line names only its key, and finds its row here, not by a scan of the rows
    /// (which made reading the journal of 100 000 rows quadratic).
    keys: HashMap<String, String>,
}

/// Where the journal of `file` (for this account and kind) is kept.
pub fn path_for(dir: &Path, account: &str, kind: &str, file: &Path) -> PathBuf {
    use sha2::{Digest, Sha256};
    let file = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
    let mut hash = Sha256::new();
    hash.update(kind.as_bytes());
    hash.update([0]);
    hash.update(file.as_os_str().as_encoded_bytes());
    let name: String = hash.finalize()[..8].iter().map(|b| format!("{b:02x}")).collect();
    dir.join("bulk").join(format!("{account}-{kind}-{name}.jsonl"))
}

/// Why a journal cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("another esimdash is paying this file now (its journal {} is locked); nothing was paid", .0.display())]
    Busy(PathBuf),
    #[error("the journal {}: {}", .0.display(), .1)]
    Io(PathBuf, std::io::Error),
}

impl Journal {
    /// Opens (or starts) the journal at `path`, locked for this run when `lock` (a dry run
    /// only reads it, and never keeps a paying run out).
    pub fn open(path: &Path, lock: bool) -> Result<Self, JournalError> {
        let failed = |e| JournalError::Io(path.to_path_buf(), e);
        if !lock && !path.exists() {
            return Ok(Self {
                path: path.to_path_buf(),
                file: None,
                rows: HashMap::new(),
                keys: HashMap::new(),
            });
        }
        // Appending: every line goes at the end, whatever was read.
        let mut file = crate::private_file::open_append(path).map_err(failed)?;
        if lock {
            match file.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => return Err(JournalError::Busy(path.to_path_buf())),
                Err(TryLockError::Error(e)) => return Err(failed(e)),
            }
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(failed)?;
        // A line torn by a full disk may end inside a character: read as it is, and skipped.
        let text = String::from_utf8_lossy(&bytes);
        let mut journal = Self {
            path: path.to_path_buf(),
            file: Some(file),
            rows: HashMap::new(),
            keys: HashMap::new(),
        };
        for line in text.lines() {
            // A line cut short by a kill is the last one, and was never acted on: its payment
            // had not been started (the line is on disk before it is).
            if let Ok(line) = serde_json::from_str::<Line>(line) {
                journal.apply(line);
            }
        }
        if let Some(file) = journal
            .file
            .as_mut()
            .filter(|_| !text.is_empty() && !text.ends_with('\n'))
        {
            file.write_all(b"\n").map_err(failed)?;
        }
        Ok(journal)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The row's last payment, if it had one.
    pub fn attempt(&self, row: &str) -> Option<&Attempt> {
        self.rows.get(row)
    }

    /// Every payment key the journal names: the payments of this file.
    pub fn keys(&self) -> HashSet<&str> {
        self.keys.keys().map(String::as_str).collect()
    }

    /// Written before the row's payment is sent under `key`.
    pub fn paying(&mut self, row: &str, line: u64, key: &str) -> Result<(), JournalError> {
        self.append(Line {
            row: Some(row.to_string()),
            line: Some(line),
            key: key.to_string(),
            at: Some(Utc::now()),
            outcome: None,
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
        match (line.row, line.outcome) {
            (Some(row), outcome) => {
                self.keys.insert(line.key.clone(), row.clone());
                self.rows.insert(row, Attempt { key: line.key, outcome });
            }
            (None, outcome) => {
                let row = self.keys.entry(line.key.clone()).or_default();
                // Only the row's last attempt takes it: an earlier key's outcome is history.
                let attempt = self.rows.get_mut(row.as_str()).filter(|a| a.key == line.key);
                if let (Some(attempt), Some(outcome)) = (attempt, outcome) {
                    attempt.outcome = Some(outcome);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reopened_journal_knows_each_rows_last_payment_and_one_run_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_for(dir.path(), "acct", "topup", Path::new("/nowhere/rows.csv"));
        assert!(Journal::open(&path, false).unwrap().attempt("a#1").is_none());
        assert!(!path.exists(), "a dry run leaves no journal behind");
        let mut journal = Journal::open(&path, true).unwrap();
        assert!(matches!(Journal::open(&path, true), Err(JournalError::Busy(_))));
        assert!(Journal::open(&path, false).is_ok(), "a dry run reads it all the same");
        journal.paying("a#1", 2, "k1").unwrap();
        journal.outcome("k1", Written::Failed { error: "402".into() }).unwrap();
        journal.paying("a#1", 2, "k2").unwrap();
        // An earlier attempt's outcome told late is history: the row's last attempt stays open.
        journal.outcome("k1", Written::Failed { error: "late".into() }).unwrap();
        journal.paying("b#1", 3, "k3").unwrap();
        journal.outcome("k3", Written::Placed { order: "B1".into() }).unwrap();
        drop(journal);
        // A kill in the middle of a line leaves it torn: it is skipped, and the next is whole.
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(br#"{"row":"c#1","line":4,"ke"#).unwrap();
        drop(file);
        let mut journal = Journal::open(&path, true).unwrap();
        let a = journal.attempt("a#1").unwrap();
        assert_eq!((a.key.as_str(), &a.outcome), ("k2", &None), "the last attempt, open");
        assert_eq!(
            journal.attempt("b#1").unwrap().outcome,
            Some(Written::Placed { order: "B1".into() })
        );
        assert!(journal.attempt("c#1").is_none());
        journal.paying("c#1", 4, "k4").unwrap();
        drop(journal);
        let journal = Journal::open(&path, true).unwrap();
        assert_eq!(journal.attempt("c#1").unwrap().key, "k4");
        assert_eq!(
            journal.attempt("b#1").unwrap().outcome,
            Some(Written::Placed { order: "B1".into() }),
            "its outcome read back"
        );
        assert!(
            journal.keys().contains("k1"),
            "an earlier attempt's key is the file's too"
        );
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
        let journal = Journal::open(&path, false).unwrap();
        let took = started.elapsed();
        assert_eq!(
            journal.attempt("r99999#1").unwrap().outcome,
            Some(Written::Placed { order: "B99999".into() })
        );
        // Each outcome found its row by a scan of the rows here: minutes at this size.
        assert!(took < std::time::Duration::from_secs(10), "{took:?}");
    }
}
