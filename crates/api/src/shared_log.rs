//! The rate budget's log shared by every esimdash process of one key on this machine: a small
//! file in the state folder (`budgets/<account>`), private to the user, that holds the send
//! times reserved in the last window and the server's pause, as wall-clock microseconds (the
//! one clock two processes share). A process reads it, reserves and writes it back while it
//! holds an exclusive `flock` on it; the kernel lets go of a killed holder's lock.
//!
//! It is read as outside data: a line that is not a time is dropped, the file is read to a
//! bound, and a log cut short (a process killed mid-write) only forgets reservations, which
//! the server's own 429 and `Retry-After` then cover.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::time::Instant;

/// The send times kept: the newest this many, enough to hold any limit up to it a window (the
/// API's is 120 a minute). A key said to allow more (a test server) keeps only the server's
/// pause and refusal in the log (`paces`), and each request's read of the log stays small.
const LOG_MOST: usize = 1024;

/// Whether the log's send times can pace a key allowed `limit` a window: it keeps the newest
/// `LOG_MOST`, so past that (a test server's lifted limit) no count of them ever holds a request
/// back, and they are not written (parsing them was a tenth of a whole read's CPU); the server's
/// pause and refusal still are.
pub fn paces(limit: usize) -> bool {
    limit <= LOG_MOST
}

/// More than the log ever holds (a line is at most 25 bytes).
const MAX_BYTES: u64 = 256 * 1024;

/// What the log holds: the send times reserved (oldest first), the server's pause, and until
/// when it refused the key (a 429's `Retry-After`, met by every process of it alike).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Log {
    pub sent: VecDeque<Instant>,
    pub paused_until: Option<Instant>,
    pub refused_until: Option<Instant>,
}

#[derive(Debug)]
pub struct SharedLog {
    file: File,
}

/// Where the log of `account` (`Who::account`) is kept: `budgets/` beside the audit trail.
pub fn path_for(trail: &Path, account: &str) -> PathBuf {
    let dir = trail.parent().unwrap_or_else(|| Path::new("."));
    dir.join("budgets").join(crate::audit::account_id(account))
}

impl SharedLog {
    /// The log at `path`, or `None` (said in the log) where it cannot be opened.
    pub fn open(path: &Path) -> Option<Self> {
        match esimdash_files::open_or_create(path) {
            Ok(file) => Some(Self { file }),
            Err(e) => {
                tracing::warn!(path = %path.display(), %e, "the rate budget is not shared with other processes");
                None
            }
        }
    }

    /// The log, locked until the answer is dropped; `None` (said in the log) where it cannot
    /// be: this process then paces alone.
    pub fn hold(&self) -> Option<Held<'_>> {
        match self.file.lock() {
            Ok(()) => Some(Held {
                log: self,
                clock: Clock::now(),
            }),
            Err(e) => {
                tracing::warn!(%e, "the shared rate budget could not be locked");
                None
            }
        }
    }

    fn read(&self) -> Option<String> {
        let mut file = &self.file;
        file.rewind().ok()?;
        let mut text = String::new();
        file.take(MAX_BYTES).read_to_string(&mut text).ok()?;
        Some(text)
    }

    fn write(&self, text: &str) -> std::io::Result<()> {
        let mut file = &self.file;
        file.set_len(0)?;
        file.rewind()?;
        file.write_all(text.as_bytes())
    }
}

/// The log while this process holds its lock.
pub struct Held<'a> {
    log: &'a SharedLog,
    clock: Clock,
}

impl Held<'_> {
    /// The log's send times and pauses, in place of this process's: those still counting
    /// (`span`: how long a send time counts).
    pub fn read_into(&self, log: &mut Log, span: Duration) {
        if let Some(text) = self.log.read() {
            take_in(log, &text, &self.clock, span);
        }
    }

    /// Writes `log` back for the other processes; its send times only for a key allowed
    /// `limit` a window that the log can pace (`paces`).
    pub fn write_from(&self, log: &Log, span: Duration, limit: usize) {
        if let Err(e) = self.log.write(&written(log, &self.clock, span, paces(limit))) {
            tracing::warn!(%e, "the shared rate budget could not be written");
        }
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        let _ = self.log.file.unlock();
    }
}

/// The two clocks read at one moment: a wall-clock time in the log is a monotonic one here.
struct Clock {
    now: Instant,
    micros: i64,
}

impl Clock {
    fn now() -> Self {
        let micros = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX));
        Self {
            now: Instant::now(),
            micros,
        }
    }

    fn instant(&self, micros: i64) -> Option<Instant> {
        let ahead = micros.checked_sub(self.micros)?;
        let by = Duration::from_micros(ahead.unsigned_abs());
        if ahead >= 0 {
            self.now.checked_add(by)
        } else {
            self.now.checked_sub(by)
        }
    }

    fn micros(&self, at: Instant) -> i64 {
        let from = |d: Duration| i64::try_from(d.as_micros()).unwrap_or(i64::MAX);
        if at >= self.now {
            self.micros.saturating_add(from(at.duration_since(self.now)))
        } else {
            self.micros.saturating_sub(from(self.now.duration_since(at)))
        }
    }
}

/// The log's send times and pause, in place of this process's: those still counting, in order.
fn take_in(state: &mut Log, text: &str, clock: &Clock, span: Duration) {
    let mut sent: Vec<Instant> = Vec::new();
    let (mut paused, mut refused) = (None, None);
    for line in text.lines() {
        let (word, number) = line.split_once(' ').unwrap_or(("", line));
        let Some(at) = number.trim().parse::<i64>().ok().and_then(|m| clock.instant(m)) else {
            continue;
        };
        match word {
            "pause" => paused = Some(at),
            "refused" => refused = Some(at),
            "" if at + span > clock.now => sent.push(at),
            _ => {}
        }
    }
    sent.sort_unstable();
    state.sent = sent.into();
    state.paused_until = paused.filter(|p| *p > clock.now);
    state.refused_until = refused.filter(|r| *r > clock.now);
}

/// The log as `state` leaves it: the pause, then a send time a line. Written into one string
/// (it is written at every request, up to `LOG_MOST` lines).
fn written(state: &Log, clock: &Clock, span: Duration, with_sends: bool) -> String {
    use std::fmt::Write as _;
    let ahead = |t: Option<Instant>| t.filter(|t| *t > clock.now);
    let mut text = String::with_capacity(20 * state.sent.len().min(LOG_MOST) + 64);
    if let Some(p) = ahead(state.paused_until) {
        let _ = writeln!(text, "pause {}", clock.micros(p));
    }
    if let Some(r) = ahead(state.refused_until) {
        let _ = writeln!(text, "refused {}", clock.micros(r));
    }
    if !with_sends {
        return text;
    }
    let counting = state.sent.iter().filter(|at| **at + span > clock.now).count();
    let sent = state.sent.iter().filter(|at| **at + span > clock.now);
    for at in sent.skip(counting.saturating_sub(LOG_MOST)) {
        let _ = writeln!(text, "{}", clock.micros(*at));
    }
    text
}
