//! `esimdash watch`: polls the account within the background share of the key's budget and
//! prints one JSON line per change (`esimdash_front::watch`), handing each to `--exec CMD` on its
//! standard input at least once: a change the command does not take waits in the memory for
//! the next poll. Only reads. What it saw is kept in the state directory
//! (`watch/<account>.sqlite3`, `esimdash_front::watch::memory`): after every poll what the poll changed,
//! so a restart reports once what changed meanwhile.

use super::CommandError;
use super::notices::say;
use crate::cli::WatchArgs;
use crate::commands::output::outln;
use esimdash_api::model::{EsimQuery, OrderQuery};
use esimdash_api::{ApiError, Client};
use esimdash_front::config::Preferences;
use esimdash_front::watch::memory::Memory;
use esimdash_front::watch::{Event, Pending, Seen};
use std::time::{Duration, Instant};

/// A page of the lists, as the watch reads them.
const PAGE: u64 = 100;
/// At most this many pages of new orders a poll (a hundred new orders a minute is a lot).
const ORDER_PAGES: u64 = 10;
/// Changes kept for a hook that keeps failing (each a line of a few hundred bytes, in the
/// memory saved every poll).
const PENDING_KEPT: usize = 10_000;

pub async fn run(client: &Client, prefs: &Preferences, args: &WatchArgs) -> Result<(), CommandError> {
    let (_lock, mut memory, mut seen) = own_watch(client)?;
    let threshold = args.balance_below.unwrap_or(prefs.low_balance);
    let interval = args.interval;
    // What the background share allows in an interval, less the balance and the orders.
    let esim_pages = client.background_requests(interval).saturating_sub(2).max(1);
    tracing::info!(esim_pages, ?interval, "watch: eSIM pages a poll");
    if !args.once {
        say(&format!(
            "watching every {} s ({} requests a poll at most: the balance, new orders, {esim_pages} page(s) of eSIMs); one JSON line per change on stdout. Ctrl-C stops.",
            interval.as_secs(),
            esim_pages + 2
        ));
    }
    let hook = Hook::of(args, prefs, client)?;
    let mut backoff = Backoff::default();
    if hook.is_none() && !seen.pending.is_empty() {
        say(&format!(
            "{} change(s) an earlier --exec or --webhook did not take are kept for a watch with one",
            seen.pending.len()
        ));
    }
    loop {
        let started = Instant::now();
        // What this poll changes, on top of the memory: small, whatever the account's size.
        let mut next = seen.clone();
        let polled = client
            .in_background(poll(client, &mut next, &memory, threshold, prefs, esim_pages))
            .await;
        if let Some(failed) = memory.take_failure() {
            return Err(memory_error(failed));
        }
        let mut next = match polled {
            Ok(events) => {
                let told = tell(&events, seen.at);
                next.at = Some(chrono::Utc::now());
                if hook.is_some() {
                    next.pending.extend(told);
                }
                next
            }
            Err(e) if args.once || e.is_auth() => return Err(e.into()),
            Err(e) => {
                say(&format!(
                    "a poll failed ({e}); nothing was reported for it, the next poll (in {} s) reads again",
                    interval.as_secs()
                ));
                // What the poll read before it failed is not kept; changes waiting for --exec are
                // handed over all the same.
                seen.clone()
            }
        };
        if let Some(hook) = &hook
            && backoff.due()
        {
            let failed = hand_over_waiting(hook, &mut next.pending).await;
            backoff.after(failed, interval);
        }
        keep_bounded(&mut next.pending, PENDING_KEPT);
        // Saved after telling and handing over: a kill in between tells again, never loses a change.
        if next != seen {
            seen = kept(&mut memory, next)?;
        }
        if args.once {
            return Ok(());
        }
        tokio::time::sleep(interval.saturating_sub(started.elapsed())).await;
    }
}

/// The account's watch memory, held while the lock lives: one watch per account, as two would
/// race on one memory and report changes twice.
fn own_watch(client: &Client) -> Result<(esimdash_api::AccountLock, Memory, Seen), CommandError> {
    let (dir, account) = client.state_place().ok_or_else(|| {
        CommandError::Usage(
            "watch keeps what it saw in the state directory, and there is none (is HOME set?)".to_string(),
        )
    })?;
    let path = Memory::path_in(&dir, &account);
    let lock = esimdash_api::AccountLock::try_take(&path.with_extension("lock"))?.ok_or_else(|| {
        CommandError::Refused(format!(
            "another esimdash watch of this account is running ({})",
            path.display()
        ))
    })?;
    let (memory, seen) = own_memory(&path, &account)?;
    Ok((lock, memory, seen))
}

/// One poll: the balance, the newest orders until one seen before, the list's first page of
/// eSIMs and then a window of further pages, round the list poll after poll.
async fn poll(
    client: &Client,
    seen: &mut Seen,
    memory: &Memory,
    threshold: rust_decimal::Decimal,
    prefs: &Preferences,
    esim_pages: u64,
) -> Result<Vec<Event>, ApiError> {
    let mut events = Vec::new();
    events.extend(seen.balance(client.balance().await?, threshold));
    for page in 1..=ORDER_PAGES {
        let query = OrderQuery {
            page: Some(page),
            page_size: Some(PAGE),
            ..OrderQuery::default()
        };
        let orders = client.orders(&query).await?.orders;
        if seen.orders(&orders, &mut events) || (orders.len() as u64) < PAGE {
            break;
        }
    }
    let now = chrono::Utc::now();
    let read = |page: u64| async move {
        let query = EsimQuery {
            page: Some(page),
            page_size: Some(PAGE),
            ..EsimQuery::default()
        };
        client.esims(&query).await
    };
    let before = |key: &str| memory.esim(key);
    let first = read(1).await?;
    seen.esims_against(&first.esims, prefs.attention, now, &mut events, &before);
    let pages = first.total.div_ceil(PAGE);
    let mut page = seen.next_page.max(2);
    for _ in 0..esim_pages.saturating_sub(1).min(pages.saturating_sub(1)) {
        if page > pages {
            page = 2;
        }
        let esims = read(page).await?.esims;
        seen.esims_against(&esims, prefs.attention, now, &mut events, &before);
        page += 1;
    }
    seen.next_page = page;
    Ok(events)
}

/// Each change as one JSON line on stdout, with its id (`esimdash_front::watch::ids`, found against the
/// memory of the poll that ended at `since`) and when it was seen: what `--exec` is to take.
fn tell(events: &[Event], since: Option<chrono::DateTime<chrono::Utc>>) -> Vec<Pending> {
    let at = chrono::Utc::now().to_rfc3339();
    let ids = esimdash_front::watch::ids(events, since);
    events
        .iter()
        .zip(ids)
        .map(|(event, id)| {
            let mut value = serde_json::to_value(event).unwrap_or_default();
            value["id"] = serde_json::Value::from(id.as_str());
            value["at"] = serde_json::Value::from(at.as_str());
            let line = esimdash_domain::text::json_line(&value).unwrap_or_default();
            outln!("{line}");
            Pending { id, line, failures: 0 }
        })
        .collect()
}

/// Where changes are handed over: a command (`--exec`, with how long a hand-over may take)
/// or a webhook (`--webhook`).
enum Hook<'a> {
    Exec { command: &'a str, limit: Duration },
    Webhook(esimdash_api::webhook::Webhook),
}

impl<'a> Hook<'a> {
    /// The hook the flags (or the config's `webhook_url`) name; a webhook needs its secret.
    fn of(args: &'a WatchArgs, prefs: &Preferences, client: &Client) -> Result<Option<Self>, CommandError> {
        if let Some(command) = args.exec.as_deref() {
            return Ok(Some(Hook::Exec {
                command,
                limit: args.exec_timeout,
            }));
        }
        let Some(url) = args.webhook.as_ref().or(prefs.webhook_url.as_ref()) else {
            return Ok(None);
        };
        let secret = std::env::var("ESIMDASH_WEBHOOK_SECRET").unwrap_or_default();
        if secret.trim().is_empty() {
            return Err(CommandError::Usage(
                "a webhook's posts are signed: set ESIMDASH_WEBHOOK_SECRET to the secret its receiver checks them with"
                    .to_string(),
            ));
        }
        let webhook = client
            .webhook(url, secret.into())
            .map_err(|e| CommandError::Usage(format!("--webhook: {e}")))?;
        Ok(Some(Hook::Webhook(webhook)))
    }

    /// In messages: `--exec "cmd"`, `the webhook https://…`.
    fn name(&self) -> String {
        match self {
            Hook::Exec { command, .. } => format!("--exec {command:?}"),
            Hook::Webhook(webhook) => format!("the webhook {}", webhook.url()),
        }
    }

    async fn hand_over(&self, change: &Pending) -> Result<(), String> {
        match self {
            Hook::Exec { command, limit } => run_exec(command, *limit, &change.line).await,
            Hook::Webhook(webhook) => webhook.post(&change.id, &change.line).await,
        }
    }
}

/// After a round in which the hook failed, the next rounds wait: one poll, then two, four… at
/// most an hour, so that a receiver that is down is not asked at every poll; a round that
/// fails nothing ends the wait.
#[derive(Default)]
struct Backoff {
    failed_rounds: u32,
    until: Option<Instant>,
}

impl Backoff {
    fn due(&self) -> bool {
        self.until.is_none_or(|until| Instant::now() >= until)
    }

    fn after(&mut self, failed: bool, interval: Duration) {
        if !failed {
            *self = Backoff::default();
            return;
        }
        self.failed_rounds = self.failed_rounds.saturating_add(1);
        let wait = interval
            .saturating_mul(1 << (self.failed_rounds - 1).min(8))
            .min(Duration::from_secs(3_600));
        // Less a moment, so that the poll that far on is the one that tries.
        self.until = Some(Instant::now() + wait.saturating_sub(Duration::from_secs(1)));
    }
}

/// Hands the waiting changes over in order, and stops at the first that fails: a hook that
/// fails on one most likely fails on the next, and each try may take the whole limit. The one
/// that failed goes behind the others, so that a change the hook always refuses does not hold
/// the rest back; every one left waits for the next poll.
async fn hand_over_waiting(hook: &Hook<'_>, pending: &mut Vec<Pending>) -> bool {
    let mut waiting = std::mem::take(pending).into_iter();
    while let Some(mut change) = waiting.next() {
        let Err(why) = hook.hand_over(&change).await else {
            continue;
        };
        change.failures = change.failures.saturating_add(1);
        pending.extend(waiting.by_ref());
        say(&format!(
            "{} did not take change {}: {why} (failed {} time(s)); it is handed over again at a later poll{}",
            hook.name(),
            change.id,
            change.failures,
            match pending.len() {
                0 => String::new(),
                n => format!(", as are the {n} after it"),
            }
        ));
        pending.push(change);
        return true;
    }
    false
}

/// Runs `command` with `line` on its stdin. The limit holds for all of it: a hook that does not
/// read its stdin and does not end blocks the writing of a line longer than the pipe holds.
async fn run_exec(shell_line: &str, limit: Duration, line: &str) -> Result<(), String> {
    use tokio::io::AsyncWriteExt;
    let mut command = tokio::process::Command::new("sh");
    command
        .args(["-c", shell_line])
        .stdin(std::process::Stdio::piped())
        .kill_on_drop(true);
    // A group of its own, so that what it started is stopped with it.
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command.spawn().map_err(|e| format!("it could not be started ({e})"))?;
    let group = Group(child.id());
    let handed = async {
        if let Some(mut stdin) = child.stdin.take() {
            // A hook that does not read its input is no failure: its exit status tells.
            let _ = stdin.write_all(format!("{line}\n").as_bytes()).await;
        }
        child.wait().await
    };
    let ended = tokio::time::timeout(limit, handed).await;
    let Ok(ended) = ended else {
        return Err(format!(
            "it was stopped at the time limit, {} s (--exec-timeout)",
            limit.as_secs()
        ));
    };
    group.ended();
    match ended {
        Ok(status) if status.success() => Ok(()),
        Ok(status) => Err(format!("it ended with {status}")),
        Err(e) => Err(format!("it could not be waited for ({e})")),
    }
}

/// The hook's process group, killed when dropped before the hook ended by itself: at the time
/// limit, or when the watch is stopped mid-hand-over. What a hook leaves running after it ended
/// is its own business.
struct Group(Option<u32>);

impl Group {
    fn ended(mut self) {
        self.0 = None;
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self.0.and_then(|pid| i32::try_from(pid).ok())
            // Never 0 or 1: kill(-0) would be esimdash's own group.
            && pid > 1
        {
            // SAFETY: kill(2) on the group of a child not yet waited for: its id is still ours.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
}

/// Keeps at most `most` changes waiting for a hook that keeps failing: the oldest are given
/// up, said with their ids, so that the memory saved every poll stays small.
fn keep_bounded(pending: &mut Vec<Pending>, most: usize) {
    let over = pending.len().saturating_sub(most);
    if over == 0 {
        return;
    }
    let given_up: Vec<Pending> = pending.drain(..over).collect();
    fn ids(change: Option<&Pending>) -> &str {
        change.map_or("", |change| change.id.as_str())
    }
    say(&format!(
        "--exec has not taken {} changes and at most {most} wait: the oldest {over} are given up (ids {} to {})",
        most + over,
        ids(given_up.first()),
        ids(given_up.last())
    ));
}

/// Writes what a poll changed; the memory as the next poll starts from it.
fn kept(memory: &mut Memory, mut next: Seen) -> Result<Seen, CommandError> {
    memory.save(&next).map_err(|e| {
        CommandError::Io(std::io::Error::other(format!(
            "the watch's memory ({}) was not written: {e}",
            memory.path().display()
        )))
    })?;
    next.esims.clear();
    Ok(next)
}

/// The memory at `path`, `account`'s: one that names another account is set aside beside it
/// (said), never taken as this account's, and a new one begun.
fn own_memory(path: &std::path::Path, account: &str) -> Result<(Memory, esimdash_front::watch::Seen), CommandError> {
    let (memory, seen) = Memory::open(path).map_err(memory_error)?;
    let unreadable = |e: rusqlite::Error| {
        memory_error(esimdash_front::watch::memory::MemoryError::Unreadable {
            path: path.to_path_buf(),
            why: e.to_string(),
        })
    };
    if memory.claim(account).map_err(unreadable)? {
        return Ok((memory, seen));
    }
    drop(memory);
    let aside = path.with_extension(format!("other-account-{}.sqlite3", chrono::Utc::now().timestamp()));
    std::fs::rename(path, &aside)?;
    for extra in ["sqlite3-wal", "sqlite3-shm"] {
        let _ = std::fs::remove_file(path.with_extension(extra));
    }
    say(&format!(
        "{} was the memory of another account: set aside as {}; this watch begins afresh",
        path.display(),
        aside.display()
    ));
    let (memory, seen) = Memory::open(path).map_err(memory_error)?;
    memory.claim(account).map_err(unreadable)?;
    Ok((memory, seen))
}

fn memory_error(e: esimdash_front::watch::memory::MemoryError) -> CommandError {
    match e {
        esimdash_front::watch::memory::MemoryError::Io(e) => CommandError::Io(e),
        unreadable => CommandError::Usage(unreadable.to_string()),
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn hook(command: &str, seconds: u64) -> Hook<'_> {
        Hook::Exec {
            command,
            limit: Duration::from_secs(seconds),
        }
    }

    async fn hand_over(hook: &Hook<'_>, line: &str) -> Result<(), String> {
        let change = Pending {
            line: line.to_string(),
            ..change("x")
        };
        hook.hand_over(&change).await
    }

    fn change(id: &str) -> Pending {
        Pending {
            id: id.to_string(),
            line: format!("{{\"id\":\"{id}\"}}"),
            failures: 0,
        }
    }

    /// The report's case: a line of 200 KB to a hook that never reads its stdin nor ends
    /// blocked 100 s while the line was being written.
    #[tokio::test]
    async fn the_limit_holds_while_a_large_line_is_written_to_a_hook_that_does_not_read() {
        let line = format!("{{\"event\":\"x\",\"pad\":\"{}\"}}", "x".repeat(200_000));
        let started = Instant::now();
        let why = hand_over(&hook("sleep 30", 1), &line).await.unwrap_err();
        assert!(why.contains("time limit, 1 s"), "{why}");
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
        assert_eq!(hand_over(&hook("cat > /dev/null", 5), &line).await, Ok(()));
        let why = hand_over(&hook("exit 3", 5), &line).await.unwrap_err();
        assert!(why.contains("exit status: 3"), "{why}");
    }

    #[tokio::test]
    async fn what_a_hook_started_is_stopped_with_it_at_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("late");
        let command = format!("(sleep 2; touch {}) & sleep 30", file.display());
        assert!(hand_over(&hook(&command, 1), "{}").await.is_err());
        tokio::time::sleep(Duration::from_millis(2500)).await;
        assert!(!file.exists(), "the hook's own child outlived the limit");
    }

    /// A hook failing on one change stops the round there; that change goes behind the
    /// others, which wait in their order for the next poll.
    #[tokio::test]
    async fn a_failed_change_goes_behind_the_others_and_the_round_stops_there() {
        let dir = tempfile::tempdir().unwrap();
        let taken = dir.path().join("taken");
        let command = format!(
            "read line; case $line in *b*) exit 1;; esac; echo $line >> {}",
            taken.display()
        );
        let mut pending = vec![change("a"), change("b"), change("c"), change("d")];
        hand_over_waiting(&hook(&command, 5), &mut pending).await;
        let ids: Vec<&str> = pending.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["c", "d", "b"]);
        assert_eq!(pending[2].failures, 1);
        hand_over_waiting(&hook(&command, 5), &mut pending).await;
        assert_eq!(pending.len(), 1, "{pending:?}");
        assert_eq!((pending[0].id.as_str(), pending[0].failures), ("b", 2));
        let taken = std::fs::read_to_string(taken).unwrap();
        assert_eq!(taken.lines().count(), 3, "a, c, d, each once: {taken}");
    }

    #[test]
    fn the_oldest_waiting_changes_are_given_up_beyond_the_bound() {
        let mut pending: Vec<Pending> = ["a", "b", "c", "d"].into_iter().map(change).collect();
        keep_bounded(&mut pending, 4);
        assert_eq!(pending.len(), 4);
        keep_bounded(&mut pending, 2);
        let ids: Vec<&str> = pending.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["c", "d"]);
    }
}
