//! Files the user asked for (QR images, CSV exports): written to a temporary file beside the
//! target and renamed at the end, so that an interrupted write never leaves half a file under
//! the name; dropped before the end, the temporary file is removed.

use std::io::Write;
use std::path::{Path, PathBuf};

/// What happens when the target exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    Replace,
    Keep,
}

#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{path} exists already")]
    Exists { path: PathBuf },
    #[error("cannot write {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

impl FileError {
    fn io(path: &Path, source: std::io::Error) -> Self {
        FileError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A file being written: `finish` gives it its name.
pub struct PendingFile {
    path: PathBuf,
    temp: tempfile::NamedTempFile,
    existing: Existing,
}

impl PendingFile {
    /// Starts writing `path`; an existing file is refused now (under `Keep`) rather than after
    /// the work.
    pub fn create(path: &Path, existing: Existing) -> Result<Self, FileError> {
        if existing == Existing::Keep && path.exists() {
            return Err(FileError::Exists {
                path: path.to_path_buf(),
            });
        }
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let temp = tempfile::Builder::new()
            .prefix(".esimdash-")
            .suffix(".part")
            .tempfile_in(dir)
            .map_err(|e| FileError::io(path, e))?;
        Ok(Self {
            path: path.to_path_buf(),
            temp,
            existing,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn writer(&mut self) -> &mut impl Write {
        self.temp.as_file_mut()
    }

    /// Flushes to disk and renames to the target. The temporary file is made readable as a
    /// new file would be (it is created 0600).
    pub fn finish(self) -> Result<PathBuf, FileError> {
        let path = self.path;
        let file = self.temp.as_file();
        file.sync_all().map_err(|e| FileError::io(&path, e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = file.set_permissions(std::fs::Permissions::from_mode(0o644));
        }
        let kept = match self.existing {
            Existing::Replace => self.temp.persist(&path),
            Existing::Keep => self.temp.persist_noclobber(&path),
        };
        match kept {
            // Named in full: "exported to esimdash-orders.csv" says nothing of where that is.
            Ok(_) => Ok(std::path::absolute(&path).unwrap_or(path)),
            Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => Err(FileError::Exists { path }),
            Err(e) => Err(FileError::io(&path, e.error)),
        }
    }
}

impl Write for PendingFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.temp.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.temp.flush()
    }
}

/// The names a new file or folder of the export directory is given, in turn, until one is
/// free: `<stem><ext>`, `<stem>-2<ext>`, `<stem>-3<ext>` … (`stem` usually holds the time, so
/// two in one second never replace each other).
pub fn numbered<'a>(dir: &'a Path, stem: &'a str, ext: &'a str) -> impl Iterator<Item = PathBuf> + 'a {
    (1..100).map(move |n| match n {
        1 => dir.join(format!("{stem}{ext}")),
        n => dir.join(format!("{stem}-{n}{ext}")),
    })
}

/// `esimdash-<what>-<local time>`: the first part of what the dashboard writes.
pub fn timed_stem(what: &str) -> String {
    format!("esimdash-{what}-{}", chrono::Local::now().format("%Y%m%d-%H%M%S"))
}

/// Writes a whole file at once.
pub fn write(path: &Path, bytes: &[u8], existing: Existing) -> Result<PathBuf, FileError> {
    let mut file = PendingFile::create(path, existing)?;
    file.writer().write_all(bytes).map_err(|e| FileError::io(path, e))?;
    file.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_appears_whole_or_not_at_all_and_keep_refuses_to_replace() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.csv");
        let mut pending = PendingFile::create(&path, Existing::Keep).unwrap();
        pending.writer().write_all(b"half").unwrap();
        assert!(!path.exists());
        drop(pending);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            0,
            "the temporary file is gone"
        );

        write(&path, b"one", Existing::Keep).unwrap();
        assert!(matches!(
            write(&path, b"two", Existing::Keep),
            Err(FileError::Exists { .. })
        ));
        assert_eq!(std::fs::read(&path).unwrap(), b"one");
        write(&path, b"two", Existing::Replace).unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"two");

        let err = write(&dir.path().join("no/such/dir/x.png"), b"x", Existing::Replace).unwrap_err();
        assert!(err.to_string().contains("no/such/dir/x.png"), "{err}");
    }
}
