//! The files the dashboard writes for the user, in the export directory: an eSIM's QR code as
//! a PNG, and a view as CSV. Both run off the event loop (a CSV export reads page after page,
//! paced by the client) and report back as messages; a cancelled export's task is aborted,
//! which drops its half-written temporary file.

use super::msg::{ExportJob, ExportStep, JobId, Msg, SaveError};
use esimdash_api::Client;
use esimdash_api::pages::{Listing, Page, Progress};
use esimdash_domain::iccid::Iccid;
use esimdash_front::export::csv_rows::{self, writer};
use esimdash_front::export::file::{self, Existing, FileError, PendingFile};
use esimdash_qr::{FILE_SCALE, QrMatrix};
use std::path::{Path, PathBuf};
use tokio::sync::mpsc::UnboundedSender;
use tokio::task::AbortHandle;

/// Writes `<ICCID>.png` in `dir`, off the event loop (`qr`: the ICCID and its code).
pub fn save_qr(dir: &Path, id: JobId, qr: (Iccid, String), replace: bool, tx: &UnboundedSender<Msg>) {
    let (iccid, code) = qr;
    let path = dir.join(format!("{iccid}.png"));
    let tx = tx.clone();
    tokio::task::spawn_blocking(move || {
        let existing = if replace { Existing::Replace } else { Existing::Keep };
        let result = QrMatrix::encode(&code)
            .and_then(|m| m.to_png(FILE_SCALE))
            .map_err(SaveError::Failed)
            .and_then(|png| file::write(&path, &png, existing).map_err(save_error));
        let _ = tx.send(Msg::QrSaved { id, result });
    });
}

/// Writes the QR codes of `wanted` into a new folder of `dir`, off the event loop (finding the
/// eSIMs whose record is not at hand takes requests).
pub fn save_qr_folder(
    dir: &Path,
    id: JobId,
    wanted: Vec<esimdash_front::export::qr_folder::Wanted>,
    client: &Client,
    tx: &UnboundedSender<Msg>,
) {
    let (client, tx, dir) = (client.clone(), tx.clone(), dir.to_path_buf());
    tokio::spawn(async move {
        let result = esimdash_front::export::qr_folder::write(&client, &dir, wanted).await;
        let _ = tx.send(Msg::QrFolderSaved { id, result });
    });
}

fn save_error(e: FileError) -> SaveError {
    match e {
        FileError::Exists { path } => SaveError::Exists(path),
        other => SaveError::Failed(other.to_string()),
    }
}

/// Starts writing `esimdash-<what>-<time>.csv` in `dir`; aborting the task drops the
/// half-written file.
pub fn export(dir: &Path, id: JobId, job: ExportJob, client: &Client, tx: &UnboundedSender<Msg>) -> AbortHandle {
    let stem = file::timed_stem(job.what());
    // Two exports in one second get `-2`, `-3`…: an export never replaces a file.
    let path = file::numbered(dir, &stem, ".csv")
        .find(|p| !p.exists())
        .unwrap_or_else(|| dir.join(format!("{stem}.csv")));
    let (client, tx) = (client.clone(), tx.clone());
    let task = tokio::spawn(async move {
        let progress_tx = tx.clone();
        let report = move |progress: Progress| {
            let _ = progress_tx.send(Msg::Export {
                id,
                step: ExportStep::Progress(progress),
            });
        };
        let result = write_csv(&client, &path, job, report).await;
        let _ = tx.send(Msg::Export {
            id,
            step: ExportStep::Done(result),
        });
    });
    task.abort_handle()
}

/// Writes the job's rows; the file gets its name only once complete.
async fn write_csv(
    client: &Client,
    path: &Path,
    job: ExportJob,
    report: impl Fn(Progress),
) -> Result<(PathBuf, u64), String> {
    let header = match &job {
        ExportJob::Plans(_) => csv_rows::PLAN_HEADER,
        ExportJob::Orders(_) => csv_rows::ORDER_HEADER,
        ExportJob::Esims { .. } => csv_rows::ESIM_HEADER,
    };
    let file = PendingFile::create(path, Existing::Keep).map_err(|e| e.to_string())?;
    let mut csv = writer(file, header).map_err(|e| e.to_string())?;
    let mut rows = 0u64;
    let mut write = |fields: Vec<String>| -> Result<(), String> {
        rows += 1;
        csv.write_record(fields)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    match job {
        ExportJob::Plans(plans) => {
            for p in &plans {
                write(csv_rows::plan(p))?;
            }
        }
        ExportJob::Orders(query) => {
            Listing::Orders(query)
                .read_all(client, |page, progress| {
                    report(progress);
                    match page {
                        Page::Orders(items) => items
                            .iter()
                            .try_for_each(|o| write(csv_rows::order(o)))
                            .map_err(ApiFailure),
                        Page::Esims(_) => Ok(()),
                    }
                })
                .await
                .map_err(|e: ApiFailure| e.0)?;
        }
        ExportJob::Esims { query, only } => {
            Listing::Esims(query)
                .read_all(client, |page, progress| {
                    report(progress);
                    let Page::Esims(items) = page else { return Ok(()) };
                    items
                        .iter()
                        .filter(|e| only.as_ref().is_none_or(|set| set.contains(&e.raw_order_json.iccid)))
                        .try_for_each(|e| write(csv_rows::esim(e)))
                        .map_err(ApiFailure)
                })
                .await
                .map_err(|e: ApiFailure| e.0)?;
        }
    }
    let file = csv
        .into_inner()
        .map_err(|e| format!("cannot write {}: {}", path.display(), e.error()))?;
    let path = file.finish().map_err(|e| e.to_string())?;
    Ok((path, rows))
}

/// A failure of the read, in words.
struct ApiFailure(String);

impl From<esimdash_api::ApiError> for ApiFailure {
    fn from(e: esimdash_api::ApiError) -> Self {
        ApiFailure(format!("the API failed: {e}"))
    }
}
