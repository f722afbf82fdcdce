//! One payment at a time per account, across every esimdash process of this user: a lock file
//! per account (its access code, whatever address it is reached by) beside the audit trail, held with `flock` while a
//! payment is checked, sent and settled. The kernel releases it when its holder dies, however
//! it dies, so a killed process never leaves the account locked.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How often a waiting process tries the lock again.
const RETRY: Duration = Duration::from_millis(50);

/// Held while it lives.
#[derive(Debug)]
pub struct AccountLock {
    _file: File,
}

/// `locks/<account>.lock` in the trail's directory.
pub fn path_for(trail: &Path, account: &str) -> PathBuf {
    let name = crate::audit::account_id(account);
    let dir = trail.parent().unwrap_or_else(|| Path::new("."));
    dir.join("locks").join(format!("{name}.lock"))
}

impl AccountLock {
    /// The lock if no other process holds it now.
    pub fn try_take(path: &Path) -> std::io::Result<Option<Self>> {
        Ok(esimdash_files::hold_if_free(path)?.map(|file| Self { _file: file }))
    }

    /// Waits for the lock; `waiting` is called once if another process holds it.
    pub async fn take(path: &Path, waiting: impl FnOnce()) -> std::io::Result<Self> {
        let mut waiting = Some(waiting);
        loop {
            if let Some(lock) = Self::try_take(path)? {
                return Ok(lock);
            }
            if let Some(say) = waiting.take() {
                say();
            }
            tokio::time::sleep(RETRY).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_second_holder_waits_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let trail = dir.path().join("esimdash/audit.jsonl");
        let path = path_for(&trail, "ak_1");
        assert_ne!(path, path_for(&trail, "ak_2"));
        let first = AccountLock::try_take(&path).unwrap().expect("free");
        assert!(AccountLock::try_take(&path).unwrap().is_none(), "held");
        let (tx, rx) = tokio::sync::oneshot::channel();
        let waiter = tokio::spawn({
            let path = path.clone();
            async move {
                AccountLock::take(&path, move || {
                    let _ = tx.send(());
                })
                .await
            }
        });
        rx.await.expect("told that it waits");
        drop(first);
        let second = tokio::time::timeout(Duration::from_secs(5), waiter).await;
        assert!(matches!(second, Ok(Ok(Ok(_)))), "taken once free");
    }
}
