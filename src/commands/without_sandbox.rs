//! A build without the sandbox (`cargo build -p esimdash --no-default-features`): a client that carries no
//! server stack. `--demo` says why it cannot run instead of failing to resolve.

/// No demo sandbox can exist in this build.
pub enum Demo {}

impl Demo {
    pub fn base_url(&self) -> String {
        match *self {}
    }
}

/// Why there is no demo: the build left the sandbox out.
pub async fn start_demo() -> Result<Demo, String> {
    Err(
        "this esimdash was built without the sandbox (cargo feature `sandbox`), so --demo cannot run; \
         point it at a server with --base-url, or build it with the default features"
            .to_string(),
    )
}
