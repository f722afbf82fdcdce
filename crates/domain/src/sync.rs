//! Locks shared between tasks and threads.

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, also after a holder panicked: every value kept under our locks is replaced or
/// updated in one step, so what a panicking holder left is still whole, and a panic in one
/// task must not take the dashboard or a command down with it.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
