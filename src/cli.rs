//! The command line. Connection flags work before or after the command, and each reads its
//! environment variable when not given (flag > environment > config file > default).

use crate::api::AuthMode;
use crate::domain::status::StatusFilter;
use clap::{Args, Parser, Subcommand};
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(
    name = "esimdash",
    version,
    about = "Dashboard, one-shot commands and sandbox for the Reseller eSIM Sales API v1",
    long_about = "Dashboard, one-shot commands and sandbox for the Reseller eSIM Sales API v1.\n\n\
                  With no command, esimdash opens the dashboard (a terminal UI); every command \
                  below runs once and exits. `esimdash --demo` opens the dashboard on a built-in \
                  sandbox, with no set-up."
)]
pub struct Cli {
    #[command(flatten, next_help_heading = "Connection and global options")]
    pub connection: ConnectionArgs,

    /// Run against a sandbox started in this process, as the demo reseller (no set-up needed).
    #[arg(long, global = true)]
    pub demo: bool,

    /// Machine output: JSON on stdout, errors as JSON on stderr.
    #[arg(long, global = true)]
    pub json: bool,

    /// Do not read or save the inventory index between sessions (the XDG cache directory).
    #[arg(long, global = true)]
    pub no_cache: bool,

    /// Where the log goes (default: esimdash/esimdash.log under the XDG state directory).
    #[arg(long, global = true, value_name = "PATH")]
    pub log_file: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Clone, Default, Args)]
pub struct ConnectionArgs {
    /// API base URL; `/api/v1` is appended when missing.
    #[arg(long, global = true, env = "ESIMDASH_BASE_URL", value_name = "URL")]
    pub base_url: Option<String>,

    /// Access code of the API key pair.
    #[arg(long, global = true, env = "ESIMDASH_ACCESS_CODE", value_name = "CODE")]
    pub access_code: Option<String>,

    /// Secret key. Prefer ESIMDASH_SECRET_KEY or secret_key_cmd: a flag shows in the process list.
    #[arg(
        long,
        global = true,
        env = "ESIMDASH_SECRET_KEY",
        hide_env_values = true,
        value_name = "SECRET"
    )]
    pub secret_key: Option<String>,

    /// How the secret is sent: the pair (default) or a legacy mode.
    #[arg(long, global = true, env = "ESIMDASH_AUTH", value_enum)]
    pub auth: Option<AuthMode>,

    /// Profile of the config file to use.
    #[arg(long, global = true, env = "ESIMDASH_PROFILE", value_name = "NAME")]
    pub profile: Option<String>,

    /// Config file (default: esimdash/config.toml under the XDG config directory).
    #[arg(long, global = true, env = "ESIMDASH_CONFIG", value_name = "PATH")]
    pub config: Option<PathBuf>,

    /// Seconds to wait for an answer before giving up (default 30).
    #[arg(long, global = true, env = "ESIMDASH_TIMEOUT", value_name = "SECONDS")]
    pub timeout: Option<u64>,

    /// Refuse every top-up, order and profile change (also ESIMDASH_READ_ONLY=1, or
    /// read_only = true in a profile).
    #[arg(long, global = true)]
    pub read_only: bool,

    /// Allow a plain http:// base URL for a host that is not this machine (the secret key and
    /// every request then travel unencrypted; also allow_http = true in a profile).
    #[arg(long, global = true)]
    pub allow_http: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The wallet balance in USD.
    Balance,
    /// The plan catalog with your pricing, or one plan.
    Plans {
        #[command(flatten)]
        output: OutputArgs,
        /// Only plans of this location code (FR, !RG, !GL …).
        #[arg(long, value_name = "CC")]
        location: Option<String>,
        /// One plan, priced for you.
        #[arg(long, value_name = "SLUG")]
        slug: Option<String>,
    },
    /// Your orders, newest first.
    Orders {
        #[command(flatten)]
        list: ListArgs,
        #[command(flatten)]
        output: OutputArgs,
        /// Search in order number, package name and slug.
        #[arg(short = 'q', long = "query", value_name = "TEXT")]
        q: Option<String>,
    },
    /// Your eSIM inventory, or one eSIM by ICCID.
    Esims {
        #[command(flatten)]
        list: ListArgs,
        #[command(flatten)]
        output: OutputArgs,
        /// Only this eSIM (19 or 20 digits; spaces and dashes allowed): its state in words, what
        /// to tell the customer, and every field.
        #[arg(long, conflicts_with_all = ["all", "attention", "page"])]
        iccid: Option<String>,
        /// Only usable eSIMs near a limit (data used, days left: thresholds in the config file);
        /// reads every page.
        #[arg(long, conflicts_with = "page")]
        attention: bool,
    },
    /// An eSIM's install QR code, drawn in the terminal, with its activation code and iPhone
    /// install link; or written to image files.
    Qr {
        /// The eSIM's ICCID (19 or 20 digits; spaces allowed).
        iccid: String,
        /// Print only the one-tap install link for iPhone (iOS 17.4 and later).
        #[arg(long)]
        link: bool,
        /// Write the QR code to this PNG file (black on white, quiet zone, 10 px a module).
        #[arg(long, value_name = "FILE")]
        png: Option<PathBuf>,
        /// Write the QR code to this SVG file (4 cm a side when printed).
        #[arg(long, value_name = "FILE")]
        svg: Option<PathBuf>,
    },
    /// Your account and company profile.
    Profile {
        #[command(subcommand)]
        action: Option<ProfileAction>,
    },
    /// Top up an eSIM with a plan its availability offers (checked first); asks before paying.
    Topup {
        /// The eSIM to top up (19 or 20 digits).
        #[arg(long)]
        iccid: String,
        /// A top-up slug offered for this eSIM (`esimdash topup --iccid I` lists them on error).
        #[arg(long)]
        slug: String,
        #[command(flatten)]
        spend: SpendArgs,
    },
    /// Buy new eSIMs of a catalog plan; asks before paying.
    Buy {
        /// The catalog plan's slug (`esimdash plans` lists them), e.g. fr-5gb-30d.
        #[arg(long)]
        slug: String,
        #[command(flatten)]
        spend: SpendArgs,
    },
    /// Run the sandbox server of the API contract, with seeded demo data.
    Sandbox(SandboxArgs),
    /// The audit trail: every stage of every top-up, order and profile change made here.
    Audit {
        /// Only lines from this day (YYYY-MM-DD, UTC) or time (RFC 3339) on.
        #[arg(long, value_name = "DATE")]
        since: Option<String>,
    },
    /// Print a shell completion script (see README for where to put it).
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) to stdout.
    Man,
}

/// How many, and whether to ask: as top-ups and purchases take them.
#[derive(Debug, Clone, Args)]
pub struct SpendArgs {
    /// How many: 1 to 10.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10))]
    pub qty: u32,
    /// Do not ask: needed when not on a terminal.
    #[arg(long)]
    pub yes: bool,
    /// Pay even though the same payment (same eSIM or plan, slug and quantity) was placed, or
    /// may have been, in the last 10 minutes: the second, explicit confirmation.
    #[arg(long)]
    pub again: bool,
}

/// Paging and the status filter, as both lists take them.
#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// Which page, from 1 (default 1).
    #[arg(long, conflicts_with = "all")]
    pub page: Option<u64>,
    /// Every page, read in order within the key's rate limit (progress on stderr; Ctrl-C stops).
    #[arg(long)]
    pub all: bool,
    /// Items a page: 1 to 100 (default 20).
    #[arg(long)]
    pub page_size: Option<u64>,
    /// A status as the API writes it (in_use, got_resource, cancel …), or `active`.
    #[arg(long, value_parser = status_filter)]
    pub status: Option<StatusFilter>,
}

/// CSV instead of a table, to stdout or a file.
#[derive(Debug, Clone, Args)]
pub struct OutputArgs {
    /// CSV (RFC 4180) with a header row: exact decimals, times as the API gives them.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// Write the CSV to this file instead of stdout (it appears only once complete).
    #[arg(short = 'o', long, value_name = "FILE", requires = "csv")]
    pub output: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum ProfileAction {
    /// Change company fields; an empty value clears a field.
    Set {
        /// Company name, up to 200 characters, or empty.
        #[arg(long, value_name = "NAME")]
        company: Option<String>,
        /// Two letters (ISO 3166-1), or empty.
        #[arg(long, value_name = "CC")]
        country: Option<String>,
        /// An http(s) URL, or empty.
        #[arg(long, value_name = "URL")]
        website: Option<String>,
    },
}

#[derive(Debug, Clone, Args)]
pub struct SandboxArgs {
    /// Address to listen on (port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: SocketAddr,
    /// Seed of the generated data.
    #[arg(long, default_value_t = crate::sandbox::DEFAULT_SEED)]
    pub seed: u64,
    /// Orders per reseller.
    #[arg(long, default_value_t = crate::sandbox::DEFAULT_ORDERS as u64,
        value_parser = clap::value_parser!(u64).range(0..=100_000))]
    pub orders: u64,
    /// Requests per key per minute.
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_limit: u32,
    /// Delay every response by this many milliseconds (a slow network).
    #[arg(long, default_value_t = 0)]
    pub latency_ms: u64,
    /// Ignore `iccid` on the lists, like a server that predates the lookup (for testing clients).
    #[arg(long)]
    pub no_iccid_lookup: bool,
    /// Fail this share of answers (0 to 1), each way a network and server fail: 500, 503 and
    /// 429 with Retry-After, a reset connection, a body cut short, a body that stalls.
    #[arg(long, value_name = "RATE", default_value_t = 0.0, value_parser = share)]
    pub chaos: f64,
}

/// `--status` as typed: sent to the server as it is.
fn status_filter(text: &str) -> Result<StatusFilter, std::convert::Infallible> {
    Ok(StatusFilter::exact(text))
}

/// A share from 0 to 1.
fn share(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(rate) if (0.0..=1.0).contains(&rate) => Ok(rate),
        _ => Err(format!(
            "{text:?} is not a share from 0 to 1 (0.1 fails one answer in ten)"
        )),
    }
}
