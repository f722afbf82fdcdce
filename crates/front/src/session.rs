//! Which account a session talks to: a profile of the config file (or flags and environment
//! alone), or the demo sandbox. Opening one builds its API client (read-only setting and audit
//! trail included) and says what the dashboard shows of it. The start of every command and the
//! dashboard's profile picker both open accounts here.

use crate::config::ConnectionArgs;
use crate::config::{self, Colour, ConfigError};
use esimdash_api::{ApiError, BaseUrl, BaseUrlError, Client, ClientOptions, Credentials};

/// The demo's two resellers, as the picker offers them: (profile name, access code, secret).
const DEMO_ACCOUNTS: [(&str, &str, &str); 2] = [
    ("demo", "ak_demo_acme", "sk_demo_acme"),
    ("demo-globex", "ak_demo_globex", "sk_demo_globex"),
];

/// Why an account cannot be opened.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    #[error("no demo account {0:?}")]
    NoDemoAccount(String),
    /// The address of the demo's own sandbox is not a base URL.
    #[error("{0}")]
    DemoAddress(BaseUrlError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Client(#[from] ApiError),
}

/// What the dashboard shows of the account in use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Session {
    /// The profile's name ("default" without a config profile).
    pub profile: String,
    /// The profile's `color`: the header is painted with it.
    pub color: Option<Colour>,
    /// Why writes are refused, when they are (the setting that says so).
    pub read_only: Option<String>,
    /// Plain http to another machine (allowed by `allow_http`): the header says it is not encrypted.
    pub cleartext: bool,
    /// Pages a minute the inventory's background read may take (its share of the key's rate):
    /// what its time to go is told from. 0: not known.
    pub index_pages_per_minute: u32,
}

/// An account opened: its client, what the header shows, and the key its saved inventory
/// index is kept under (`None` for the demo, whose sandbox is new every run).
#[derive(Debug, Clone)]
pub struct Opened {
    pub client: Client,
    pub session: Session,
    pub index_key: Option<String>,
}

/// Where accounts come from.
#[derive(Debug, Clone)]
pub enum Accounts {
    /// The config file's profiles, with flags and environment over them.
    Config(ConnectionArgs),
    /// The demo sandbox running at this address, as its resellers.
    Demo { base_url: String, args: ConnectionArgs },
}

impl Accounts {
    /// The names the picker offers: the config file's profiles (`in_file`), or the demo's.
    pub fn names(&self, in_file: Vec<String>) -> Vec<String> {
        match self {
            Accounts::Config(_) => in_file,
            Accounts::Demo { .. } => DEMO_ACCOUNTS.iter().map(|(n, _, _)| n.to_string()).collect(),
        }
    }

    /// Opens the account of profile `name` (`None`: the one flags, environment and the file
    /// name). `dashboard`: a 429 is counted down on screen rather than slept through.
    pub fn open(&self, name: Option<&str>, dashboard: bool) -> Result<Opened, SessionError> {
        let (base_url, credentials, mut options, session) = match self {
            Accounts::Demo { base_url, args } => {
                let name = name.unwrap_or(DEMO_ACCOUNTS[0].0);
                let (profile, code, secret) = DEMO_ACCOUNTS
                    .iter()
                    .find(|(n, _, _)| *n == name)
                    .copied()
                    .ok_or_else(|| SessionError::NoDemoAccount(name.to_string()))?;
                let read_only = config::read_only_reason(args, None)?;
                let options = ClientOptions {
                    read_only: read_only.clone(),
                    audit: config::audit_trail(profile),
                    // Each demo is a sandbox of its own, its money new: its payments are no
                    // other demo's repeats.
                    account_scope: Some(base_url.clone()),
                    ..ClientOptions::default()
                };
                let session = Session {
                    profile: profile.to_string(),
                    color: None,
                    read_only,
                    ..Session::default()
                };
                let url = BaseUrl::parse(base_url).map_err(SessionError::DemoAddress)?;
                (url, Credentials::pair(code, secret), options, session)
            }
            Accounts::Config(args) => {
                let args = ConnectionArgs {
                    profile: name.map(str::to_string).or_else(|| args.profile.clone()),
                    ..args.clone()
                };
                let settings = config::resolve(&args)?;
                let session = Session {
                    profile: settings.profile.clone(),
                    color: settings.color,
                    read_only: settings.options.read_only.clone(),
                    cleartext: settings.base_url.is_cleartext() && !settings.base_url.is_loopback(),
                    ..Session::default()
                };
                (settings.base_url, settings.credentials, settings.options, session)
            }
        };
        if dashboard {
            options.max_retry_wait = std::time::Duration::ZERO;
        }
        let mut session = session;
        session.index_pages_per_minute = options.background_requests(std::time::Duration::from_secs(60)).max(1) as u32;
        let index_key = matches!(self, Accounts::Config(_))
            .then(|| esimdash_inventory::store::account_key(base_url.as_str(), &credentials.account()));
        Ok(Opened {
            client: Client::new(base_url, &credentials, options)?,
            session,
            index_key,
        })
    }
}

/// Two opened accounts are the same when they are the same profile with the same index (the
/// client is not compared).
impl PartialEq for Opened {
    fn eq(&self, other: &Self) -> bool {
        self.session == other.session && self.index_key == other.index_key
    }
}
