//! Files written to disk for the user: CSV exports of a list and an eSIM's QR code as an image
//! (the codec is `qr`). Each appears whole or not at all (`file`); the CSV columns of each
//! record are in `csv_rows`. Requests that change the account on the server are another matter,
//! in `esimdash_api`'s `changes`.

pub mod csv_rows;
pub mod file;
pub mod qr_folder;

use std::path::{Path, PathBuf};

/// Where exports go: the configured directory, else the XDG download directory, else the
/// current one; as an absolute path, from the directory esimdash started in.
pub fn export_dir(configured: Option<&Path>) -> PathBuf {
    let dir = configured
        .map(Path::to_path_buf)
        .or_else(dirs::download_dir)
        .unwrap_or_else(|| PathBuf::from("."));
    // Every message then names a file in full ("saved", "exists already: replace?", a
    // failure), not as "./8944….png" that says nothing of where that is.
    std::path::absolute(&dir).unwrap_or(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_export_directory_is_absolute() {
        let here = std::env::current_dir().expect("a current directory");
        assert_eq!(export_dir(Some(Path::new("exports"))), here.join("exports"));
        assert_eq!(export_dir(Some(Path::new("."))), here);
        assert_eq!(export_dir(Some(Path::new("/srv/x"))), PathBuf::from("/srv/x"));
        assert!(export_dir(None).is_absolute());
    }
}
