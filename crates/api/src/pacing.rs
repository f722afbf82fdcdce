//! Client-side pacing: never more requests in any window than the key allows, and a pause for
//! everyone when the server says so (429 `Retry-After`, or `X-RateLimit-Remaining: 0`).
//!
//! Each caller reserves a send time under a lock and then sleeps outside it, so concurrent
//! background tasks share one budget without holding each other up longer than needed.
//!
//! The API counts requests per key, not per process: with a `shared` file (one per account in
//! the state folder), every esimdash process of the key on this machine reserves from one log of
//! send times, read and written under an exclusive `flock`, so that together they stay within
//! the key's limit and each waits for what the others spent (`shared_log`).

use super::shared_log::{Log, SharedLog};
use std::collections::VecDeque;
use std::sync::Mutex;
use std::time::Duration;
use tokio::time::Instant;

/// How far past the edge of a window the next one is taken to start: a 60th of the window (one
/// second a minute).
fn edge_margin(window: Duration) -> Duration {
    window / 60
}

/// A wait for the budget this long is told (`acquire`): shorter ones pass unnoticed.
const WAIT_TOLD: Duration = Duration::from_secs(2);

#[derive(Debug)]
pub struct Pacer {
    state: Mutex<State>,
    /// The log every process of this key reserves from, when there is one.
    shared: Option<SharedLog>,
    /// Until when a request waits for the budget, told to whoever shows it (the dashboard's
    /// status line) as it changes, so that nobody has to ask after every step.
    waiting: tokio::sync::watch::Sender<Option<std::time::Instant>>,
}

#[derive(Debug)]
struct State {
    limit: usize,
    window: Duration,
    /// The send times and the server's pause: this process's, or the key's shared log's.
    log: Log,
}

impl State {
    /// The window with its edge margin: how long a send time counts against the budget.
    fn span(&self) -> Duration {
        self.window + edge_margin(self.window)
    }
}

impl Pacer {
    /// `limit` requests per `window` (the API: per minute); a limit of 0 is taken as 1.
    pub fn new(limit: u32, window: Duration) -> Self {
        let limit = limit.max(1) as usize;
        Self {
            state: Mutex::new(State {
                limit,
                window,
                log: Log {
                    sent: VecDeque::with_capacity(limit),
                    ..Log::default()
                },
            }),
            shared: None,
            waiting: tokio::sync::watch::Sender::new(None),
        }
    }

    /// As `new`, reserving from the log at `path` that every process of this key shares; where
    /// the log cannot be opened, this process paces alone (and says so in the log).
    pub fn shared(limit: u32, window: Duration, path: &std::path::Path) -> Self {
        Self {
            shared: SharedLog::open(path),
            ..Self::new(limit, window)
        }
    }

    /// Until when requests wait for the budget, as it changes (`None`: they do not).
    pub fn watch(&self) -> tokio::sync::watch::Receiver<Option<std::time::Instant>> {
        self.waiting.subscribe()
    }

    /// Tells the watchers, if what they were told changed.
    fn publish(&self, state: &State, now: Instant) {
        let until = state
            .log
            .sent
            .back()
            .copied()
            .filter(|at| *at > now)
            .map(Instant::into_std);
        self.waiting.send_if_modified(|told| {
            let changed = *told != until;
            *told = until;
            changed
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state stays consistent even if a holder panicked: every update is one assignment.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Runs `f` on the budget as every process of the key left it (the shared log read under
    /// its lock, and written back), or as this process keeps it alone.
    fn with<R>(&self, f: impl FnOnce(&mut State) -> R) -> R {
        let mut s = self.lock();
        let Some(shared) = &self.shared else {
            return f(&mut s);
        };
        let span = s.span();
        let Some(held) = shared.hold() else {
            return f(&mut s);
        };
        held.read_into(&mut s.log, span);
        // Written back only when changed: a look that reserves nothing writes nothing. (The
        // whole log is compared: a time reserved equal to the last, the oldest dropped, leaves
        // its length and its last alike.)
        let before = s.log.clone();
        let answer = f(&mut s);
        if s.log != before {
            held.write_from(&s.log, span, s.limit);
        }
        answer
    }

    /// Waits until one more request may be sent, and counts it. If the waiting is given up (the
    /// task is aborted because nobody wants the answer any more), the place is given back, so a
    /// request that was never sent does not spend the budget.
    pub async fn acquire(&self, tell: impl FnOnce(Duration)) {
        let now = Instant::now();
        let at = self.reserve(now);
        if at.duration_since(now) >= WAIT_TOLD {
            tell(at.duration_since(now));
        }
        let place = Place { pacer: self, at };
        until(at).await;
        std::mem::forget(place);
    }

    /// As `acquire`, for a request nobody waits for (the inventory's background read): it goes
    /// only while fewer than `share` of the window's budget are spent and nothing is queued,
    /// so that what the user asks for always finds the rest of the budget free.
    pub async fn acquire_background(&self, share: f64) {
        loop {
            let now = Instant::now();
            match self.reserve_background(now, share) {
                Ok(at) => {
                    let place = Place { pacer: self, at };
                    until(at).await;
                    std::mem::forget(place);
                    return;
                }
                Err(retry) => tokio::time::sleep_until(retry.max(now + Duration::from_millis(1))).await,
            }
        }
    }

    /// A send time now for a background request, or when to ask again.
    fn reserve_background(&self, now: Instant, share: f64) -> Result<Instant, Instant> {
        // One look at the shared log: the share checked and the time reserved under one lock.
        self.with(|s| {
            let allowed = ((s.limit as f64 * share.clamp(0.0, 1.0)) as usize).max(1);
            let margin = edge_margin(s.window);
            let in_window: Vec<Instant> = s
                .log
                .sent
                .iter()
                .copied()
                .filter(|t| *t + s.window + margin > now)
                .collect();
            let mut retry = None::<Instant>;
            let mut later = |t: Instant| retry = Some(retry.map_or(t, |r| r.max(t)));
            if let Some(until) = s.log.paused_until.filter(|u| *u > now) {
                later(until);
            }
            if let Some(&last) = s.log.sent.back().filter(|t| **t > now) {
                later(last);
            }
            if in_window.len() >= allowed {
                later(in_window[in_window.len() - allowed] + s.window + margin);
            }
            match retry {
                Some(at) => Err(at),
                None => Ok(Self::reserve_in(s, now, |s| self.publish(s, now))),
            }
        })
    }

    /// Gives back a reserved send time that was not used.
    fn release(&self, at: Instant) {
        self.with(|s| {
            // Read back from the shared log, a time is to the microsecond: the nearest is it.
            let near = |t: &Instant| t.max(&at).duration_since(*t.min(&at)) < Duration::from_millis(1);
            if let Some(i) = s.log.sent.iter().rposition(near) {
                s.log.sent.remove(i);
            }
            self.publish(s, Instant::now());
        });
    }

    /// The earliest time at which a request may go, recorded as taken.
    pub fn reserve(&self, now: Instant) -> Instant {
        self.with(|s| Self::reserve_in(s, now, |s| self.publish(s, now)))
    }

    fn reserve_in(s: &mut State, now: Instant, publish: impl FnOnce(&State)) -> Instant {
        let mut at = now;
        if let Some(until) = s.log.paused_until {
            at = at.max(until);
        }
        if let Some(&last) = s.log.sent.back() {
            at = at.max(last);
        }
        if s.log.sent.len() >= s.limit {
            // A margin past the window's edge: the server's window starts when our first
            // request arrives, a little after we sent it, so a request sent exactly a window
            // later can reach it a moment before its window ends (and get a 429).
            let idx = s.log.sent.len() - s.limit;
            at = at.max(s.log.sent[idx] + s.window + edge_margin(s.window));
        }
        s.log.sent.push_back(at);
        while s.log.sent.len() > s.limit {
            s.log.sent.pop_front();
        }
        publish(s);
        at
    }

    /// Whether a request could go at `now` without waiting: no pause, nothing queued, and the
    /// window's budget not spent. A read that may stop early (a search of the whole list)
    /// asks this so that it stops where the budget does instead of waiting for the next window.
    pub fn has_room(&self, now: Instant) -> bool {
        self.with(|s| {
            let paused = s.log.paused_until.is_some_and(|until| until > now);
            let queued = s.log.sent.back().is_some_and(|at| *at > now);
            let full = s.log.sent.len() >= s.limit && s.log.sent[s.log.sent.len() - s.limit] + s.span() > now;
            !(paused || queued || full)
        })
    }

    /// The window the limit is counted over.
    pub fn window(&self) -> Duration {
        self.lock().window
    }

    /// Nobody sends before `until` (the server asked for a pause), plus the edge margin.
    pub fn pause_until(&self, until: Instant) {
        self.with(|s| {
            let until = until + edge_margin(s.window);
            s.log.paused_until = Some(s.log.paused_until.map_or(until, |p| p.max(until)));
        });
    }

    /// The server refused the key until `until` (a 429): a pause for everyone, and what a
    /// request of another process meets (`refused_left`).
    pub fn refused_until(&self, until: Instant) {
        self.pause_until(until);
        self.with(|s| s.log.refused_until = Some(s.log.refused_until.map_or(until, |r| r.max(until))));
    }

    /// How long the server's refusal of the key (met by this process or another) still holds.
    pub fn refused_left(&self, now: Instant) -> Option<Duration> {
        self.with(|s| {
            s.log
                .refused_until
                .filter(|until| *until > now)
                .map(|until| until - now)
        })
    }

    /// Until when a request is waiting for the budget (not the server), if one is: the latest
    /// reserved send time still ahead.
    pub fn waiting_until(&self, now: Instant) -> Option<Instant> {
        self.with(|s| s.log.sent.back().copied().filter(|at| *at > now))
    }

    /// The server's `X-RateLimit-Limit` for this key: a lower one than ours wins.
    pub fn observe_limit(&self, server_limit: u32) {
        let mut s = self.lock();
        let server_limit = server_limit.max(1) as usize;
        if server_limit < s.limit {
            s.limit = server_limit;
        }
    }

    pub fn limit(&self) -> usize {
        self.lock().limit
    }
}

/// A reserved send time, given back if dropped before it was used.
struct Place<'a> {
    pacer: &'a Pacer,
    at: Instant,
}

impl Drop for Place<'_> {
    fn drop(&mut self) {
        self.pacer.release(self.at);
    }
}

/// Waits until `at`; not at all when it has come. (A timer is kept to the millisecond: asked
/// for now, it yielded until the next tick, most of a millisecond added to every request.)
async fn until(at: Instant) {
    if at > Instant::now() {
        tokio::time::sleep_until(at).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_more_than_limit_in_any_window() {
        let pacer = Pacer::new(3, Duration::from_secs(60));
        let t0 = Instant::now();
        let times: Vec<_> = (0..7).map(|_| pacer.reserve(t0)).collect();
        assert_eq!(&times[..3], &[t0, t0, t0]);
        // One second past the edge of the window, every time.
        assert_eq!(times[3], t0 + Duration::from_secs(61));
        assert_eq!(times[6], t0 + Duration::from_secs(122));
        assert_eq!(pacer.waiting_until(t0), Some(times[6]));
        assert_eq!(pacer.waiting_until(t0 + Duration::from_secs(200)), None);
        for (i, t) in times.iter().enumerate() {
            let in_window = times
                .iter()
                .filter(|u| **u <= *t && *t - **u < Duration::from_secs(60))
                .count();
            assert!(in_window <= 3, "send {i} has {in_window} in its window");
        }
    }

    #[tokio::test]
    async fn a_wait_given_up_gives_its_place_back() {
        let pacer = std::sync::Arc::new(Pacer::new(1, Duration::from_secs(60)));
        pacer.acquire(|_| panic!("the first goes at once")).await;
        let (told_tx, told) = std::sync::mpsc::channel();
        let waiting = {
            let pacer = pacer.clone();
            tokio::spawn(async move { pacer.acquire(move |wait| told_tx.send(wait).unwrap()).await })
        };
        tokio::task::yield_now().await;
        assert!(
            told.try_recv().is_ok_and(|wait| wait > Duration::from_secs(59)),
            "a minute's wait is told"
        );
        waiting.abort();
        let _ = waiting.await;
        let t0 = Instant::now();
        // The aborted request's place (a minute on) is free again: the next waits one minute,
        // not two.
        assert!(pacer.reserve(t0) <= t0 + Duration::from_secs(61));
    }

    #[test]
    fn the_background_takes_at_most_its_share_and_never_queues_before_the_user() {
        let pacer = Pacer::new(10, Duration::from_secs(60));
        let t0 = Instant::now();
        for _ in 0..5 {
            assert_eq!(pacer.reserve_background(t0, 0.5), Ok(t0));
        }
        // Half the budget spent: the background waits a window; the user still has five.
        assert!(pacer.reserve_background(t0, 0.5).is_err());
        for _ in 0..5 {
            assert_eq!(pacer.reserve(t0), t0);
        }
        assert_eq!(
            pacer.reserve_background(t0 + Duration::from_secs(62), 0.5),
            Ok(t0 + Duration::from_secs(62))
        );
        // The user fills the window and a request of theirs is queued for later: the background
        // does not go before it, whatever its share.
        let t1 = t0 + Duration::from_secs(62);
        let queued = (0..10).map(|_| pacer.reserve(t1)).max().unwrap();
        assert!(queued > t1);
        assert!(pacer.reserve_background(t1, 1.0).is_err());
    }

    #[test]
    fn room_is_there_until_the_window_is_spent_or_paused() {
        let pacer = Pacer::new(2, Duration::from_secs(60));
        let t0 = Instant::now();
        assert!(pacer.has_room(t0));
        pacer.reserve(t0);
        assert!(pacer.has_room(t0));
        pacer.reserve(t0);
        assert!(!pacer.has_room(t0), "two of two spent");
        assert!(
            !pacer.has_room(t0 + Duration::from_secs(60)),
            "the edge margin is not past yet"
        );
        assert!(pacer.has_room(t0 + Duration::from_secs(62)), "a new window");
        pacer.pause_until(t0 + Duration::from_secs(100));
        assert!(!pacer.has_room(t0 + Duration::from_secs(62)), "paused by the server");
    }

    #[test]
    fn a_pause_holds_everyone_and_a_lower_server_limit_wins() {
        let pacer = Pacer::new(100, Duration::from_secs(60));
        let t0 = Instant::now();
        pacer.pause_until(t0 + Duration::from_secs(5));
        assert_eq!(pacer.reserve(t0), t0 + Duration::from_secs(6));
        pacer.observe_limit(2);
        assert_eq!(pacer.limit(), 2);
        pacer.observe_limit(500);
        assert_eq!(pacer.limit(), 2);
    }
}

#[cfg(test)]
mod shared {
    use super::*;
    use std::path::PathBuf;

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
