//! A test that needs what this machine lacks (a program, a server) says what it skipped and
//! why, and passes; under `CI`, whose script installs all of it, it fails instead.

use std::io::Write;

/// Skips `test` for `why`; under `CI`, fails with what CI must provide (`ci_must`).
pub fn skip(test: &str, why: &str, ci_must: &str) {
    assert!(std::env::var_os("CI").is_none(), "CI must {ci_must}");
    // Straight to stderr, past the test harness's capture, so a passing run still says it.
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}
