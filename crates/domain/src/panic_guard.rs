//! Running code on outside data that might panic inside a dependency (a QR decoder fed a
//! hostile image): the panic becomes an error, and the dashboard's panic hook, which restores
//! the terminal, knows to leave the screen alone.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};

thread_local! {
    static CONTAINED: Cell<bool> = const { Cell::new(false) };
}

/// Whether the current thread is inside `contain` (for panic hooks).
pub fn inside() -> bool {
    CONTAINED.with(Cell::get)
}

/// Runs `f`; a panic in it is returned as an error instead of unwinding further.
pub fn contain<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    let was = CONTAINED.with(|c| c.replace(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    CONTAINED.with(|c| c.set(was));
    result.map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string())
    })
}
