//! The result CSV of a bulk run: every row of the file with its outcome, its order and its
//! error, written whole (a temporary file renamed over it), so that a half-written result is
//! never read.

use super::Batch;
use std::path::{Path, PathBuf};

/// `rows.csv` → `rows.result.csv`, beside it.
pub fn beside(file: &Path) -> PathBuf {
    let stem = file
        .file_stem()
        .map_or_else(|| "bulk".into(), |s| s.to_string_lossy().into_owned());
    file.with_file_name(format!("{stem}.result.csv"))
}

/// The folder a file is in (`.` for a bare name).
pub fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."))
}

/// Writes every row of `batch` to `path`; the error says which file and why.
pub fn write(batch: &Batch, path: &Path) -> Result<(), String> {
    crate::private_file::write_whole(path, |out| {
        let mut writer = csv::Writer::from_writer(out);
        writer.write_record(["row", "iccid", "slug", "quantity", "outcome", "order", "error"])?;
        for line in &batch.lines {
            let row = &line.row;
            writer.write_record([
                row.line.to_string(),
                row.iccid().map(ToString::to_string).unwrap_or_default(),
                row.spend.slug.clone(),
                row.spend.qty.to_string(),
                line.state.word().to_string(),
                line.state.order().unwrap_or_default().to_string(),
                line.state.error().unwrap_or_default().to_string(),
            ])?;
        }
        writer.flush()
    })
    .map_err(|e| format!("the result {}: {e}", path.display()))
}
