//! Settings: defaults < config file < environment < flags. The config file is TOML with named
//! profiles; a secret comes from the environment, a flag, the file (which must then be private),
//! or `secret_key_cmd`, a command whose stdout is the secret.

use esimdash_api::{AuthMode, BaseUrl, BaseUrlError, ClientOptions, Credentials};
use esimdash_domain::attention::AttentionRule;
use esimdash_domain::money::parse_decimal;
use rust_decimal::Decimal;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod args;
mod colour;

pub use args::ConnectionArgs;
pub use colour::{Colour, ThemeName};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// The profile used when none is named.
    pub default_profile: Option<String>,
    /// auto (default), system, osc52 or off.
    pub clipboard: Option<crate::clipboard::Strategy>,
    /// Whether the dashboard takes the mouse (default on); off lets the terminal select text.
    pub mouse: Option<bool>,
    /// Whether the dashboard keeps an inventory index between sessions (default on).
    pub inventory_cache: Option<bool>,
    /// Where the dashboard writes QR images and CSV exports.
    pub export_dir: Option<PathBuf>,
    /// The header warns below this wallet balance, in USD: a string such as "20.00".
    low_balance: Option<AmountText>,
    /// The thresholds of "needs attention".
    attention: Option<AttentionConfig>,
    /// A status the index read longer ago than this many hours shows its age (default 24).
    status_stale_hours: Option<u32>,
    /// The share of the key's budget a keeper takes, in percent (default 25).
    keeper_share_percent: Option<u8>,
    /// Where `watch` posts its changes unless `--webhook` says.
    webhook_url: Option<String>,
    /// Whether `esimdash mcp` offers an assistant its write tools, which only propose (default
    /// off: read tools only).
    assistant_writes: Option<bool>,
    /// The dashboard's theme: dark (default), light or high-contrast.
    theme: Option<ThemeName>,
    /// The team's own commands, on an eSIM, an order or a plan (`[[commands]]`).
    #[serde(default)]
    commands: Vec<crate::team_commands::CommandEntry>,
    /// Saved views (`[[views]]`), each read with its line: a wrong one is said, not fatal.
    #[serde(default)]
    views: Vec<toml::Spanned<toml::Table>>,
    #[serde(skip)]
    view_entries: Vec<(usize, toml::Table)>,
    /// Key rebindings: `action = ["key", …]` (or one key as a string).
    #[serde(default)]
    keys: BTreeMap<String, toml::Spanned<KeyList>>,
    #[serde(default)]
    pub profiles: BTreeMap<String, ProfileConfig>,
    /// `[gateway]`: the team gateway's settings (`esimdash gateway`), read by it alone.
    pub gateway: Option<toml::Table>,
    /// `keys` with the line each is on, for errors that name it.
    #[serde(skip)]
    pub rebindings: Vec<Rebinding>,
}

/// A `[keys]` entry of the config file: an action's name and its new keys, as written, with the
/// line it is on. The dashboard checks them against its keymap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rebinding {
    pub action: String,
    pub keys: Vec<String>,
    pub line: usize,
}

/// The `[keys]` table of the config file in use, and that file, to name it in an error.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyTable {
    pub path: PathBuf,
    pub rebindings: Vec<Rebinding>,
}

impl KeyTable {
    /// The error for a mistake at `line` of the table, found by whoever reads the keys.
    pub fn refused(&self, line: usize, message: String) -> ConfigError {
        ConfigError::Keys {
            path: self.path.clone(),
            line,
            message,
        }
    }
}

/// An amount as the config file gives it: a string (exact) or a whole number.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum AmountText {
    Text(String),
    Whole(i64),
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct AttentionConfig {
    /// Percent of data used from which an eSIM needs attention.
    used_percent: Option<u8>,
    /// Days before expiry from which an eSIM needs attention.
    days: Option<u32>,
    /// How old the kept picture may be for a check to answer from it.
    max_age_minutes: Option<u32>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
enum KeyList {
    One(String),
    Many(Vec<String>),
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProfileConfig {
    pub base_url: Option<String>,
    pub access_code: Option<String>,
    pub secret_key: Option<String>,
    pub secret_key_cmd: Option<String>,
    /// How long `secret_key_cmd` may take, in seconds (default 10): a command that never ends
    /// must not hold esimdash with it. A prompt for a passphrase needs longer.
    pub secret_key_cmd_timeout_secs: Option<u64>,
    pub auth: Option<AuthMode>,
    pub rate_limit: Option<u32>,
    /// The share of `rate_limit`, in percent, the inventory's background read may take.
    pub index_share_percent: Option<u8>,
    /// A PEM file of roots trusted besides the system's.
    pub ca_file: Option<PathBuf>,
    pub timeout_secs: Option<u64>,
    /// Refuse every write in this profile (a support seat).
    pub read_only: Option<bool>,
    /// The dashboard's header in this colour ("red" for a live account): a name or "#rrggbb".
    pub color: Option<String>,
    /// Allow a plain http:// base URL for a host that is not this machine.
    pub allow_http: Option<bool>,
}

#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read the config file {path}: {message}")]
    Read { path: PathBuf, message: String },
    #[error("the config file {path} is not valid: {message}")]
    Parse { path: PathBuf, message: String },
    #[error(
        "the config file {path} holds a secret key but others can read it (mode {mode:o}); run `chmod 600 {path}`, or move the secret to secret_key_cmd or ESIMDASH_SECRET_KEY"
    )]
    Insecure { path: PathBuf, mode: u32 },
    #[error("no profile {name:?} in {path} (profiles there: {available})")]
    UnknownProfile {
        name: String,
        path: String,
        available: String,
    },
    #[error(
        "the config file {path} has several profiles ({available}) and none is chosen: set default_profile in it, or choose one with --profile or ESIMDASH_PROFILE"
    )]
    NoProfileChosen { path: String, available: String },
    #[error("{0}")]
    BaseUrl(#[from] BaseUrlError),
    #[error(
        "the base URL {url} is plain http to another machine: the secret key and every request would travel unencrypted. Use https://, or if you must, allow it with --allow-http or allow_http = true in the profile"
    )]
    Cleartext { url: String },
    #[error("the config file {path}, [keys] line {line}: {message}")]
    Keys {
        path: PathBuf,
        line: usize,
        message: String,
    },
    #[error("the config file {path}: {message}")]
    Value { path: PathBuf, message: String },
    #[error("ESIMDASH_CLIPBOARD: {0}")]
    Clipboard(String),
    /// A setting given on the command line or in the environment: the config file is not to
    /// blame.
    #[error("{given}: {message}")]
    Given { given: &'static str, message: String },
    #[error("{name}={value:?}: {expected}")]
    Env {
        name: &'static str,
        value: String,
        expected: &'static str,
    },
    #[error("secret_key_cmd of profile {profile:?} failed: {detail}")]
    SecretCommand { profile: String, detail: String },
    #[error("the {what} is empty; set it ({sources}) to the one your provider's reseller portal shows")]
    Empty { what: &'static str, sources: &'static str },
    #[error(
        "no API {missing} configured. Set ESIMDASH_BASE_URL, ESIMDASH_ACCESS_CODE and ESIMDASH_SECRET_KEY, or add a profile to {path} (see docs/configuration.md), or try `esimdash --demo`"
    )]
    Missing { missing: String, path: String },
}

/// Everything needed to build a client.
#[derive(Debug, Clone)]
pub struct Settings {
    pub base_url: BaseUrl,
    pub credentials: Credentials,
    pub options: ClientOptions,
    pub profile: String,
    /// The profile's `color` for the dashboard's header.
    pub color: Option<Colour>,
}

/// `esimdash/config.toml` in the XDG config directory.
pub fn default_config_path() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("esimdash").join("config.toml"))
}

/// The largest config file read.
const MOST_CONFIG_BYTES: u64 = 1024 * 1024;

/// Reads a config file; a missing file is `None` unless it was asked for by name.
pub fn load_file(path: &Path, must_exist: bool) -> Result<Option<FileConfig>, ConfigError> {
    let failed = |message: String| ConfigError::Read {
        path: path.to_path_buf(),
        message,
    };
    // A plain file of a bounded size: a FIFO is refused at once, never waited on, and a huge
    // file before the TOML reader asks for memory in proportion to it.
    let bytes = match esimdash_files::read_regular_at_most(path, MOST_CONFIG_BYTES) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => {
            return Err(failed(format!(
                "it is larger than {} KiB; a configuration is a few lines",
                MOST_CONFIG_BYTES / 1024
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !must_exist => return Ok(None),
        Err(e) => return Err(failed(e.to_string())),
    };
    let text = String::from_utf8(bytes).map_err(|_| failed("it is not UTF-8 text".to_string()))?;
    let mut config: FileConfig = toml::from_str(&text).map_err(|e| ConfigError::Parse {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let line_at = |offset: usize| text.get(..offset).map_or(0, |t| t.matches('\n').count() + 1);
    config.rebindings = config
        .keys
        .iter()
        .map(|(action, keys)| Rebinding {
            action: action.clone(),
            keys: match keys.get_ref() {
                KeyList::One(k) => vec![k.clone()],
                KeyList::Many(ks) => ks.clone(),
            },
            line: line_at(keys.span().start),
        })
        .collect();
    config.view_entries = config
        .views
        .iter()
        .map(|v| (line_at(v.span().start), v.get_ref().clone()))
        .collect();
    if config.profiles.values().any(|p| p.secret_key.is_some()) {
        check_private(path)?;
    }
    Ok(Some(config))
}

#[cfg(unix)]
fn check_private(path: &Path) -> Result<(), ConfigError> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).map_err(|e| ConfigError::Read {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(ConfigError::Insecure {
            path: path.to_path_buf(),
            mode,
        });
    }
    Ok(())
}

#[cfg(not(unix))]
fn check_private(_path: &Path) -> Result<(), ConfigError> {
    Ok(())
}

/// How long `secret_key_cmd` may take unless the profile says (`secret_key_cmd_timeout_secs`).
const SECRET_COMMAND_SECS: u64 = 10;

/// Runs `secret_key_cmd` with the user's shell conventions; its trimmed stdout is the secret.
/// Its stderr is captured, never drawn over the dashboard (a profile switch runs it there): a
/// failure's message carries its last lines. Password prompts of `pass`/`gpg` use the terminal
/// itself and still work.
/// What `pipe` gives, read to its end off this thread, so that a command that never ends (or
/// leaves a child holding its output open) cannot hold esimdash past a limit.
fn drained<R: std::io::Read + Send + 'static>(pipe: Option<R>) -> std::sync::mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        let _ = tx.send(bytes);
    });
    rx
}

fn run_secret_command(profile: &str, command: &str, limit: Duration) -> Result<String, ConfigError> {
    let fail = |detail: String| ConfigError::SecretCommand {
        profile: profile.to_string(),
        detail,
    };
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("could not run it: {e}")))?;
    let (stdout, stderr) = (drained(child.stdout.take()), drained(child.stderr.take()));
    let started = std::time::Instant::now();
    let too_long = || {
        fail(format!(
            "it did not finish within {} s (secret_key_cmd_timeout_secs; a passphrase prompt needs longer)",
            limit.as_secs()
        ))
    };
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if started.elapsed() >= limit => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(too_long());
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => return Err(fail(format!("could not wait for it: {e}"))),
        }
    };
    let left = limit.saturating_sub(started.elapsed()).max(Duration::from_millis(100));
    let output = std::process::Output {
        status,
        stdout: stdout.recv_timeout(left).map_err(|_| too_long())?,
        stderr: stderr.recv_timeout(Duration::from_millis(100)).unwrap_or_default(),
    };
    let said = stderr_excerpt(&output.stderr);
    if !output.status.success() {
        let said = if said.is_empty() {
            String::new()
        } else {
            format!(": {said}")
        };
        return Err(fail(format!("it exited with {}{said}", output.status)));
    }
    if !said.is_empty() {
        tracing::info!("secret_key_cmd of profile {profile} said: {said}");
    }
    let secret = String::from_utf8(output.stdout).map_err(|_| fail("its output is not UTF-8".to_string()))?;
    let secret = secret.trim_end_matches(['\n', '\r']).to_string();
    if secret.is_empty() {
        return Err(fail("it printed nothing".to_string()));
    }
    Ok(secret)
}

/// The last lines a command wrote to stderr, made safe to show, at most 300 characters.
fn stderr_excerpt(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let joined = lines.join(" · ");
    let start = joined.char_indices().rev().nth(299).map_or(0, |(i, _)| i);
    esimdash_domain::text::sanitize(&joined[start..]).into_owned()
}

/// The config file named by `--config`/`ESIMDASH_CONFIG`, or the default one if it exists.
fn load(args: &ConnectionArgs) -> Result<(FileConfig, Option<PathBuf>), ConfigError> {
    let path = args.config.clone().or_else(default_config_path);
    let file = match &path {
        Some(p) => load_file(p, args.config.is_some())?,
        None => None,
    };
    Ok((file.unwrap_or_default(), path))
}

/// The config file's `[gateway]` table, and the file's path, for `esimdash gateway`.
pub fn gateway_section(args: &ConnectionArgs) -> Result<(Option<toml::Table>, Option<PathBuf>), ConfigError> {
    let (file, path) = load(args)?;
    Ok((file.gateway, path))
}

/// What the commands and the dashboard both take from the config file.
#[derive(Debug, Clone)]
pub struct Preferences {
    pub attention: AttentionRule,
    /// The header warns below this balance.
    pub low_balance: Decimal,
    /// `export_dir`, else the XDG download directory, else the current one.
    pub export_dir: PathBuf,
    /// `inventory_cache`: the inventory index is kept between sessions (default on).
    pub inventory_cache: bool,
    /// A status read longer ago than this shows its age.
    pub stale_after: chrono::Duration,
    /// How old the kept picture may be for a check or a scrape to answer from it.
    pub picture_max_age: chrono::Duration,
    /// The share of the key's budget a keeper takes (0 to 1).
    pub keeper_share: f64,
    /// Where `watch` posts its changes (`webhook_url`).
    pub webhook_url: Option<String>,
    /// `esimdash mcp` lists its proposing tools (`assistant_writes`).
    pub assistant_writes: bool,
    /// The dashboard's theme (`theme`).
    pub theme: ThemeName,
    /// The team's own commands (`[[commands]]`), checked.
    pub commands: Vec<crate::team_commands::TeamCommand>,
    /// The saved views (`[[views]]`), and what is wrong with the entries that are not views.
    pub views: Vec<crate::views::SavedView>,
    pub view_problems: Vec<String>,
    /// The config file, where a view saved from the dashboard is written.
    pub config_path: Option<PathBuf>,
}

/// How old the kept picture may be unless configured: an hour, so that a keeper at its
/// default share has swept 100 000 eSIMs (about 35 minutes) with room to spare.
pub const DEFAULT_PICTURE_MAX_AGE_MINUTES: u32 = 60;

/// The balance under which the header warns, unless the config file says otherwise.
pub const DEFAULT_LOW_BALANCE: Decimal = Decimal::from_parts(2000, 0, 0, false, 2);

impl Default for Preferences {
    fn default() -> Self {
        Self {
            attention: AttentionRule::default(),
            low_balance: DEFAULT_LOW_BALANCE,
            export_dir: crate::export::export_dir(None),
            inventory_cache: true,
            stale_after: chrono::Duration::hours(24),
            picture_max_age: chrono::Duration::minutes(i64::from(DEFAULT_PICTURE_MAX_AGE_MINUTES)),
            keeper_share: crate::keeper::DEFAULT_SHARE,
            webhook_url: None,
            assistant_writes: false,
            theme: ThemeName::Dark,
            commands: Vec::new(),
            views: Vec::new(),
            view_problems: Vec::new(),
            config_path: None,
        }
    }
}

impl FileConfig {
    /// The preferences this file sets, over the defaults; a value out of range names itself.
    pub fn preferences(&self, path: &Path) -> Result<Preferences, ConfigError> {
        let bad = |message: String| ConfigError::Value {
            path: path.to_path_buf(),
            message,
        };
        let mut prefs = Preferences {
            export_dir: crate::export::export_dir(self.export_dir.as_deref()),
            inventory_cache: self.inventory_cache.unwrap_or(true),
            webhook_url: self.webhook_url.clone(),
            assistant_writes: self.assistant_writes.unwrap_or(false),
            theme: self.theme.unwrap_or_default(),
            commands: self
                .commands
                .iter()
                .cloned()
                .map(crate::team_commands::CommandEntry::checked)
                .collect::<Result<_, _>>()
                .map_err(bad)?,
            config_path: Some(path.to_path_buf()).filter(|p| !p.as_os_str().is_empty()),
            ..Preferences::default()
        };
        (prefs.views, prefs.view_problems) = crate::views::read(&self.view_entries, &path.display().to_string());
        if let Some(hours) = self.status_stale_hours {
            prefs.stale_after = chrono::Duration::hours(i64::from(hours.max(1)));
        }
        if let Some(amount) = &self.low_balance {
            prefs.low_balance = match amount {
                AmountText::Text(t) => parse_decimal(t).map_err(|e| bad(format!("low_balance {t:?}: {e}")))?,
                AmountText::Whole(n) => Decimal::from(*n),
            };
        }
        if let Some(a) = &self.attention {
            if let Some(p) = a.used_percent {
                if !(1..=100).contains(&p) {
                    return Err(bad(format!("[attention] used_percent = {p}: it must be 1 to 100")));
                }
                prefs.attention.used_pct = p;
            }
            if let Some(days) = a.days {
                prefs.attention.days = days;
            }
            if let Some(minutes) = a.max_age_minutes {
                prefs.picture_max_age = chrono::Duration::minutes(i64::from(minutes));
            }
        }
        if let Some(percent) = self.keeper_share_percent {
            if !(1..=100).contains(&percent) {
                return Err(bad(format!("keeper_share_percent = {percent}: it must be 1 to 100")));
            }
            prefs.keeper_share = f64::from(percent) / 100.0;
        }
        Ok(prefs)
    }
}

/// Appends `view` to the config file at `path` (made if missing), as a `[[views]]` entry: the
/// file's other lines stay as written.
pub fn save_view(path: &Path, view: &crate::views::SavedView) -> std::io::Result<()> {
    // Read as the config is read: a plain file, within the config's bound, UTF-8.
    let before = match esimdash_files::read_regular_at_most(path, MOST_CONFIG_BYTES) {
        Ok(Some(bytes)) => String::from_utf8(bytes).map_err(|_| std::io::Error::other("it is not UTF-8 text"))?,
        Ok(None) => return Err(std::io::Error::other("it is larger than a config file may be")),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        esimdash_files::create_dir(dir)?;
    }
    let after = format!(
        "{before}{}{}",
        if before.ends_with('\n') || before.is_empty() {
            ""
        } else {
            "\n"
        },
        crate::views::entry(view)
    );
    esimdash_files::write_whole(path, |out| out.write_all(after.as_bytes()))
}

/// The preferences of the config file in use (defaults without one).
pub fn preferences(args: &ConnectionArgs) -> Result<Preferences, ConfigError> {
    let (file, path) = load(args)?;
    file.preferences(&path.unwrap_or_default())
}

/// What the dashboard takes from the config file besides the connection.
#[derive(Debug, Clone)]
pub struct DashboardSettings {
    /// `ESIMDASH_CLIPBOARD`, else the file's `clipboard`, else auto.
    pub clipboard: crate::clipboard::Strategy,
    /// The file's `[keys]`, for the dashboard to apply over its default keys.
    pub keys: KeyTable,
    /// The file's `mouse`, default on.
    pub mouse: bool,
    /// What the one-shot commands take from the file too.
    pub preferences: Preferences,
    /// The names of the file's profiles, for the profile picker.
    pub profiles: Vec<String>,
}

pub fn dashboard_settings(args: &ConnectionArgs) -> Result<DashboardSettings, ConfigError> {
    let (file, path) = load(args)?;
    let clipboard = match std::env::var("ESIMDASH_CLIPBOARD") {
        Ok(value) => value.parse().map_err(ConfigError::Clipboard)?,
        Err(_) => file.clipboard.unwrap_or_default(),
    };
    let path = path.unwrap_or_default();
    let preferences = file.preferences(&path)?;
    Ok(DashboardSettings {
        clipboard,
        keys: KeyTable {
            path,
            rebindings: file.rebindings,
        },
        mouse: file.mouse.unwrap_or(true),
        preferences,
        profiles: file.profiles.keys().cloned().collect(),
    })
}

/// Merges flags and environment (already merged by clap) over the config file.
pub fn resolve(args: &ConnectionArgs) -> Result<Settings, ConfigError> {
    let (file, path) = load(args)?;
    let shown_path = path
        .as_ref()
        .map_or_else(|| "the config file".to_string(), |p| p.display().to_string());
    let (name, profile) = chosen_profile(args, &file, &shown_path)?;
    let missing = |what: &str| ConfigError::Missing {
        missing: what.to_string(),
        path: shown_path.clone(),
    };
    // Every missing piece at once: a set-up is not mended one run at a time.
    let absent = absent_pieces(args, &profile);
    if !absent.is_empty() {
        return Err(missing(&esimdash_domain::text::list_and(&absent)));
    }
    let base_url = args
        .base_url
        .clone()
        .or(profile.base_url.clone())
        .ok_or_else(|| missing("base URL"))?;
    let base_url = BaseUrl::parse(&base_url)?;
    if base_url.is_cleartext() && !base_url.is_loopback() && !(args.allow_http || profile.allow_http == Some(true)) {
        return Err(ConfigError::Cleartext {
            url: base_url.to_string(),
        });
    }
    let credentials = credentials(args, &name, &profile, missing)?;
    let options = client_options(args, &name, &profile, path.as_deref())?;
    let color = header_colour(&name, &profile, path.as_deref())?;
    Ok(Settings {
        base_url,
        credentials,
        options,
        profile: name,
        color,
    })
}

/// The profile named by `--profile`, else the file's `default_profile`, else the file's only
/// profile, else `default`. A profile named in either place must exist, and so must a choice
/// among several; `default` may be missing when the file has none (flags and environment
/// alone then).
fn chosen_profile(
    args: &ConnectionArgs,
    file: &FileConfig,
    shown_path: &str,
) -> Result<(String, ProfileConfig), ConfigError> {
    let only = (file.profiles.len() == 1)
        .then(|| file.profiles.keys().next().cloned())
        .flatten();
    let named = args.profile.is_some() || file.default_profile.is_some();
    let name = args
        .profile
        .clone()
        .or(file.default_profile.clone())
        .or(only)
        .unwrap_or_else(|| "default".to_string());
    let available = || match file.profiles.keys().cloned().collect::<Vec<_>>().join(", ") {
        none if none.is_empty() => "none".to_string(),
        names => names,
    };
    let profile = match file.profiles.get(&name) {
        Some(p) => p.clone(),
        None if named => {
            return Err(ConfigError::UnknownProfile {
                name,
                path: shown_path.to_string(),
                available: available(),
            });
        }
        // "no profile default" would name one the user never asked for.
        None if file.profiles.len() > 1 => {
            return Err(ConfigError::NoProfileChosen {
                path: shown_path.to_string(),
                available: available(),
            });
        }
        None => ProfileConfig::default(),
    };
    Ok((name, profile))
}

/// What a session needs and neither flags, environment nor profile give.
fn absent_pieces(args: &ConnectionArgs, profile: &ProfileConfig) -> Vec<&'static str> {
    let mode = args.auth.or(profile.auth).unwrap_or_default();
    let mut absent = Vec::new();
    if args.base_url.is_none() && profile.base_url.is_none() {
        absent.push("base URL");
    }
    if mode == AuthMode::Pair && args.access_code.is_none() && profile.access_code.is_none() {
        absent.push("access code");
    }
    if args.secret_key.is_none() && profile.secret_key.is_none() && profile.secret_key_cmd.is_none() {
        absent.push("secret key");
    }
    absent
}

/// The key pair (or legacy secret) of the session; the secret may come from `secret_key_cmd`.
fn credentials(
    args: &ConnectionArgs,
    name: &str,
    profile: &ProfileConfig,
    missing: impl Fn(&str) -> ConfigError,
) -> Result<Credentials, ConfigError> {
    let mode = args.auth.or(profile.auth).unwrap_or_default();
    let secret = match (&args.secret_key, &profile.secret_key, &profile.secret_key_cmd) {
        (Some(s), _, _) | (None, Some(s), _) => s.clone(),
        (None, None, Some(cmd)) => {
            let limit = profile
                .secret_key_cmd_timeout_secs
                .unwrap_or(SECRET_COMMAND_SECS)
                .max(1);
            run_secret_command(name, cmd, Duration::from_secs(limit))?
        }
        (None, None, None) => return Err(missing("secret key")),
    };
    // Set but empty (`ESIMDASH_SECRET_KEY=` in a script, or only spaces) is a mistake in the
    // set-up, so it is refused with the configuration's errors (exit 2), not left to fail the
    // first request.
    if esimdash_api::trimmed_credential(&secret).is_empty() {
        return Err(ConfigError::Empty {
            what: "secret key",
            sources: "ESIMDASH_SECRET_KEY, --secret-key, or the profile's secret_key or secret_key_cmd",
        });
    }
    Ok(match mode {
        AuthMode::Pair => {
            let code = args
                .access_code
                .clone()
                .or(profile.access_code.clone())
                .ok_or_else(|| missing("access code"))?;
            if esimdash_api::trimmed_credential(&code).is_empty() {
                return Err(ConfigError::Empty {
                    what: "access code",
                    sources: "ESIMDASH_ACCESS_CODE, --access-code, or the profile's access_code",
                });
            }
            Credentials::pair(&code, &secret)
        }
        legacy => Credentials::legacy(legacy, &secret),
    })
}

/// How the client of profile `name` behaves: read-only, audit trail, rate limit and timeout.
fn client_options(
    args: &ConnectionArgs,
    name: &str,
    profile: &ProfileConfig,
    path: Option<&Path>,
) -> Result<ClientOptions, ConfigError> {
    let mut options = ClientOptions {
        read_only: read_only_reason(args, Some((name, profile)))?,
        audit: audit_trail(name),
        ..ClientOptions::default()
    };
    if let Some(limit) = env_number("ESIMDASH_RATE_LIMIT").or(profile.rate_limit.map(u64::from)) {
        options.rate_limit = u32::try_from(limit).unwrap_or(u32::MAX).max(1);
    }
    if let Some(secs) = args.timeout.or(profile.timeout_secs) {
        options.request_timeout = Duration::from_secs(secs.max(1));
    }
    if let Some(percent) = profile.index_share_percent {
        if !(1..=100).contains(&percent) {
            return Err(ConfigError::Value {
                path: path.map(Path::to_path_buf).unwrap_or_default(),
                message: format!("[profiles.{name}] index_share_percent = {percent}: it must be 1 to 100"),
            });
        }
        options.background_share = f64::from(percent) / 100.0;
    }
    if let Some(file) = args.ca_file.as_ref().or(profile.ca_file.as_ref()) {
        options.extra_roots = esimdash_api::read_pem_certificates(file).map_err(|message| match args.ca_file {
            Some(_) => ConfigError::Given {
                given: "--ca-file (or ESIMDASH_CA_FILE)",
                message,
            },
            None => ConfigError::Value {
                path: path.map(Path::to_path_buf).unwrap_or_default(),
                message: format!("[profiles.{name}] ca_file: {message}"),
            },
        })?;
    }
    Ok(options)
}

/// The profile's `color`, checked.
fn header_colour(name: &str, profile: &ProfileConfig, path: Option<&Path>) -> Result<Option<Colour>, ConfigError> {
    let Some(text) = &profile.color else {
        return Ok(None);
    };
    let colour = text.parse::<Colour>().map_err(|_| ConfigError::Value {
        path: path.map(Path::to_path_buf).unwrap_or_default(),
        message: format!("[profiles.{name}] color = {text:?}: a colour name (red, yellow, …) or \"#rrggbb\""),
    })?;
    Ok(Some(colour))
}

/// Why this session is read-only, if it is: `--read-only`, `ESIMDASH_READ_ONLY` or the
/// profile's `read_only`. Any of them turns it on and none turns off another's, so a seat set
/// up read-only in the config file stays so whatever the environment says.
pub fn read_only_reason(
    args: &ConnectionArgs,
    profile: Option<(&str, &ProfileConfig)>,
) -> Result<Option<String>, ConfigError> {
    if args.read_only {
        return Ok(Some("--read-only".to_string()));
    }
    if let Ok(value) = std::env::var("ESIMDASH_READ_ONLY") {
        match value.trim().to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => return Ok(Some(format!("ESIMDASH_READ_ONLY={}", value.trim()))),
            "" | "0" | "false" | "no" | "off" => {}
            _ => {
                return Err(ConfigError::Env {
                    name: "ESIMDASH_READ_ONLY",
                    value,
                    expected: "expected 1 or 0 (true/false, yes/no, on/off)",
                });
            }
        }
    }
    Ok(profile
        .filter(|(_, p)| p.read_only == Some(true))
        .map(|(name, _)| format!("read_only = true in profile {name:?}")))
}

/// The audit trail of a session of `profile`; `None` (and a warning in the log) where the
/// system has no state or data directory to keep it in.
pub fn audit_trail(profile: &str) -> Option<esimdash_api::audit::Trail> {
    let path = esimdash_api::audit::default_path();
    if path.is_none() {
        tracing::warn!("no state directory (is HOME set?): the audit trail is not kept");
    }
    path.map(|path| esimdash_api::audit::Trail {
        path,
        profile: profile.to_string(),
    })
}

fn env_number(name: &str) -> Option<u64> {
    std::env::var(name).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod example {
    use super::*;

    /// `assets/config.example.toml` is read by the real loader: every key it shows exists (the
    /// file refuses unknown ones), its values are valid, and its profiles resolve.
    #[test]
    fn the_example_config_loads_and_sets_what_it_says() {
        let path = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/config.example.toml"));
        let file = load_file(path, true).expect("the example loads").expect("it exists");
        let prefs = file.preferences(path).expect("its values are valid");
        assert_eq!(prefs.attention, AttentionRule { used_pct: 80, days: 3 });
        assert_eq!(prefs.low_balance, DEFAULT_LOW_BALANCE);
        assert_eq!(prefs.export_dir, PathBuf::from("/tmp/esimdash-exports"));
        assert_eq!(file.default_profile.as_deref(), Some("sandbox"));
        assert_eq!(file.inventory_cache, Some(true));
        assert_eq!(file.mouse, Some(true));
        let args = ConnectionArgs {
            config: Some(path.to_path_buf()),
            ..ConnectionArgs::default()
        };
        let settings = resolve(&args).expect("the sandbox profile resolves");
        assert_eq!(settings.profile, "sandbox");
        assert_eq!(settings.options.rate_limit, 120);
        assert_eq!(settings.options.background_share, 0.5);
        assert_eq!(prefs.stale_after, chrono::Duration::hours(24));
        let text = std::fs::read_to_string(path).unwrap();
        for key in [
            "default_profile",
            "clipboard",
            "mouse",
            "inventory_cache",
            "export_dir",
            "low_balance",
            "[attention]",
            "used_percent",
            "days",
            "max_age_minutes",
            "keeper_share_percent",
            "webhook_url",
            "assistant_writes",
            "theme",
            "[[commands]]",
            "[keys]",
            "[profiles.",
            "base_url",
            "access_code",
            "secret_key_cmd",
            "secret_key",
            "auth",
            "rate_limit",
            "index_share_percent",
            "status_stale_hours",
            "timeout_secs",
            "read_only",
            "color",
            "allow_http",
            "ca_file",
        ] {
            assert!(text.contains(key), "the example explains {key}");
        }
    }
}

#[cfg(test)]
mod choosing {
    use super::*;

    fn file(text: &str) -> FileConfig {
        toml::from_str(text).expect("a valid config")
    }

    /// One profile and no `default_profile`: that profile. Several and none chosen: an error
    /// naming them. A profile asked for by name must exist.
    #[test]
    fn the_only_profile_is_used_and_a_choice_among_several_lists_them() {
        let args = ConnectionArgs::default();
        let one = file("[profiles.acme]\nbase_url = \"https://api.example\"\n");
        let (name, _) = chosen_profile(&args, &one, "c.toml").unwrap();
        assert_eq!(name, "acme");
        let two = file("[profiles.acme]\n[profiles.globex]\n");
        let error = chosen_profile(&args, &two, "c.toml").unwrap_err().to_string();
        assert!(error.contains("acme, globex"), "{error}");
        assert!(
            error.contains("none is chosen") && error.contains("default_profile") && !error.contains("\"default\""),
            "says how to choose, and names no profile never asked for: {error}"
        );
        let with_default = file("[profiles.default]\n[profiles.globex]\n");
        assert_eq!(chosen_profile(&args, &with_default, "c.toml").unwrap().0, "default");
        let none = file("");
        assert_eq!(chosen_profile(&args, &none, "c.toml").unwrap().0, "default");
        let asked = ConnectionArgs {
            profile: Some("nope".into()),
            ..ConnectionArgs::default()
        };
        assert!(chosen_profile(&asked, &one, "c.toml").is_err());
    }

    /// The background read's share is a percentage of the rate; 0 or more than 100 is refused
    /// with the key and the rule.
    #[test]
    fn the_index_share_is_a_percentage_of_the_rate() {
        let options = |text: &str| {
            let profile: ProfileConfig = toml::from_str(text).expect("a valid profile");
            client_options(&ConnectionArgs::default(), "acme", &profile, None)
        };
        assert_eq!(options("index_share_percent = 25").unwrap().background_share, 0.25);
        for bad in ["index_share_percent = 0", "index_share_percent = 101"] {
            let error = options(bad).unwrap_err().to_string();
            assert!(
                error.contains("index_share_percent") && error.contains("1 to 100"),
                "{error}"
            );
        }
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn secret_key_cmd_gives_its_output_and_one_that_never_ends_is_stopped_at_its_limit() {
        let second = Duration::from_secs(1);
        assert_eq!(
            run_secret_command("p", "echo sk_demo_acme", second).unwrap(),
            "sk_demo_acme"
        );
        let started = std::time::Instant::now();
        let error = run_secret_command("p", "sleep 30", second).unwrap_err().to_string();
        assert!(error.contains("did not finish within 1 s"), "{error}");
        assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
        let error = run_secret_command("p", "echo oops >&2; exit 3", second)
            .unwrap_err()
            .to_string();
        assert!(error.contains("oops") && error.contains('3'), "{error}");
    }
}

#[cfg(test)]
mod theme {
    use super::*;

    /// `theme` takes the three names; another is an error naming the file.
    #[test]
    fn the_theme_is_one_of_three_and_another_is_refused() {
        for (text, name) in [
            ("dark", ThemeName::Dark),
            ("light", ThemeName::Light),
            ("high-contrast", ThemeName::HighContrast),
        ] {
            let file: FileConfig = toml::from_str(&format!("theme = {text:?}")).unwrap();
            let prefs = file.preferences(Path::new("c.toml")).unwrap();
            assert_eq!(prefs.theme, name);
        }
        let no: Result<FileConfig, _> = toml::from_str("theme = \"purple\"");
        let error = no.expect_err("not a theme").to_string();
        assert!(error.contains("dark") && error.contains("high-contrast"), "{error}");
        assert_eq!(
            FileConfig::default().preferences(Path::new("c.toml")).unwrap().theme,
            ThemeName::Dark
        );
    }
}
