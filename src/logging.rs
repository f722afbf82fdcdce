//! Logs go to a file, never to the terminal (the dashboard draws there; scripts read stdout).
//! The file is private to the user: it may name ICCIDs and order numbers, never a secret.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tracing_subscriber::EnvFilter;

/// `esimdash/esimdash.log` in the XDG state directory.
pub fn default_log_path() -> Option<PathBuf> {
    dirs::state_dir()
        .or_else(dirs::data_local_dir)
        .map(|d| d.join("esimdash").join("esimdash.log"))
}

/// Starts logging to `path` (or the default). Returns where the log goes, or `None` when it
/// cannot be opened: the program runs on without a log rather than failing.
pub fn init(path: Option<&Path>) -> Option<PathBuf> {
    let path = path.map(Path::to_path_buf).or_else(default_log_path)?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).ok()?;
    }
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(&path).ok()?;
    let filter = EnvFilter::try_from_env("ESIMDASH_LOG").unwrap_or_else(|_| EnvFilter::new("esimdash=info"));
    tracing_subscriber::fmt()
        .with_writer(Mutex::new(file))
        .with_ansi(false)
        // A log that cannot be written (a full disk) is no reason to write raw lines on the
        // terminal: what the user must know is told by the command itself.
        .log_internal_errors(false)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(path)
}
