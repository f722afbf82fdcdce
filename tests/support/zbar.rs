//! Decodes QR images with ZBar's `zbarimg`, a decoder independent of ours (and of the kind phone
//! apps use). Shared by the test crates that read QR codes.

use std::path::PathBuf;

/// Whether zbarimg can run here; where it is missing, CI fails and elsewhere the check is skipped
/// with a message (CI's script installs Debian's zbar-tools).
pub fn zbar_available() -> bool {
    if std::process::Command::new("zbarimg").arg("--version").output().is_ok() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must have zbarimg (Debian's zbar-tools)"
    );
    eprintln!("zbarimg is not installed: the ZBar cross-check is skipped");
    false
}

/// The text of each image file, one line per image, in order; `None` where zbarimg is missing.
pub fn zbar_decode_files(files: &[PathBuf]) -> Option<Vec<String>> {
    if !zbar_available() {
        return None;
    }
    let out = std::process::Command::new("zbarimg")
        .args(["-q", "--raw"])
        .args(files)
        .output()
        .unwrap();
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect(),
    )
}

/// The text of each PNG, one line per image, in order; `None` where zbarimg is missing.
#[allow(dead_code)]
pub fn zbar_decode(pngs: &[Vec<u8>]) -> Option<Vec<String>> {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<_> = pngs
        .iter()
        .enumerate()
        .map(|(i, png)| {
            let path = dir.path().join(format!("{i:04}.png"));
            std::fs::write(&path, png).unwrap();
            path
        })
        .collect();
    zbar_decode_files(&files)
}
