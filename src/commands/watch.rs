//! `esimdash watch`: polls the account within the background share of the key's budget and
//! prints one JSON line per change (`crate::watch`), running `--exec CMD` once per change with
//! the line on its standard input. Only reads. What it saw is kept in the state directory
//! (`watch/<account>.json`) after every poll, so a restart reports once what changed meanwhile.

use super::CommandError;
use super::notices::say;
use crate::api::model::{EsimQuery, OrderQuery};
use crate::api::{ApiError, Client};
use crate::cli::WatchArgs;
use crate::commands::output::outln;
use crate::config::Preferences;
use crate::watch::{Event, Seen};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A page of the lists, as the watch reads them.
const PAGE: u64 = 100;
/// At most this many pages of new orders a poll (a hundred new orders a minute is a lot).
const ORDER_PAGES: u64 = 10;
/// How long `--exec` may take per event before it is stopped.
const EXEC_PATIENCE: Duration = Duration::from_secs(60);

pub async fn run(client: &Client, prefs: &Preferences, args: &WatchArgs) -> Result<(), CommandError> {
    let (dir, account) = client.state_place().ok_or_else(|| {
        CommandError::Usage(
            "watch keeps what it saw in the state directory, and there is none (is HOME set?)".to_string(),
        )
    })?;
    let path = dir.join("watch").join(format!("{account}.json"));
    // One watch per account: two would race on one memory and report changes twice.
    let _lock = crate::api::AccountLock::try_take(&path.with_extension("lock"))?.ok_or_else(|| {
        CommandError::Refused(format!(
            "another esimdash watch of this account is running ({})",
            path.display()
        ))
    })?;
    let mut seen = load(&path)?;
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
    loop {
        let started = Instant::now();
        let mut next = seen.clone();
        let polled = client
            .in_background(poll(client, &mut next, threshold, prefs, esim_pages))
            .await;
        match polled {
            Ok(events) => {
                next.at = Some(chrono::Utc::now());
                for event in &events {
                    tell(event, args.exec.as_deref()).await;
                }
                // Saved after telling: a kill in between tells again, never loses a change.
                save(&path, &next)?;
                seen = next;
            }
            Err(e) if args.once || e.is_auth() => return Err(e.into()),
            Err(e) => say(&format!(
                "a poll failed ({e}); nothing was reported for it, the next poll (in {} s) reads again",
                interval.as_secs()
            )),
        }
        if args.once {
            return Ok(());
        }
        tokio::time::sleep(interval.saturating_sub(started.elapsed())).await;
    }
}

/// One poll: the balance, the newest orders until one seen before, the list's first page of
/// eSIMs and then a window of further pages, round the list poll after poll.
async fn poll(
    client: &Client,
    seen: &mut Seen,
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
    let first = read(1).await?;
    seen.esims(&first.esims, prefs.attention, now, &mut events);
    let pages = first.total.div_ceil(PAGE);
    let mut page = seen.next_page.max(2);
    for _ in 0..esim_pages.saturating_sub(1).min(pages.saturating_sub(1)) {
        if page > pages {
            page = 2;
        }
        seen.esims(&read(page).await?.esims, prefs.attention, now, &mut events);
        page += 1;
    }
    seen.next_page = page;
    Ok(events)
}

/// The event as one JSON line on stdout, and to `exec` on its standard input.
async fn tell(event: &Event, exec: Option<&str>) {
    let mut value = serde_json::to_value(event).unwrap_or_default();
    value["at"] = serde_json::Value::from(chrono::Utc::now().to_rfc3339());
    let line = crate::text::json_line(&value).unwrap_or_default();
    outln!("{line}");
    if let Some(command) = exec
        && let Err(why) = run_exec(command, &line).await
    {
        say(&format!("--exec {command:?} for {line}: {why}"));
    }
}

async fn run_exec(command: &str, line: &str) -> Result<(), String> {
    use tokio::io::AsyncWriteExt;
    let mut child = tokio::process::Command::new("sh")
        .args(["-c", command])
        .stdin(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| e.to_string())?;
    if let Some(mut stdin) = child.stdin.take() {
        // A command that does not read its input is no failure.
        let _ = stdin.write_all(format!("{line}\n").as_bytes()).await;
    }
    match tokio::time::timeout(EXEC_PATIENCE, child.wait()).await {
        Ok(Ok(status)) if status.success() => Ok(()),
        Ok(Ok(status)) => Err(format!("it ended with {status}")),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!(
            "it took more than {} s and was stopped",
            EXEC_PATIENCE.as_secs()
        )),
    }
}

/// What an earlier watch saw; nothing when there was none.
fn load(path: &Path) -> Result<Seen, CommandError> {
    match crate::private_file::read_regular(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            CommandError::Usage(format!(
                "{} is not a watch's memory ({e}); move it away to start afresh",
                path.display()
            ))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Seen::default()),
        Err(e) => Err(CommandError::Io(e)),
    }
}

/// Written whole: a temporary file beside it, renamed over it.
fn save(path: &Path, seen: &Seen) -> Result<(), CommandError> {
    let dir: PathBuf = path.parent().map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    crate::private_file::create_dir(&dir)?;
    crate::private_file::write_whole(path, |out| {
        serde_json::to_writer(out, seen).map_err(std::io::Error::other)
    })?;
    Ok(())
}
