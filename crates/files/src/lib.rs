//! Files that are ours alone (the audit trail, the saved inventory index and the watch's memory
//! as SQLite first creates them, the payment lock): created 0600 in a 0700 directory, and never
//! opened through a symbolic link, so that a link planted at their place cannot make esimdash
//! append to, replace or chmod another file; and files written whole (a bulk run's result).

use std::fs::{DirBuilder, File, OpenOptions};
use std::io;
use std::path::Path;

/// Writes `path` whole, readable by this user only: `write` fills a temporary file beside it,
/// which is flushed to disk and renamed over `path`, so that a reader finds the old file or
/// the new one, never half of one.
pub fn write_whole(path: &Path, write: impl FnOnce(&mut dyn io::Write) -> io::Result<()>) -> io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    let temp = tempfile::NamedTempFile::new_in(dir)?;
    let mut out = io::BufWriter::new(temp.as_file());
    write(&mut out)?;
    io::Write::flush(&mut out)?;
    drop(out);
    temp.as_file().sync_all()?;
    temp.persist(path).map_err(|e| e.error)?;
    // The rename is on disk only once the folder is: a power cut must not bring the old file
    // back after what was appended to the new one.
    File::open(dir)?.sync_all()?;
    Ok(())
}

/// Creates `dir` (and its parents) private to this user; esimdash's own folders that are links
/// are refused first, so that nothing (a mode made private) is changed through one.
pub fn create_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    no_linked_folder(dir)?;
    let mut builder = DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Opens `path` for appending (created if missing), made private if others could read it.
pub fn open_append(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).append(true).read(true);
    open(path, &mut options)
}

/// Creates `path` new for writing; an existing file or link there is an error.
pub fn create_new(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.create_new(true).write(true);
    open(path, &mut options)
}

/// Creates `path` empty if it is not there (a mark); an existing file is kept as it is.
pub fn create_or_keep(path: &Path) -> io::Result<()> {
    match create_new(path) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        other => other.map(drop),
    }
}

/// Opens `path` for reading and writing, created if missing (a lock file).
pub fn open_or_create(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).read(true).write(true).truncate(false);
    open(path, &mut options)
}

/// The lock file at `path` (created if missing), locked, if no other process holds it now
/// (`None`): a `flock` the kernel lets go of when its holder ends, however it ends.
pub fn hold_if_free(path: &Path) -> io::Result<Option<File>> {
    let file = open_or_create(path)?;
    match file.try_lock() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

fn open(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        no_linked_folder(dir)?;
        create_dir(dir)?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        // O_NONBLOCK: a FIFO or device put in a private file's place answers at once instead
        // of holding the open (a trail that is a FIFO hung every command); it is refused below.
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK);
        let file = options.open(path).map_err(|e| refuse_link(path, e))?;
        regular_only(path, &file)?;
        if file.metadata()?.permissions().mode() & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        Ok(file)
    }
    #[cfg(not(unix))]
    {
        options.open(path)
    }
}

/// Reads a file whole, refusing anything but a regular file (a FIFO, a device, `/dev/zero`)
/// before reading a byte: nothing esimdash reads (the trail, a CA file, a bulk file, the saved
/// index, the watch's memory) may hold a command without a limit.
pub fn read_regular(path: &Path) -> io::Result<Vec<u8>> {
    let mut file = open_regular(path)?;
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut file, &mut bytes)?;
    Ok(bytes)
}

/// As `read_regular`, reading at most `max` bytes: `None` when the file holds more (a file
/// given by a user may be any size; it is refused before it fills the memory).
pub fn read_regular_at_most(path: &Path, max: u64) -> io::Result<Option<Vec<u8>>> {
    let file = open_regular(path)?;
    let mut bytes = Vec::new();
    // One byte past the limit tells a file over it from one exactly at it.
    io::Read::read_to_end(&mut io::Read::take(file, max.saturating_add(1)), &mut bytes)?;
    Ok((bytes.len() as u64 <= max).then_some(bytes))
}

fn open_regular(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path)?;
    regular_only(path, &file)?;
    Ok(file)
}

fn regular_only(path: &Path, file: &File) -> io::Result<()> {
    if file.metadata()?.is_file() {
        return Ok(());
    }
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "{} is not a regular file (a pipe or a device?); esimdash reads and writes only plain files there",
            path.display()
        ),
    ))
}

/// O_NOFOLLOW answers ELOOP for a link: say it in words.
#[cfg(unix)]
/// esimdash's own folders (`…/esimdash/` and the folders in it) are never symbolic links: a
/// link there would send the trail, the locks or the journals wherever it points. Folders above
/// (the XDG state directory, a home moved by a link) are the user's to arrange.
fn no_linked_folder(dir: &Path) -> io::Result<()> {
    let ours = dir
        .ancestors()
        .take(4)
        .position(|f| f.file_name().is_some_and(|n| n == "esimdash"));
    let Some(top) = ours else { return Ok(()) };
    for folder in dir.ancestors().take(top + 1) {
        // Checked before anything is created in it; a folder not there yet is made plain.
        let is_link = match std::fs::symlink_metadata(folder) {
            Ok(meta) => meta.file_type().is_symlink(),
            Err(e) if e.kind() == io::ErrorKind::NotFound => false,
            Err(e) => return Err(e),
        };
        if is_link {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "{} is a symbolic link; esimdash keeps its private files only in plain folders (remove the link)",
                    folder.display()
                ),
            ));
        }
    }
    Ok(())
}

fn refuse_link(path: &Path, error: io::Error) -> io::Error {
    if error.raw_os_error() == Some(libc::ELOOP) {
        return io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "{} is a symbolic link; esimdash writes its private files only as plain files (remove the link)",
                path.display()
            ),
        );
    }
    error
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_pipe_or_a_device_in_a_files_place_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("audit.jsonl");
        let name = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path and a mode; mkfifo touches nothing else.
        assert_eq!(unsafe { libc::mkfifo(name.as_ptr(), 0o600) }, 0);
        let started = std::time::Instant::now();
        // Nobody reads the pipe: an open that waited would never return.
        let appended = open_append(&fifo);
        assert!(appended.is_err(), "a FIFO as the trail");
        let read = read_regular(&fifo).unwrap_err();
        assert!(read.to_string().contains("not a regular file"), "{read}");
        let zero = read_regular(Path::new("/dev/zero")).unwrap_err();
        assert!(zero.to_string().contains("not a regular file"), "{zero}");
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "x").unwrap();
        assert_eq!(read_regular(&plain).unwrap(), b"x");
    }

    #[test]
    fn esimdashs_own_folders_are_never_links_but_the_folders_above_may_be() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        create_dir(&elsewhere).unwrap();
        let state = dir.path().join("state");
        create_dir(&state).unwrap();
        std::os::unix::fs::symlink(&elsewhere, state.join("esimdash")).unwrap();
        for path in ["esimdash/audit.jsonl", "esimdash/locks/a.lock"] {
            let error = open_append(&state.join(path)).unwrap_err();
            assert!(error.to_string().contains("symbolic link"), "{path}: {error}");
        }
        assert!(
            std::fs::read_dir(&elsewhere).unwrap().next().is_none(),
            "nothing written there"
        );
        // A link above esimdash's folder (a state directory moved by the user) is theirs.
        let moved = dir.path().join("moved");
        std::os::unix::fs::symlink(&elsewhere, &moved).unwrap();
        assert!(open_append(&moved.join("esimdash/audit.jsonl")).is_ok());
    }

    #[test]
    fn a_linked_folder_of_ours_is_refused_before_its_mode_is_touched() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let shared = dir.path().join("shared");
        std::fs::create_dir(&shared).unwrap();
        std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o755)).unwrap();
        let cache = dir.path().join("cache");
        std::fs::create_dir(&cache).unwrap();
        std::os::unix::fs::symlink(&shared, cache.join("esimdash")).unwrap();
        let error = create_dir(&cache.join("esimdash")).unwrap_err();
        assert!(error.to_string().contains("symbolic link"), "{error}");
        let mode = std::fs::metadata(&shared).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755, "the shared folder's mode is untouched");
    }

    #[test]
    fn a_link_in_place_of_a_private_file_is_refused_and_its_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("victim");
        std::fs::write(&target, "precious\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
        let link = dir.path().join("state/audit.jsonl");
        create_dir(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&target, &link).unwrap();
        for result in [open_append(&link), create_new(&link), open_or_create(&link)] {
            let error = result.unwrap_err();
            assert!(
                error.to_string().contains("symbolic link") || error.kind() == io::ErrorKind::AlreadyExists,
                "{error}"
            );
        }
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious\n");
        let mode = std::fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644, "the target was not chmod-ed");

        let plain = dir.path().join("state/plain");
        open_append(&plain).unwrap().write_all(b"x").unwrap();
        assert_eq!(std::fs::metadata(&plain).unwrap().permissions().mode() & 0o777, 0o600);
    }
}
