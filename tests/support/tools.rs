//! The programs some tests need beyond Rust: tmux (a real terminal) and ZBar's `zbarimg` (a QR
//! decoder independent of ours, and of the kind phone apps use). On a machine without them the
//! test says what it skipped and why; under `CI` (whose script installs them) it fails instead.

#[path = "skip.rs"]
mod skip;

use skip::skip;
use std::path::PathBuf;
use std::sync::OnceLock;

/// A program some tests need: how to ask whether it runs, and where it comes from.
struct Tool {
    program: &'static str,
    version_flag: &'static str,
    package: &'static str,
    /// Whether it runs, asked once per test binary.
    runs: OnceLock<bool>,
}

static TMUX: Tool = Tool::new("tmux", "-V", "tmux");
static ZBARIMG: Tool = Tool::new("zbarimg", "--version", "zbar-tools");

impl Tool {
    const fn new(program: &'static str, version_flag: &'static str, package: &'static str) -> Self {
        Self {
            program,
            version_flag,
            package,
            runs: OnceLock::new(),
        }
    }

    /// Whether it runs here. Missing under `CI`: a failure naming the Debian package; elsewhere
    /// `false`, after saying on stderr what `test` skips.
    fn available(&self, test: &str) -> bool {
        let Tool { program, package, .. } = self;
        let runs = *self.runs.get_or_init(|| {
            std::process::Command::new(program)
                .arg(self.version_flag)
                .output()
                .is_ok()
        });
        if !runs {
            skip(
                test,
                &format!("{program} is not installed (Debian's {package})"),
                &format!("have {program} (Debian's {package}); .ci/run installs it"),
            );
        }
        runs
    }
}

/// Whether the terminal tests can run: tmux is there. Call first with the test's name.
#[allow(dead_code)]
pub fn tmux_available(test: &str) -> bool {
    TMUX.available(test)
}

/// Whether zbarimg can run here, for the ZBar cross-check of our QR codes.
pub fn zbar_available() -> bool {
    ZBARIMG.available("the ZBar cross-check of this QR code")
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

/// The property tests' settings: `PROPTEST_CASES` cases, else 10 000 under `CI` and 300 on a
/// developer's machine (the same properties, a quicker run); no failure files left behind.
#[allow(dead_code)]
pub fn property_config() -> proptest::test_runner::Config {
    let default = if std::env::var_os("CI").is_some() { 10_000 } else { 300 };
    proptest::test_runner::Config {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(default),
        failure_persistence: None,
        ..proptest::test_runner::Config::default()
    }
}

/// What `esimdash sandbox` printed up to its "stop:" line (its credentials and base URL).
#[allow(dead_code)]
pub fn sandbox_banner(stdout: &mut impl std::io::Read) -> String {
    let mut banner = String::new();
    let mut buf = [0u8; 4096];
    while !banner.contains("stop:") {
        let n = stdout.read(&mut buf).unwrap();
        assert!(n > 0, "the sandbox ended early: {banner}");
        banner.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    banner
}
