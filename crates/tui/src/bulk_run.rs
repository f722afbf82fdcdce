//! The dashboard's bulk top-up, run off the event loop through the same engine as `esimdash
//! topup --from` (`esimdash_front::bulk`): the marked eSIMs are written as a rows file in the export
//! directory, checked whole, then paid one by one with the journal. A session that ends
//! mid-run (killed, hung up) leaves a file that `esimdash topup --from FILE` finishes, paying
//! no row twice.

use super::msg::{BulkEnded, BulkStep, BulkTopup, JobId, Msg};
use esimdash_api::Client;
use esimdash_domain::iccid::Iccid;
use esimdash_domain::money::format_amount;
use esimdash_front::bulk::rows::Kind;
use esimdash_front::bulk::{self, Batch, Prepared, RowOutcome, State, result};
use esimdash_front::export::file::{self, Existing, FileError};
use futures_util::FutureExt;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::mpsc::UnboundedSender;

/// Starts the run; its steps come back as `Msg::Bulk`. `stop` (the window's key), like a stop
/// signal, lets the payment in flight be answered and starts no further row.
pub fn start(
    dir: &Path,
    id: JobId,
    order: BulkTopup,
    client: &Client,
    tx: &UnboundedSender<Msg>,
    stop: Arc<AtomicBool>,
) {
    let (dir, client, tx) = (dir.to_path_buf(), client.clone(), tx.clone());
    tokio::spawn(async move {
        // `stop` lives as long as this task: while it does, the dashboard does not end.
        let step = |step| {
            let _ = tx.send(Msg::Bulk { id, step });
        };
        let stopping = || esimdash_api::signals::stopping() || stop.load(Ordering::SeqCst);
        // A run that panics still says so: the window never waits for a word that cannot come.
        let ended = AssertUnwindSafe(run(&client, &dir, &order, stopping, &step))
            .catch_unwind()
            .await
            .unwrap_or_else(|_| {
                Err(Refusal::Why("the run stopped on an internal error (see the log); the rows file in the export directory, run with `esimdash topup --from`, pays what is left, none twice".to_string()))
            });
        step(match ended {
            Ok(ended) => BulkStep::Ended(Ok(ended)),
            Err(Refusal::Why(why)) => BulkStep::Ended(Err(why)),
            Err(Refusal::Repeats(repeats)) => BulkStep::Repeats(repeats),
        });
    });
}

async fn run(
    client: &Client,
    dir: &Path,
    order: &BulkTopup,
    stopping: impl Fn() -> bool,
    step: &impl Fn(BulkStep),
) -> Result<BulkEnded, Refusal> {
    let file = write_rows(dir, order)?;
    let prepared = match bulk::prepare(
        client,
        Kind::Topup,
        &file,
        bulk::Run {
            lock: true,
            again: false,
            own_file: true,
        },
    )
    .await
    {
        Ok(prepared) => prepared,
        Err(e) => {
            forget(&file);
            return Err(Refusal::Why(format!("{e}; nothing was paid")));
        }
    };
    let Prepared { mut batch, mut journal } = prepared;
    if let Some(refused) = refusal(&batch, order) {
        drop(journal);
        forget(&file);
        return Err(match refused {
            Refusal::Why(why) => Refusal::Why(format!("{why}; nothing was paid")),
            repeats => repeats,
        });
    }
    step(BulkStep::Paying);
    let paid = bulk::pay(client, &mut batch, &mut journal, false, stopping, |line| {
        // Every row of the dashboard's run is a top-up: it has its eSIM.
        if let Some(iccid) = line.row.iccid() {
            step(BulkStep::Row {
                iccid: iccid.clone(),
                state: line.state.clone(),
            });
        }
    })
    .await;
    // The journal failing stops the run where it is: what was placed is still told.
    let (ended, problem) = match paid {
        Ok(ended) => (ended, None),
        Err(e) => (bulk::Ended::AtUnknown, Some(format!("the run stopped: {e}"))),
    };
    let result_path = result::beside(&file);
    let result = result::write(&batch, &result_path).map(|()| result_path);
    // A placed row the user must check (charged another total, possibly a second order) is
    // said in the window that stays, not only in the result file.
    let caveats: Vec<String> = batch
        .lines
        .iter()
        .filter_map(|l| match &l.state {
            State::Placed { caveat: Some(c), .. } => Some(format!(
                "{}: {}",
                l.row.iccid().map(ToString::to_string).unwrap_or_default(),
                c.words()
            )),
            _ => None,
        })
        .collect();
    let problem = problem.into_iter().chain(caveats).reduce(|a, b| format!("{a}; {b}"));
    Ok(BulkEnded {
        problem,
        ..summary(&batch, ended, file, result)
    })
}

/// The marked eSIMs as a rows file `esimdash-topup-<time>.csv` (never replacing one).
fn write_rows(dir: &Path, order: &BulkTopup) -> Result<PathBuf, String> {
    // Written by the CSV writer: a slug from the API is quoted as it needs, never read as two.
    let mut csv = csv::Writer::from_writer(Vec::new());
    let failed = |e: csv::Error| format!("the rows could not be written ({e}); nothing was paid");
    csv.write_record(["iccid", "slug", "qty"]).map_err(failed)?;
    for iccid in &order.iccids {
        csv.write_record([iccid.as_str(), &order.slug, &order.qty.to_string()])
            .map_err(failed)?;
    }
    let text = csv.into_inner().map_err(|e| failed(e.into_error().into()))?;
    let stem = file::timed_stem("topup");
    for path in file::numbered(dir, &stem, ".csv") {
        match file::write(&path, &text, Existing::Keep) {
            Ok(path) => return Ok(path),
            Err(FileError::Exists { .. }) => {}
            Err(e) => return Err(format!("the rows could not be written ({e}); nothing was paid")),
        }
    }
    Err(format!(
        "no free file name for {stem} in {}; nothing was paid",
        dir.display()
    ))
}

/// Why the checked rows are not paid.
enum Refusal {
    /// Only this: these eSIMs were topped up with the same minutes ago (ICCID, in words).
    Repeats(Vec<(Iccid, String)>),
    Why(String),
}

impl From<String> for Refusal {
    fn from(why: String) -> Self {
        Refusal::Why(why)
    }
}

/// Why the checked rows are not paid: a row the check refuses, or a total other than the one
/// the user confirmed (a price changed meanwhile), or a balance too short.
fn refusal(batch: &Batch, order: &BulkTopup) -> Option<Refusal> {
    let iccid = |l: &bulk::Line| l.row.iccid().map(ToString::to_string).unwrap_or_default();
    let refused: Vec<String> = batch
        .problems
        .iter()
        .cloned()
        .chain(batch.lines.iter().filter_map(|l| match &l.state {
            State::Invalid(why) => Some(format!("{}: {why}", iccid(l))),
            _ => None,
        }))
        .collect();
    if !refused.is_empty() {
        return Some(Refusal::Why(format!(
            "{} eSIM(s) cannot be topped up so: {}",
            refused.len(),
            refused.join("; ")
        )));
    }
    let repeats: Vec<(Iccid, String)> = batch
        .lines
        .iter()
        .filter_map(|l| match (&l.state, l.row.iccid()) {
            (State::Repeat { earlier, .. } | State::PaidBefore { earlier, .. }, Some(iccid)) => {
                Some((iccid.clone(), earlier.clone()))
            }
            _ => None,
        })
        .collect();
    if !repeats.is_empty() {
        return Some(Refusal::Repeats(repeats));
    }
    let Some(total) = batch.total() else {
        return Some(Refusal::Why("the total is too large to compute exactly".to_string()));
    };
    if total != order.total {
        return Some(Refusal::Why(format!(
            "the total is now {} USD, not the {} USD confirmed (a price changed)",
            format_amount(total),
            format_amount(order.total)
        )));
    }
    esimdash_front::purchase::shortfall_message(batch.balance.unwrap_or_default(), total).map(Refusal::Why)
}

/// A run that paid nothing leaves no rows file behind (the journal is the account's, every
/// file's: it stays).
fn forget(file: &Path) {
    if let Err(e) = std::fs::remove_file(file) {
        tracing::warn!(path = %file.display(), %e, "could not remove a bulk file that paid nothing");
    }
}

fn summary(batch: &Batch, ended: bulk::Ended, file: PathBuf, result: Result<PathBuf, String>) -> BulkEnded {
    // Every row of the dashboard's run is a top-up: it has its eSIM.
    let rows = |outcome: RowOutcome| {
        batch
            .lines
            .iter()
            .filter(move |l| l.state.outcome() == outcome)
            .filter_map(|l| Some((l.row.iccid()?.clone(), l)))
    };
    let with_why = |outcome: RowOutcome| -> Vec<(Iccid, String)> {
        rows(outcome)
            .map(|(iccid, l)| (iccid, l.state.error().unwrap_or_default().to_string()))
            .collect()
    };
    BulkEnded {
        ended,
        problem: None,
        placed: rows(RowOutcome::Placed).map(|(iccid, _)| iccid).collect(),
        failed: with_why(RowOutcome::Failed),
        unknown: with_why(RowOutcome::Unknown),
        not_paid: batch.count(RowOutcome::NotPaid),
        file,
        result,
    }
}
