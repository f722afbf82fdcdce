//! The `[gateway]` table of the config file: where the gateway listens, where its store is,
//! and the team's rules. The reseller's key is not in it: the gateway takes it as every
//! esimdash command does (the environment, or a profile's `secret_key_cmd`).

use rust_decimal::Decimal;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

/// The file as written.
#[derive(Debug, Clone, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct File {
    pub listen: Option<SocketAddr>,
    /// The API the gateway speaks to (its base URL, as `base_url` of a profile).
    pub upstream: Option<String>,
    /// A file path (SQLite) or a `postgres://` URL.
    pub store: Option<String>,
    /// USD the whole team may spend in a UTC day.
    pub team_daily_cap: Option<Decimal>,
    /// Whether support agents may buy new eSIMs (they top up either way).
    #[serde(default)]
    pub support_can_buy: bool,
    /// Serve plain http on an address other than loopback (behind a TLS-terminating proxy).
    #[serde(default)]
    pub allow_http: bool,
    /// The upstream key's requests per minute; the gateway's reads stay under it.
    pub rate_limit: Option<u32>,
    /// Where the team's inventory index is kept (default: beside a store file, else the state
    /// directory).
    pub index_dir: Option<PathBuf>,
    /// How long a read's answer serves the same read again, in seconds (default 5; 0: never).
    pub read_fresh_secs: Option<u64>,
    /// Serve the gateway's figures at http://ADDR/metrics.
    pub metrics_listen: Option<SocketAddr>,
    /// Serve them on an address that is not loopback, knowing no token is asked there.
    #[serde(default)]
    pub metrics_public: bool,
    /// Serve https with this certificate chain and key (PEM files).
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
}

impl File {
    /// The table as read; `path` names the file in a mistake's message.
    pub fn of(table: toml::Table, path: Option<&Path>) -> Result<File, String> {
        let shown = path.map_or_else(|| "the config file".to_string(), |p| p.display().to_string());
        table.try_into().map_err(|e| format!("{shown}, [gateway]: {e}"))
    }
}

/// What the gateway runs with.
#[derive(Debug, Clone)]
pub struct Settings {
    pub listen: SocketAddr,
    pub store: String,
    pub team_daily_cap: Option<Decimal>,
    pub support_can_buy: bool,
    pub allow_http: bool,
    /// The team index's folder; `None`: no index (lookups go to the API as asked).
    pub index_dir: Option<PathBuf>,
    /// The reseller's account (`Credentials::account`), which names the index's file.
    pub account: String,
    /// The key's requests per minute, shared among the agents.
    pub rate_limit: u32,
    /// How long an answer serves the same read again.
    pub read_fresh: std::time::Duration,
    /// The certificate chain and key to serve https with; `None`: plain http.
    pub tls: Option<(PathBuf, PathBuf)>,
}

/// How long an answer serves the same read again unless the settings say.
pub const READ_FRESH: std::time::Duration = std::time::Duration::from_secs(5);

pub const DEFAULT_LISTEN: ([u8; 4], u16) = ([127, 0, 0, 1], 8420);

/// The store when none is named: a file in the user's state directory.
pub fn default_store() -> Option<PathBuf> {
    dirs_state().map(|d| d.join("esimdash").join("gateway.db"))
}

/// The team index's folder when the settings name none: beside the store's file, else in the
/// state directory.
pub fn default_index_dir(store: &str) -> Option<PathBuf> {
    if store.contains("://") {
        return dirs_state().map(|d| d.join("esimdash").join("gateway-index"));
    }
    Some(
        Path::new(store)
            .parent()
            .unwrap_or(Path::new("."))
            .join("gateway-index"),
    )
}

/// The state directory, as the audit trail's (`esimdash_api::audit::default_path`).
fn dirs_state() -> Option<PathBuf> {
    dirs::state_dir().or_else(dirs::data_local_dir)
}

impl File {
    /// The certificate and key, both or neither.
    pub fn tls(&self) -> Result<Option<(PathBuf, PathBuf)>, String> {
        match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Ok(Some((cert.clone(), key.clone()))),
            (None, None) => Ok(None),
            _ => Err("[gateway] needs both tls_cert and tls_key to serve https".to_string()),
        }
    }
}

impl Settings {
    /// `https` or `http`, as agents reach it.
    pub fn scheme(&self) -> &'static str {
        if self.tls.is_some() { "https" } else { "http" }
    }

    /// Plain http is served on loopback only, unless the file allows it: agents' tokens and
    /// the payments they ask must not cross a network in the clear (the client's rule).
    pub fn check(&self) -> Result<(), String> {
        if !self.listen.ip().is_loopback() && !self.allow_http && self.tls.is_none() {
            return Err(format!(
                "{} is not a loopback address and the gateway serves plain http: set tls_cert and tls_key under [gateway] to serve https, or put it behind a TLS proxy and set allow_http = true, or listen on 127.0.0.1",
                self.listen
            ));
        }
        Ok(())
    }
}
