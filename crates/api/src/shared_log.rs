//! The rate budget's log shared by every esimdash process of one key on this machine: a small
//! file in the state folder (`budgets/<account>`), private to the user, that holds the send
//! times reserved in the last window and the server's pause, as wall-clock microseconds (the
//! one clock two processes share). A process reads it, reserves and writes it back while it
//! holds an exclusive `flock` on it; the kernel lets go of a killed holder's lock.
//!
//! It is read as outside data: a line that is not a time is dropped, the file is read to a
//! bound, and a log cut short (a process killed mid-write) only forgets reservations, which
//! the server's own 429 and `Retry-After` then cover.

use super::pacing::State;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::time::Instant;

/// The send times kept: the newest this many, enough to hold any limit up to it a window (the
/// API's is 120 a minute). A key said to allow more (a test server) is paced across processes
/// by its newest sends only, and each request's read of the log stays small.
const LOG_MOST: usize = 1024;

/// More than the log ever holds (a line is at most 25 bytes).
const MAX_BYTES: u64 = 256 * 1024;

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

    /// Runs `f` on `state` as the log has it, under the log's lock, and writes back what `f`
    /// left. Where the log cannot be locked or read, `f` runs on this process's own state.
    pub fn with<R>(&self, state: &mut State, f: impl FnOnce(&mut State) -> R) -> R {
        if let Err(e) = self.file.lock() {
            tracing::warn!(%e, "the shared rate budget could not be locked");
            return f(state);
        }
        let clock = Clock::now();
        if let Some(text) = self.read() {
            take_in(state, &text, &clock);
        }
        let answer = f(state);
        if let Err(e) = self.write(&written(state, &clock)) {
            tracing::warn!(%e, "the shared rate budget could not be written");
        }
        let _ = self.file.unlock();
        answer
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

/// The two clocks read at one moment: a wall-clock time in the log is a monotonic one here.
struct Clock {
    now: Instant,
    micros: i128,
}

impl Clock {
    fn now() -> Self {
        let micros = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as i128);
        Self {
            now: Instant::now(),
            micros,
        }
    }

    fn instant(&self, micros: i128) -> Option<Instant> {
        let ahead = micros - self.micros;
        let by = Duration::from_micros(u64::try_from(ahead.unsigned_abs()).ok()?);
        if ahead >= 0 {
            self.now.checked_add(by)
        } else {
            self.now.checked_sub(by)
        }
    }

    fn micros(&self, at: Instant) -> i128 {
        if at >= self.now {
            self.micros + at.duration_since(self.now).as_micros() as i128
        } else {
            self.micros - self.now.duration_since(at).as_micros() as i128
        }
    }
}

/// The log's send times and pause, in place of this process's: those still counting, in order.
fn take_in(state: &mut State, text: &str, clock: &Clock) {
    let span = state.span();
    let mut sent: Vec<Instant> = Vec::new();
    let (mut paused, mut refused) = (None, None);
    for line in text.lines() {
        let (word, number) = line.split_once(' ').unwrap_or(("", line));
        let Some(at) = number.trim().parse::<i128>().ok().and_then(|m| clock.instant(m)) else {
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

/// The log as `state` leaves it: the pause, then a send time a line.
fn written(state: &State, clock: &Clock) -> String {
    let span = state.span();
    let ahead = |t: Option<Instant>| t.filter(|t| *t > clock.now);
    let pause = ahead(state.paused_until).map(|p| format!("pause {}\n", clock.micros(p)));
    let refused = ahead(state.refused_until).map(|r| format!("refused {}\n", clock.micros(r)));
    let counting: Vec<&Instant> = state.sent.iter().filter(|at| **at + span > clock.now).collect();
    let sent = counting[counting.len().saturating_sub(LOG_MOST)..].iter().copied();
    pause
        .into_iter()
        .chain(refused)
        .chain(sent.map(|at| format!("{}\n", clock.micros(*at))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::pacing::Pacer;
    use super::*;

    /// Where a key's log goes, in a state folder of the test's own.
    fn a_log() -> (tempfile::TempDir, PathBuf) {
        let state = tempfile::tempdir().unwrap();
        let path = state.path().join("budgets/key");
        (state, path)
    }

    /// Two pacers on one file stand for two processes of one key: together within the limit,
    /// and a 429 one of them met holds the other.
    #[test]
    fn two_processes_on_one_log_stay_within_the_limit_together() {
        let (_state, path) = a_log();
        let window = Duration::from_secs(60);
        let (a, b) = (Pacer::shared(3, window, &path), Pacer::shared(3, window, &path));
        let t0 = Instant::now();
        let mut times: Vec<Instant> = Vec::new();
        for i in 0..8 {
            let pacer = if i % 2 == 0 { &a } else { &b };
            times.push(pacer.reserve(t0));
        }
        times.sort();
        for t in &times {
            let in_window = times.iter().filter(|u| **u <= *t && *t - **u < window).count();
            assert!(in_window <= 3, "{in_window} in one window: {times:?}");
        }
        assert!(!b.has_room(t0), "what a spent counts for b");
        b.refused_until(t0 + Duration::from_secs(300));
        assert!(a.reserve(t0) >= t0 + Duration::from_secs(300), "b's pause holds a");
        assert!(
            a.refused_left(t0).is_some_and(|left| left >= Duration::from_secs(299)),
            "and a knows why"
        );
    }

    #[test]
    fn a_log_that_is_not_one_is_read_as_empty() {
        let (_state, path) = a_log();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, "pause x\n-\n99999999999999999999999999999999999999999\n\u{0}\n").unwrap();
        let pacer = Pacer::shared(2, Duration::from_secs(60), &path);
        let t0 = Instant::now();
        assert_eq!(pacer.reserve(t0), t0);
        assert!(std::fs::read_to_string(&path).unwrap().lines().count() == 1);
    }
}
