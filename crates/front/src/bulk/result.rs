//! The result CSV of a bulk run: every row of the file with its outcome, its order and its
//! error, written whole (a temporary file renamed over it), so that a half-written result is
//! never read.

use super::Batch;
use crate::export::csv_rows::text;
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
    esimdash_files::write_whole(path, |out| {
        let mut writer = csv::Writer::from_writer(out);
        writer.write_record(["row", "iccid", "slug", "quantity", "outcome", "order", "error"])?;
        for line in &batch.lines {
            let row = &line.row;
            // The order number and the error are the server's words, the slug the file's: a
            // spreadsheet must show them as text, never run them (as every export does).
            writer.write_record([
                row.line.to_string(),
                row.iccid().map(ToString::to_string).unwrap_or_default(),
                text(&row.spend.slug),
                row.spend.qty.to_string(),
                line.state.word().to_string(),
                text(line.state.order().unwrap_or_default()),
                text(line.state.error().unwrap_or_default()),
            ])?;
        }
        writer.flush()
    })
    .map_err(|e| format!("the result {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bulk::rows::{Kind, parse};
    use crate::bulk::{Line, State};

    #[test]
    fn server_words_in_the_result_are_text_to_a_spreadsheet() {
        let parsed = parse(b"slug,qty\n=cmd|'/C'!A0,1\nfr-1gb-7d,1\n", Kind::Order).unwrap();
        let mut lines = parsed.rows.into_iter().map(|row| Line {
            row,
            total: None,
            state: State::Placed {
                order: "=HYPERLINK(\"http://x\",\"B1\")".to_string(),
                now: true,
                caveat: None,
            },
        });
        let first = lines.next().unwrap();
        let second = Line {
            state: State::Failed("@SUM(1+1)\u{1b}[2J".to_string()),
            ..lines.next().unwrap()
        };
        let batch = Batch {
            lines: vec![first, second],
            problems: Vec::new(),
            balance: None,
            refused: None,
        };
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rows.result.csv");
        write(&batch, &path).unwrap();
        let mut reader = csv::Reader::from_path(&path).unwrap();
        let rows: Vec<csv::StringRecord> = reader.records().map(Result::unwrap).collect();
        assert_eq!(&rows[0][2], "'=cmd|'/C'!A0");
        assert_eq!(&rows[0][5], "'=HYPERLINK(\"http://x\",\"B1\")");
        assert!(
            rows[1][6].starts_with("'@SUM(1+1)") && !rows[1][6].contains('\u{1b}'),
            "{:?}",
            &rows[1][6]
        );
    }
}
