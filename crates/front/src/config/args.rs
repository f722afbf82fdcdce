//! Where a session connects, and as whom, as the command line and the environment give it:
//! the dashboard's and each API command's options (`esimdash --help`, "Connection options").

use clap::Args;
use esimdash_api::AuthMode;
use std::path::PathBuf;

// Where a session connects, and as whom: the dashboard's and each API command's options. (Not a
// doc comment: clap would make it the about text of every command they are added to.)
#[derive(Debug, Clone, Default, Args)]
#[command(next_help_heading = "Connection options")]
pub struct ConnectionArgs {
    /// Run against a sandbox started in this process, as the demo reseller (no set-up needed).
    #[arg(long)]
    pub demo: bool,

    /// API base URL, from your provider (its reseller portal); `/api/v1` is appended when
    /// missing.
    #[arg(long, env = "ESIMDASH_BASE_URL", value_name = "URL")]
    pub base_url: Option<String>,

    /// Access code of the API key pair.
    #[arg(long, env = "ESIMDASH_ACCESS_CODE", value_name = "CODE")]
    pub access_code: Option<String>,

    /// Secret key. Prefer ESIMDASH_SECRET_KEY or secret_key_cmd: a flag shows in the process list.
    #[arg(long, env = "ESIMDASH_SECRET_KEY", hide_env_values = true, value_name = "SECRET")]
    pub secret_key: Option<String>,

    /// How the secret is sent: the pair (default) or a legacy mode.
    #[arg(long, env = "ESIMDASH_AUTH", value_parser = auth_mode())]
    pub auth: Option<AuthMode>,

    /// Profile of the config file to use.
    #[arg(long, env = "ESIMDASH_PROFILE", value_name = "NAME")]
    pub profile: Option<String>,

    /// Config file (default: esimdash/config.toml under the XDG config directory).
    #[arg(long, env = "ESIMDASH_CONFIG", value_name = "PATH")]
    pub config: Option<PathBuf>,

    /// Seconds to wait for an answer before giving up: 1 to 86400 (default 30).
    #[arg(long, env = "ESIMDASH_TIMEOUT", value_name = "SECONDS",
        value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: Option<u64>,

    /// Refuse every top-up, order and profile change (also ESIMDASH_READ_ONLY=1, or
    /// read_only = true in a profile).
    #[arg(long)]
    pub read_only: bool,

    /// Allow a plain http:// base URL for a host that is not this machine (the secret key and
    /// every request then travel unencrypted; also allow_http = true in a profile).
    #[arg(long)]
    pub allow_http: bool,

    /// Also trust the certificates of this PEM file as roots (a private CA, a test server),
    /// besides the system's.
    #[arg(long, env = "ESIMDASH_CA_FILE", value_name = "PEM")]
    pub ca_file: Option<PathBuf>,
}

impl ConnectionArgs {
    /// Takes over from `later` each option `given` names (by its id, the field's name).
    pub fn take_given(&mut self, later: ConnectionArgs, given: impl Fn(&str) -> bool) {
        // Destructured in full: a field added to the struct and left out here does not compile.
        macro_rules! take {
            ($($field:ident),* $(,)?) => {{
                let ConnectionArgs { $($field),* } = later;
                $(if given(stringify!($field)) {
                    self.$field = $field;
                })*
            }};
        }
        take!(
            demo,
            base_url,
            access_code,
            secret_key,
            auth,
            profile,
            config,
            timeout,
            read_only,
            allow_http,
            ca_file
        );
    }
}

/// One of the auth modes by name, offered as the possible values in `--help`.
fn auth_mode() -> impl clap::builder::TypedValueParser<Value = AuthMode> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(AuthMode::NAMES).try_map(|name| name.parse::<AuthMode>())
}
