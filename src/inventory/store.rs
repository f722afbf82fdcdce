//! The inventory saved between sessions, in the XDG cache directory: one file per base URL and
//! access code (named by a hash of both, so the file name gives neither away), private to the
//! user (file 0600, directory 0700). It holds what finding needs, never an activation code or
//! anything secret. A file that cannot be read, of another version, or of another account is
//! not trusted: the inventory is read from the API again and the file replaced.
//!
//! Every session of an account (the dashboard, a command) uses the same file: a save first
//! takes in what the file has that this session lacks (`Inventory::absorb`), under a lock, so
//! that two sessions saving in turn lose neither's pages.

use super::{Inventory, Package};
use crate::domain::status::Status;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// 5: each entry keeps its class (the state every view shows), read from its whole record.
const VERSION: u32 = 5;

/// Where the saved inventories go: `esimdash/` under the XDG cache directory.
pub fn default_dir() -> Option<PathBuf> {
    dirs::cache_dir().map(|d| d.join("esimdash"))
}

/// Which account a saved inventory belongs to: a hash of the base URL and the access code.
pub fn account_key(base_url: &str, access_code: &str) -> String {
    let digest = Sha256::digest(format!("{base_url}\n{access_code}").as_bytes());
    crate::text::hex(&digest[..12])
}

pub fn path_in(dir: &Path, account: &str) -> PathBuf {
    dir.join(format!("inventory-{account}.json"))
}

/// `[ICCID, status index, class key, package index, % of data used, expiry (Unix s), order
/// number, place counted from the oldest eSIM, when read (Unix s)]`: owned as read, borrowed
/// from the index as written (a save copies no string of 100 000 entries).
type SavedEntry<S> = (S, u16, S, u32, Option<u8>, Option<i64>, S, u32, i64);

/// The file's content.
#[derive(Serialize, Deserialize)]
struct Saved<S, T, E> {
    version: u32,
    account: S,
    /// Unix seconds.
    saved_at: i64,
    /// The list's total when last read.
    total: u64,
    statuses: T,
    packages: Vec<Package>,
    /// In list order.
    entries: E,
}

/// The file as read.
type Read = Saved<String, Vec<Status>, Vec<SavedEntry<String>>>;

/// The entries as written: serialised one by one from the index, never gathered first.
struct Entries<'a>(&'a Inventory);

impl Serialize for Entries<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let inventory = self.0;
        serializer.collect_seq(inventory.order.iter().map(|&e| {
            let e = e as usize;
            let limits = inventory.limits(e);
            (
                inventory.iccid(e),
                inventory.status[e],
                inventory.class(e).key(),
                inventory.package[e],
                limits.used_pct,
                limits.expires,
                &*inventory.orders[e],
                inventory.from_end[e],
                inventory.read_at[e],
            )
        }))
    }
}

/// A saved inventory as loaded: the entries and when they were read.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub inventory: Inventory,
    pub saved_at: DateTime<Utc>,
    /// The account it belongs to (a session that switched account drops another's).
    pub account: String,
}

/// Why a saved inventory was not used (it is then rebuilt).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("no saved inventory")]
    Missing,
    #[error("the saved inventory could not be read ({0}); it will be read again from the API")]
    Unreadable(String),
    #[error("the saved inventory belongs to another account or version; it will be read again")]
    Foreign,
}

pub fn load(path: &Path, account: &str) -> Result<Loaded, LoadError> {
    let bytes = match crate::private_file::read_regular(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(LoadError::Missing),
        Err(e) => return Err(LoadError::Unreadable(e.to_string())),
    };
    let saved: Read = serde_json::from_slice(&bytes).map_err(|e| LoadError::Unreadable(e.to_string()))?;
    if saved.version != VERSION || saved.account != account {
        return Err(LoadError::Foreign);
    }
    let mut inventory = Inventory::default();
    inventory.saw_total(saved.total);
    for (iccid, status, class, package, used_pct, expires, order, from_end, read_at) in &saved.entries {
        let (Some(status), Some(package)) = (
            saved.statuses.get(*status as usize),
            saved.packages.get(*package as usize),
        ) else {
            return Err(LoadError::Unreadable("an entry points past its tables".to_string()));
        };
        if iccid.is_empty() || iccid.len() > 32 || !iccid.bytes().all(|b| b.is_ascii_digit()) {
            return Err(LoadError::Unreadable("an entry's ICCID is not digits".to_string()));
        }
        if u64::from(*from_end) >= saved.total {
            return Err(LoadError::Unreadable(
                "an entry's place is past the list's end".to_string(),
            ));
        }
        let entry = super::Entry {
            iccid: iccid.clone(),
            status: status.clone(),
            // A class this version does not know is not guessed at.
            class: crate::domain::esim_state::Class::from_key(class)
                .unwrap_or(crate::domain::esim_state::Class::Unknown),
            package: package.clone(),
            limits: crate::domain::attention::Limits {
                used_pct: used_pct.map(|p| p.min(100)),
                expires: *expires,
            },
            order: order.clone(),
        };
        if !inventory.put(entry, *from_end, *read_at) {
            return Err(LoadError::Unreadable("two entries at one place".to_string()));
        }
    }
    let saved_at = DateTime::from_timestamp(saved.saved_at, 0)
        .ok_or_else(|| LoadError::Unreadable("its time is not a time".to_string()))?;
    Ok(Loaded {
        inventory,
        saved_at,
        account: account.to_string(),
    })
}

/// Saves atomically (a new file renamed over the old), private to the user, after taking in
/// what the file holds that `inventory` lacks (another session's pages). Returns the index as
/// saved when it took in something, so that the session can use it too.
pub fn save(
    path: &Path,
    account: &str,
    inventory: &Inventory,
    now: DateTime<Utc>,
) -> std::io::Result<Option<Inventory>> {
    if let Some(dir) = path.parent() {
        create_private_dir(dir)?;
    }
    // One session saves at a time; a lock file beside the index, never the index itself
    // (which is replaced by a rename).
    let lock = crate::private_file::open_or_create(&path.with_extension("lock"))?;
    lock.lock()?;
    // The file as this process last wrote it has nothing new: not read again.
    let merged = match written_by_us(path) {
        true => None,
        false => load(path, account).ok().and_then(|on_disk| {
            let mut merged = inventory.clone();
            merged.absorb(&on_disk.inventory);
            (merged != *inventory).then_some(merged)
        }),
    };
    let saving = merged.as_ref().unwrap_or(inventory);
    let tmp = path.with_extension("json.tmp");
    write_private(&tmp, |out| {
        serde_json::to_writer(out, &saved_form(account, saving, now)).map_err(std::io::Error::other)
    })?;
    std::fs::rename(&tmp, path)?;
    note_written(path);
    Ok(merged)
}

/// The size and time of each index file this process wrote last.
static WRITTEN: std::sync::Mutex<Vec<(PathBuf, u64, std::time::SystemTime)>> = std::sync::Mutex::new(Vec::new());

fn stamp(path: &Path) -> Option<(u64, std::time::SystemTime)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

fn written_by_us(path: &Path) -> bool {
    let written = WRITTEN.lock().unwrap_or_else(|p| p.into_inner());
    let ours = written.iter().find(|(p, ..)| p == path).map(|(_, len, at)| (*len, *at));
    ours.is_some() && ours == stamp(path)
}

fn note_written(path: &Path) {
    let mut written = WRITTEN.lock().unwrap_or_else(|p| p.into_inner());
    written.retain(|(p, ..)| p != path);
    if let Some((len, at)) = stamp(path) {
        written.push((path.to_path_buf(), len, at));
    }
}

fn saved_form<'a>(
    account: &'a str,
    inventory: &'a Inventory,
    now: DateTime<Utc>,
) -> Saved<&'a str, &'a [Status], Entries<'a>> {
    Saved {
        version: VERSION,
        account,
        saved_at: now.timestamp(),
        total: inventory.total,
        statuses: &inventory.statuses,
        packages: inventory.packages.clone(),
        entries: Entries(inventory),
    }
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    crate::private_file::create_dir(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Writes `path` new with what `write` writes: a stale file there (a save cut short) is removed first, and a
/// link there is removed, never followed (the file is created with O_EXCL | O_NOFOLLOW).
fn write_private(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<&std::fs::File>) -> std::io::Result<()>,
) -> std::io::Result<()> {
    use std::io::Write;
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let file = crate::private_file::create_new(path)?;
    let mut out = std::io::BufWriter::new(&file);
    write(&mut out)?;
    out.flush()?;
    drop(out);
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_link_planted_at_the_temporary_file_or_the_index_is_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let path = path_in(&dir.path().join("esimdash"), "abc");
        create_private_dir(path.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&victim, path.with_extension("json.tmp")).unwrap();
        std::os::unix::fs::symlink(&victim, &path).unwrap();
        save(&path, "abc", &Inventory::default(), Utc::now()).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(!std::fs::symlink_metadata(&path).unwrap().file_type().is_symlink());
        assert!(load(&path, "abc").is_ok(), "the index was saved as a file of its own");
    }

    #[test]
    fn saved_privately_loaded_again_and_a_foreign_or_corrupt_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_in(&dir.path().join("esimdash"), "abc");
        let mut inv = Inventory::default();
        let entry = super::super::Entry {
            iccid: "8944100000000000011".into(),
            status: Status::InUse,
            class: crate::domain::esim_state::Class::InUse,
            package: Package {
                name: "France 1GB".into(),
                slug: "fr-1gb".into(),
                code: "ESD-FR".into(),
                location: "FR".into(),
            },
            limits: crate::domain::attention::Limits {
                used_pct: Some(85),
                expires: Some(1_800_000_000),
            },
            order: "B100000010001".into(),
        };
        inv.merge(&super::super::Seen {
            place: Some(super::super::PagePlace {
                page: 2,
                size: 1,
                total: 7,
            }),
            entries: vec![entry],
            read_at: 1_700_000_000,
        });
        save(&path, "abc", &inv, Utc::now()).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600);
            assert_eq!(mode(path.parent().unwrap()), 0o700);
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("LPA:"), "never an activation code");
        let loaded = load(&path, "abc").unwrap();
        assert_eq!(loaded.inventory.find("8944100000000000011"), Some(0));
        assert_eq!(loaded.inventory.total(), Some(7));
        assert_eq!(
            loaded.inventory.row(0).map(|r| (r.place, r.read_at)),
            Some((1, 1_700_000_000))
        );
        assert_eq!(loaded.inventory, inv, "what attention reads comes back too");

        assert!(matches!(load(&path, "other"), Err(LoadError::Foreign)));
        std::fs::write(&path, b"{not json").unwrap();
        assert!(matches!(load(&path, "abc"), Err(LoadError::Unreadable(_))));
        std::fs::write(&path, text.replace("\"8944100000000000011\"", "\"89x\"")).unwrap();
        assert!(matches!(load(&path, "abc"), Err(LoadError::Unreadable(_))));
        assert!(matches!(
            load(&dir.path().join("none.json"), "abc"),
            Err(LoadError::Missing)
        ));
    }
}
