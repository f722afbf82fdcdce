//! The index as esimdash saved it before it was kept in SQLite (`store`): one JSON file an
//! account, read once when the database is first made, so that an upgrade reads nothing
//! again from the API, then removed.

use super::{Inventory, Package};
use esimdash_domain::status::Status;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// The last version written as JSON.
const VERSION: u32 = 5;

/// Where the JSON index of `account` was kept.
pub fn path_in(dir: &Path, account: &str) -> PathBuf {
    dir.join(format!("inventory-{account}.json"))
}

/// `[ICCID, status index, class key, package index, % of data used, expiry (Unix s), order
/// number, place counted from the oldest eSIM, when read (Unix s)]`.
type SavedEntry = (String, u16, String, u32, Option<u8>, Option<i64>, String, u32, i64);

/// The file's content.
#[derive(Deserialize)]
struct Read {
    version: u32,
    account: String,
    /// The list's total when last read.
    total: u64,
    statuses: Vec<Status>,
    packages: Vec<Package>,
    /// In list order.
    entries: Vec<SavedEntry>,
}

/// Why a JSON index was not taken in (the database is then filled from the API).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("no JSON index")]
    Missing,
    #[error("the JSON index could not be read ({0})")]
    Unreadable(String),
    #[error("the JSON index belongs to another account or version")]
    Foreign,
}

pub fn load(path: &Path, account: &str) -> Result<Inventory, LoadError> {
    let bytes = match esimdash_files::read_regular(path) {
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
            class: esimdash_domain::esim_state::Class::from_key(class)
                .unwrap_or(esimdash_domain::esim_state::Class::Unknown),
            package: package.clone(),
            limits: esimdash_domain::attention::Limits {
                used_pct: used_pct.map(|p| p.min(100)),
                expires: *expires,
            },
            order: order.clone(),
        };
        if !inventory.put(entry, *from_end, *read_at) {
            return Err(LoadError::Unreadable("two entries at one place".to_string()));
        }
    }
    Ok(inventory)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_index_is_read_and_a_foreign_or_corrupt_one_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_in(dir.path(), "abc");
        let text = r#"{"version":5,"account":"abc","saved_at":1700000000,"total":7,"statuses":["in_use"],
            "packages":[{"name":"France 1GB","slug":"fr-1gb","code":"ESD-FR","location":"FR"}],
            "entries":[["8944100000000000011",0,"in_use",0,85,1800000000,"B100000010001",5,1700000000]]}"#;
        std::fs::write(&path, text).unwrap();
        let inventory = load(&path, "abc").unwrap();
        let e = inventory.find("8944100000000000011").unwrap();
        assert_eq!(inventory.row(e).map(|r| (r.place, r.read_at)), Some((1, 1_700_000_000)));
        assert_eq!(inventory.total(), Some(7));
        assert!(matches!(load(&path, "other"), Err(LoadError::Foreign)));
        std::fs::write(&path, text.replace("\"8944100000000000011\"", "\"89x\"")).unwrap();
        assert!(matches!(load(&path, "abc"), Err(LoadError::Unreadable(_))));
        std::fs::write(&path, b"{not json").unwrap();
        assert!(matches!(load(&path, "abc"), Err(LoadError::Unreadable(_))));
        assert!(matches!(
            load(&dir.path().join("none.json"), "abc"),
            Err(LoadError::Missing)
        ));
    }
}
