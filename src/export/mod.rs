//! Files written to disk for the user: CSV exports of a list and an eSIM's QR code as an image
//! (the codec is `qr`). Each appears whole or not at all (`file`); the CSV columns of each
//! record are in `csv_rows`. Requests that change the account on the server are another matter,
//! in `api::changes`.

pub mod csv_rows;
pub mod file;

use std::path::{Path, PathBuf};

/// Where exports go: the configured directory, else the XDG download directory, else the
/// current one.
pub fn export_dir(configured: Option<&Path>) -> PathBuf {
    configured
        .map(Path::to_path_buf)
        .or_else(dirs::download_dir)
        .unwrap_or_else(|| PathBuf::from("."))
}
