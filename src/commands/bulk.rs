//! `esimdash topup --from FILE.csv` and `esimdash buy --from FILE.csv`: the file checked whole
//! and its plan printed (`--dry-run` stops there), one confirmation, then the rows paid one by
//! one with a progress bar (`bulk`), and a result CSV written beside the file. A re-run after a
//! crash or a stop goes on where the last one ended.

use super::buying::confirm;
use super::table::{Align, Table};
use super::{CommandError, Output};
use crate::cli::{BulkArgs, SpendArgs};
use crate::commands::output::outln;
use esimdash_api::Client;
use esimdash_domain::money::format_amount;
use esimdash_domain::purchase::{NOTHING_BOUGHT, NOTHING_TOPPED_UP};
use esimdash_front::bulk::journal::JournalError;
use esimdash_front::bulk::rows::Kind;
use esimdash_front::bulk::{self as engine, Batch, CheckError, Ended, Line, Prepared, RowOutcome, State, result};
use serde_json::json;
use std::io::{IsTerminal, Write};
use std::path::Path;

pub async fn run(
    client: &Client,
    kind: Kind,
    file: &Path,
    bulk: &BulkArgs,
    spend: &SpendArgs,
    output: &Output,
) -> Result<(), CommandError> {
    let nothing = match kind {
        Kind::Topup => NOTHING_TOPPED_UP,
        Kind::Order => NOTHING_BOUGHT,
    };
    let refuse = |e: CommandError| e.nothing_moved(nothing);
    let Prepared { mut batch, mut journal } = checked(client, kind, file, bulk.dry_run, spend.again)
        .await
        .map_err(refuse)?;
    let result_path = bulk.result.clone().unwrap_or_else(|| result::beside(file));
    show_plan(&batch, kind, output)?;
    let refused = refusal(&batch, file);
    if output.is_json() && (refused.is_some() || bulk.dry_run) {
        output.print_json(&rows_json(&batch, None))?;
    }
    if let Some(refused) = refused {
        return Err(refuse(refused));
    }
    let Some(total) = batch.total() else {
        return Err(refuse(CommandError::Refused(
            "the file's total is too large to compute exactly".to_string(),
        )));
    };
    let to_pay = batch.to_pay().count();
    if to_pay == 0 && !bulk.dry_run {
        return nothing_left(&batch, &mut journal, file, &result_path, output);
    }
    let balance = batch.balance.unwrap_or_default();
    if let Some(message) = esimdash_front::purchase::shortfall_message(balance, total) {
        return Err(refuse(CommandError::Refused(message)));
    }
    if bulk.dry_run {
        if !output.is_json() {
            outln!("Dry run: nothing was paid.");
        }
        return Ok(());
    }
    let summary = format!(
        "Pay {to_pay} row(s) of {}, {} USD in all? Balance {} USD → {} USD.",
        file.display(),
        format_amount(total),
        format_amount(balance),
        esimdash_front::purchase::balance_after(balance, total)
            .map(format_amount)
            .unwrap_or_default()
    );
    // The result's folder is tried before anything is paid, not found unwritable after.
    tempfile::NamedTempFile::new_in(result::folder_of(&result_path)).map_err(|e| {
        refuse(CommandError::Io(std::io::Error::other(format!(
            "the result {}: {e}",
            result_path.display()
        ))))
    })?;
    confirm(spend.yes, &summary).await.map_err(refuse)?;
    let mut bar = Bar::new(to_pay);
    let ended = engine::pay(
        client,
        &mut batch,
        &mut journal,
        spend.again,
        esimdash_api::signals::stopping,
        |line| {
            bar.tell(line);
        },
    )
    .await
    .map_err(journaled)?;
    bar.done();
    result::write(&batch, &result_path).map_err(|e| CommandError::Io(std::io::Error::other(e)))?;
    finish(&batch, ended, &result_path, output)
}

/// Every row is placed already (or refused before): the journal closed when whole, the result
/// written, and nothing paid.
fn nothing_left(
    batch: &Batch,
    journal: &mut esimdash_front::bulk::journal::Journal,
    file: &Path,
    result_path: &Path,
    output: &Output,
) -> Result<(), CommandError> {
    engine::close_if_whole(batch, journal).map_err(journaled)?;
    result::write(batch, result_path).map_err(|e| CommandError::Io(std::io::Error::other(e)))?;
    if !output.is_json() && batch.count(RowOutcome::Placed) == batch.lines.len() {
        outln!(
            "Every row of {} was placed already (the journal: {}); nothing more is paid. To pay the same rows again, run it again with --again.",
            file.display(),
            journal.path().display()
        );
    }
    finish(batch, Ended::Done, result_path, output)
}

/// The file read, its journal opened (locked unless `dry_run`) and every row checked.
async fn checked(
    client: &Client,
    kind: Kind,
    file: &Path,
    dry_run: bool,
    again: bool,
) -> Result<Prepared, CommandError> {
    let run = engine::Run {
        lock: !dry_run,
        again,
        own_file: false,
    };
    engine::prepare(client, kind, file, run).await.map_err(|e| match e {
        CheckError::Api(e) => e.into(),
        CheckError::Journal(e) => journaled(e),
        CheckError::File(_) | CheckError::NoStateDir => CommandError::Usage(e.to_string()),
        CheckError::Trail(why) => CommandError::Io(std::io::Error::other(why)),
        CheckError::Stopped => CommandError::Interrupted(
            esimdash_api::signals::stopped_by().unwrap_or(esimdash_api::signals::Stop::Interrupt),
        ),
    })
}

fn journaled(e: JournalError) -> CommandError {
    match e {
        JournalError::Busy(_) => CommandError::Refused(e.to_string()),
        JournalError::Io(..) => CommandError::Io(std::io::Error::other(e.to_string())),
    }
}

/// The plan: each row and where it stands, then the total against the balance.
fn show_plan(batch: &Batch, kind: Kind, output: &Output) -> Result<(), CommandError> {
    if output.is_json() {
        // With --json the plan is printed only by --dry-run and by the end: one document.
        return Ok(());
    }
    let topups = kind == Kind::Topup;
    let mut headers = vec![("ROW", Align::Right)];
    if topups {
        headers.push(("ICCID", Align::Left));
    }
    headers.extend([
        ("SLUG", Align::Left),
        ("QTY", Align::Right),
        ("TOTAL", Align::Right),
        ("STATE", Align::Left),
    ]);
    let mut t = Table::new(&headers);
    for line in &batch.lines {
        let state = match &line.state {
            State::ToPay => "to pay".to_string(),
            State::Placed { order, .. } => format!("placed earlier: {order}"),
            other => other.word().replace('_', " "),
        };
        let mut cells = vec![line.row.line.to_string()];
        if topups {
            cells.push(line.row.iccid().map_or_else(String::new, ToString::to_string));
        }
        cells.extend([
            line.row.spend.slug.clone(),
            line.row.spend.qty.to_string(),
            line.total.map_or_else(|| "-".to_string(), format_amount),
            state,
        ]);
        t.row(cells);
    }
    outln!("{}", t.render());
    // Every problem in the file's line order, whether reading the file or checking its rows
    // with the API found it.
    let mut said: Vec<(usize, String)> = batch.problems.iter().map(|p| (line_of(p), p.clone())).collect();
    said.extend(batch.lines.iter().filter_map(|line| {
        let error = line.state.error()?;
        Some((line.row.line as usize, format!("line {}: {error}", line.row.line)))
    }));
    said.sort_by_key(|(line, _)| *line);
    for (_, problem) in said {
        outln!("{problem}");
    }
    let to_pay = batch.to_pay().count();
    let earlier = batch.count(RowOutcome::Placed);
    if to_pay > 0
        && batch.count(RowOutcome::Invalid) + batch.count(RowOutcome::Repeat) == 0
        && batch.problems.is_empty()
    {
        outln!(
            "To pay: {to_pay} of {} row(s), {} USD; balance {} USD.{}",
            batch.lines.len(),
            batch.total().map_or_else(|| "?".to_string(), format_amount),
            batch.balance.map_or_else(|| "?".to_string(), format_amount),
            if earlier > 0 {
                format!(" {earlier} row(s) were placed by an earlier run and are not paid again.")
            } else {
                String::new()
            }
        );
    }
    Ok(())
}

/// The outcome in a sentence (or one JSON document), and the exit status it calls for.
fn finish(batch: &Batch, ended: Ended, result: &Path, output: &Output) -> Result<(), CommandError> {
    let placed_now = batch.placed_now();
    let placed = batch.count(RowOutcome::Placed);
    let (failed, unknown, left) = (
        batch.count(RowOutcome::Failed),
        batch.count(RowOutcome::Unknown),
        batch.count(RowOutcome::NotPaid),
    );
    let second = batch.with_caveat(|c| matches!(c, engine::Caveat::PossiblySecond(_)));
    let charged_other = batch.with_caveat(|c| matches!(c, engine::Caveat::ChargedOther(_)));
    let sentence = format!(
        "{placed} of {} row(s) placed ({placed_now} now, {} by an earlier run), {failed} failed, {unknown} unknown, {left} not paid yet. Result: {}",
        batch.lines.len(),
        placed - placed_now,
        result.display()
    );
    if output.is_json() {
        output.print_json(&rows_json(batch, Some(result)))?;
    } else {
        outln!("{sentence}");
    }
    match ended {
        Ended::Stopped => Err(CommandError::Stopped(
            esimdash_api::signals::stopped_by().unwrap_or(esimdash_api::signals::Stop::Interrupt),
            format!(
                "stopped by a signal after the payment in flight was answered: {sentence}. Run the same command again to go on."
            ),
        )),
        // The rows are said above; the exit status is the refusal's (3).
        Ended::Refused => Err(batch
            .refused
            .clone()
            .map_or_else(|| CommandError::Refused(sentence.clone()), CommandError::Api)),
        Ended::AtUnknown => Err(CommandError::OutcomeUnknown(format!(
            "a row's outcome is unknown, so no further row was paid: {sentence}"
        ))),
        // Unknown first: money may have moved, which a failure alone rules out.
        Ended::Done if unknown > 0 => Err(CommandError::OutcomeUnknown(sentence)),
        Ended::Done if second > 0 => Err(CommandError::OutcomeUnknown(format!(
            "{sentence}; {second} row(s) were sent once more after a lost answer and the server did not confirm the key: possibly second orders (each said in the result)"
        ))),
        Ended::Done if charged_other > 0 => Err(CommandError::ChargedOtherRows(charged_other)),
        Ended::Done if failed > 0 => Err(CommandError::Refused(format!(
            "{failed} row(s) failed (see the result); nothing was paid for them. Run the same command again to retry them."
        ))),
        Ended::Done => Ok(()),
    }
}

/// Every row as `--json` gives it, with the counts, and the result's path once written.
fn rows_json(batch: &Batch, result: Option<&Path>) -> serde_json::Value {
    let placed_now = batch.placed_now();
    json!({
        "rows": batch.lines.iter().map(row_json).collect::<Vec<_>>(),
        "toPay": batch.to_pay().count(),
        "totalUsd": batch.total().map(format_amount),
        "balanceBeforeUsd": batch.balance.map(format_amount),
        "problems": batch.problems,
        "placed": batch.count(RowOutcome::Placed),
        "placedNow": placed_now,
        "failed": batch.count(RowOutcome::Failed),
        "unknown": batch.count(RowOutcome::Unknown),
        "invalid": batch.count(RowOutcome::Invalid),
        "repeat": batch.count(RowOutcome::Repeat),
        "notPaid": batch.count(RowOutcome::NotPaid),
        "result": result.map(|r| r.display().to_string()),
    })
}

fn row_json(line: &Line) -> serde_json::Value {
    json!({
        "row": line.row.line,
        "iccid": line.row.iccid().map(ToString::to_string),
        "slug": line.row.spend.slug,
        "quantity": line.row.spend.qty,
        "total": line.total.map(format_amount),
        "outcome": line.state.word(),
        "order": line.state.order(),
        "error": line.state.error(),
    })
}

/// A progress bar on stderr, drawn only on a terminal.
struct Bar {
    of: usize,
    done: usize,
    drawn: bool,
}

impl Bar {
    fn new(of: usize) -> Self {
        let mut bar = Self {
            of,
            done: 0,
            drawn: false,
        };
        bar.draw("");
        bar
    }

    fn tell(&mut self, line: &Line) {
        self.done += 1;
        let what = match &line.state {
            State::Placed { order, .. } => format!("row {} placed: {order}", line.row.line),
            other => format!("row {} {}", line.row.line, other.word()),
        };
        self.draw(&what);
    }

    fn draw(&mut self, what: &str) {
        let mut err = std::io::stderr();
        if !err.is_terminal() {
            return;
        }
        const WIDTH: usize = 30;
        let filled = (self.done * WIDTH).checked_div(self.of).unwrap_or(WIDTH);
        let _ = write!(
            err,
            "\r\x1b[2K[{}{}] {}/{} {what}",
            "#".repeat(filled),
            "-".repeat(WIDTH - filled),
            self.done,
            self.of
        );
        let _ = err.flush();
        self.drawn = true;
    }

    fn done(&mut self) {
        if self.drawn {
            let _ = writeln!(std::io::stderr());
        }
    }
}

/// Why the checked file is not paid: every row paid before, or rows the check refuses.
fn refusal(batch: &Batch, file: &Path) -> Option<CommandError> {
    if let Some(earlier) = paid_whole_before(batch) {
        return Some(CommandError::Usage(format!(
            "every row of {} was paid before (its first row {earlier}; each row's order in the plan): the same rows, whatever the file's name or place. To pay them again on purpose, add --again",
            file.display()
        )));
    }
    let (wrong, repeats) = (
        batch.count(RowOutcome::Invalid) + batch.problems.len(),
        batch.count(RowOutcome::Repeat),
    );
    let mut why = Vec::new();
    if wrong > 0 {
        why.push(format!(
            "{wrong} row(s) cannot be paid (each said in the plan): fix or remove them, then run again"
        ));
    }
    if repeats > 0 {
        why.push(format!(
            "{repeats} row(s) pay what was paid before (each said in the plan, with when): add --again to pay them a second time, or remove them"
        ));
    }
    (!why.is_empty()).then(|| CommandError::Usage(why.join("; ")))
}

/// When every row of the file was placed by a run that placed its file whole (from this path or
/// any other): when and where, in words.
fn paid_whole_before(batch: &Batch) -> Option<String> {
    let mut earlier = batch.lines.iter().map(|l| match &l.state {
        State::PaidBefore { earlier, .. } => Some(earlier),
        _ => None,
    });
    let first = earlier.next()??;
    (batch.problems.is_empty() && earlier.all(|e| e.is_some())).then(|| first.clone())
}

/// The line a problem of the file's reading names (`line N: …`); 0 for one of the whole file.
fn line_of(problem: &str) -> usize {
    problem
        .strip_prefix("line ")
        .and_then(|rest| rest.split(':').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}
