//! The command line. The connection options (where and as whom: `--demo`, `--base-url`, the
//! key, `--profile` …) are the dashboard's and those of every command that calls the API, and
//! work before or after the command; the commands that never call it (`sandbox`, `audit`,
//! `completions`, `man`) neither list nor take them. Each reads its environment variable when
//! not given (flag > environment > config file > default).

use clap::parser::ValueSource;
use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use esimdash_domain::iccid::EsimIccid;
use esimdash_domain::status::StatusFilter;
use std::ffi::OsString;
use std::path::PathBuf;

/// Read with [`Cli::try_from_args`], which adds the connection options to the commands
/// that call the API; clap's own `parse` would not.
#[derive(Debug, Parser)]
#[command(
    name = "esimdash",
    version,
    about = "Dashboard, one-shot commands and sandbox for the Reseller eSIM Sales API v1",
    long_about = "Dashboard, one-shot commands and sandbox for the Reseller eSIM Sales API v1.\n\n\
                  With no command, esimdash opens the dashboard (a terminal UI); each command \
                  below runs once and exits instead. `esimdash --demo` opens the dashboard on a \
                  built-in sandbox, with no set-up.",
    after_long_help = concat!(
        "Exit codes (docs/commands.md has each in full):\n",
        "  0  done\n",
        "  1  refused by the API, no such eSIM or QR code, or a purchase refused before sending\n",
        "  2  usage or configuration, a read-only session, a repeat without --again, an eSIM that cannot take data\n",
        "  3  credentials refused\n",
        "  4  rate limited\n",
        "  5  network error or timeout; a payment whose outcome is not known\n",
        "  6  not known: a search stopped before every page was read\n",
        "  7  placed, but charged another total than the one confirmed\n",
        "  check: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN"
    )
)]
pub struct Cli {
    /// Do not read or save the dashboard's inventory index between sessions (the XDG cache
    /// directory).
    #[arg(long)]
    pub no_cache: bool,

    #[command(flatten)]
    pub connection: ConnectionArgs,

    /// Machine output: JSON on stdout, errors as JSON on stderr.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub json: bool,

    /// Where the log goes (default: esimdash/esimdash.log under the XDG state directory).
    #[arg(long, global = true, value_name = "PATH", help_heading = GLOBAL)]
    pub log_file: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Option<Command>,
}

/// The heading of the options every command takes.
const GLOBAL: &str = "Global options";

/// The commands that never call the API: the connection options are not theirs.
const OFFLINE: [&str; 3] = ["sandbox", "completions", "man"];

impl Cli {
    /// The command line's definition, for parsing, completions and the man page: the derived
    /// one, with the connection options added to each command that calls the API and to the
    /// commands under it (`profile set`). They are added as clap builds a command, which it
    /// does for the command typed only (and for all of them for completions and the man page):
    /// made for every command, they were a third of a one-shot command's start.
    pub fn definition() -> clap::Command {
        fn connected(command: clap::Command) -> clap::Command {
            ConnectionArgs::augment_args(command).mut_subcommands(|c| c.defer(connected))
        }
        <Cli as CommandFactory>::command().mut_subcommands(|c| {
            if OFFLINE.contains(&c.get_name()) {
                c
            } else {
                c.defer(connected)
            }
        })
    }

    /// Parses `args` (the program's name first). A connection option given after a command
    /// takes over from the same one given before it, as the later word on a command line
    /// does; an option given before a command that does not take it is refused.
    pub fn try_from_args<I, T>(args: I) -> Result<Cli, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString> + Clone,
    {
        let mut definition = Cli::definition();
        let matches = definition.try_get_matches_from_mut(args)?;
        let mut cli = Cli::from_arg_matches(&matches)?;
        let connection = ConnectionArgs::augment_args(clap::Command::new("connection"));
        let (mut above, mut above_matches) = (&definition, &matches);
        let mut words = String::from("esimdash");
        while let Some((name, matches)) = above_matches.subcommand() {
            let Some(command) = above.find_subcommand(name) else {
                break;
            };
            words = format!("{words} {name}");
            refuse_unused(above, above_matches, command, &words)?;
            if connection
                .get_arguments()
                .all(|a| defines(command, a.get_id().as_str()))
            {
                let given = |id: &str| matches.value_source(id) == Some(ValueSource::CommandLine);
                cli.connection
                    .take_given(ConnectionArgs::from_arg_matches(matches)?, given);
            }
            (above, above_matches) = (command, matches);
        }
        Ok(cli)
    }
}

fn defines(command: &clap::Command, id: &str) -> bool {
    command.get_arguments().any(|a| a.get_id() == id)
}

/// An option typed before `command` (`words` on the command line) that it does not take (`esimdash --demo sandbox`,
/// `esimdash --no-cache orders`): an error, rather than an option silently ignored.
fn refuse_unused(
    above: &clap::Command,
    typed: &ArgMatches,
    command: &clap::Command,
    words: &str,
) -> Result<(), clap::Error> {
    let unused = above.get_arguments().find(|a| {
        let id = a.get_id().as_str();
        !a.is_global_set() && typed.value_source(id) == Some(ValueSource::CommandLine) && !defines(command, id)
    });
    match unused {
        None => Ok(()),
        Some(arg) => {
            let flag = arg
                .get_long()
                .map_or_else(|| arg.get_id().to_string(), |l| format!("--{l}"));
            Err(Cli::definition().error(
                clap::error::ErrorKind::ArgumentConflict,
                format!("{flag} does not apply to `{words}` (`{words} --help` lists what does)"),
            ))
        }
    }
}

pub use esimdash_front::config::ConnectionArgs;

/// What `esimdash check` checks.
#[derive(Debug, Clone, Subcommand)]
pub enum CheckWhat {
    /// The wallet balance: WARNING below --warning, CRITICAL below --critical (USD); and, with
    /// --runway-warning and --runway-critical, the days it lasts at the last 7 days' pace.
    #[command(group = clap::ArgGroup::new("threshold").multiple(true).required(true)
        .args(["warning", "runway_warning"]))]
    Balance {
        /// WARNING when the balance is below this many USD.
        #[arg(long, value_name = "USD", value_parser = amount, requires = "critical")]
        warning: Option<rust_decimal::Decimal>,
        /// CRITICAL when the balance is below this many USD (at most --warning).
        #[arg(long, value_name = "USD", value_parser = amount, requires = "warning")]
        critical: Option<rust_decimal::Decimal>,
        /// WARNING when the balance lasts fewer than this many days at the last 7 days' pace.
        #[arg(long, value_name = "DAYS", value_parser = amount, requires = "runway_critical")]
        runway_warning: Option<rust_decimal::Decimal>,
        /// CRITICAL when it lasts fewer than this many days (at most --runway-warning).
        #[arg(long, value_name = "DAYS", value_parser = amount, requires = "runway_warning")]
        runway_critical: Option<rust_decimal::Decimal>,
        #[command(flatten)]
        orders: OrdersAgeArgs,
    },
    /// The eSIMs needing attention (config [attention]): WARNING from --warning of them,
    /// CRITICAL from --critical. From the account's kept picture when it is no older than
    /// --max-age (one request), else read live within --budget requests, else UNKNOWN saying why.
    Attention {
        /// WARNING when this many eSIMs or more need attention.
        #[arg(long, value_name = "N")]
        warning: u64,
        /// CRITICAL when this many or more need attention (at least --warning).
        #[arg(long, value_name = "N")]
        critical: u64,
        #[command(flatten)]
        picture: PictureArgs,
    },
}

/// How a count may come from the account's kept picture, and what a live read may cost.
#[derive(Args, Debug, Clone, Copy)]
pub struct PictureArgs {
    /// The oldest kept picture answered from, in minutes (default: [attention] max_age_minutes,
    /// else 60); 0 always reads live.
    #[arg(long, value_name = "MINUTES")]
    pub max_age: Option<u32>,
    /// Without a picture that young, the requests a live read may take; past them the answer
    /// is UNKNOWN, saying what it could not read.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BUDGET)]
    pub budget: u64,
}

/// How old the kept orders a runway is told from may be.
#[derive(Args, Debug, Clone, Copy)]
pub struct OrdersAgeArgs {
    /// Tell the runway from the orders kept on this machine when they were read from the top
    /// at most this many minutes ago (default: [attention] max_age_minutes, else 60); 0 reads
    /// the newest orders first.
    #[arg(long, value_name = "MINUTES")]
    pub max_age: Option<u32>,
}

/// A live count's requests unless `--budget` says otherwise: a quarter of a minute of the API's
/// budget, enough for 3 000 usable eSIMs (a keeper makes a larger account's count cheap).
pub const DEFAULT_BUDGET: u64 = 30;

/// An amount in USD, exactly (never through a float).
fn amount(text: &str) -> Result<rust_decimal::Decimal, String> {
    esimdash_domain::money::parse_decimal(text)
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The wallet balance in USD, and how long it lasts at the last 7 days' pace.
    Balance {
        #[command(flatten)]
        orders: OrdersAgeArgs,
    },
    /// Orders, spend, cost and margin per day, week, plan or country (for a spreadsheet or a
    /// script). Reads the orders back to the period's start; a second look reads only what is new.
    Report {
        /// From this day on: a number of days (30d: the last 30, today among them), YYYY-MM-DD
        /// or an RFC 3339 time, in this machine's time zone.
        #[arg(long, value_name = "30d|DATE", default_value = "30d")]
        since: String,
        /// One row per day, week (Monday to Sunday), plan or country.
        #[arg(long, value_name = "day|week|plan|country", default_value = "day",
            value_parser = clap::builder::PossibleValuesParser::new(esimdash_ledger::sums::By::NAMES))]
        by: String,
        #[command(flatten)]
        output: OutputArgs,
    },
    /// A check for monitoring (Nagios, Icinga, Sensu): one line, exit 0 OK, 1 WARNING,
    /// 2 CRITICAL, 3 UNKNOWN.
    Check {
        #[command(subcommand)]
        what: CheckWhat,
    },
    /// An AI assistant's seat over the Model Context Protocol, on stdin and stdout: read tools
    /// (an eSIM and its top-ups, attention, plans, orders, the balance), answering as the --json
    /// of the same commands (docs/assistants.md). With --allow-writes (or assistant_writes in
    /// the config), tools that propose a top-up or an order: only a person approves one
    /// (esimdash approve ID).
    Mcp {
        /// Offer the proposing tools (propose_topup, propose_order) for this session.
        #[arg(long)]
        allow_writes: bool,
    },
    /// The payments an assistant proposed, waiting for a person (esimdash approve ID or refuse
    /// ID); --all: decided and expired ones too.
    Requests {
        /// Decided and expired requests too, not only those waiting.
        #[arg(long)]
        all: bool,
    },
    /// Approve a proposed payment: checked again at this moment's offer and price (a changed
    /// price or an expired request is refused: propose it again), asked, then paid once.
    Approve {
        /// The request's id (esimdash requests lists them).
        id: String,
        /// Do not ask: needed when not on a terminal.
        #[arg(long)]
        yes: bool,
        /// Pay even though the same payment was placed, or may have been, in the last 10
        /// minutes: the second, explicit confirmation.
        #[arg(long)]
        again: bool,
    },
    /// Refuse a proposed payment: nothing is paid, and the assistant reads why.
    Refuse {
        /// The request's id.
        id: String,
        /// Why, for the assistant and the record.
        #[arg(long)]
        why: Option<String>,
    },
    /// The account's figures in the Prometheus text format: printed once (for node_exporter's
    /// textfile collector), or served at /metrics with --listen.
    Metrics {
        /// Serve /metrics at this address instead (127.0.0.1:9864, say).
        #[arg(long, value_name = "ADDR")]
        listen: Option<std::net::SocketAddr>,
        /// Served, an answer is kept this many seconds: scrapes in between cost no request.
        #[arg(long, value_name = "SECONDS", default_value_t = 60,
            value_parser = clap::value_parser!(u64).range(1..=86_400))]
        every: u64,
    },
    /// Polls the account and prints one JSON line per change: the balance below a threshold,
    /// an eSIM installed, deleted, used up or expired, an eSIM needing attention, a new order.
    /// Only reads.
    Watch(WatchArgs),
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
        #[arg(long, conflicts_with_all = ["all", "attention", "page"], value_parser = typed_iccid)]
        iccid: Option<EsimIccid>,
        /// Only this order's eSIMs (its number, e.g. B100004006272), each as --iccid gives it:
        /// found in the account's kept index, else among the newest 300 eSIMs.
        #[arg(long, value_name = "NUMBER", conflicts_with_all = ["all", "attention", "page", "iccid"])]
        order: Option<String>,
        /// Only usable eSIMs near a limit (data used, days left: thresholds in the config file):
        /// from the account's kept picture when it is no older than --max-age (one request),
        /// else read live within --budget requests.
        #[arg(long, conflicts_with = "page")]
        attention: bool,
        /// With --attention: the oldest kept picture answered from, in minutes (default:
        /// [attention] max_age_minutes, else 60); 0 always reads live.
        #[arg(long, value_name = "MINUTES", requires = "attention")]
        max_age: Option<u32>,
        /// With --attention, without a picture that young: the requests a live read may take.
        #[arg(long, value_name = "N", default_value_t = DEFAULT_BUDGET, requires = "attention")]
        budget: u64,
    },
    /// An eSIM's install QR code, drawn in the terminal, with its activation code and iPhone
    /// install link; or written to image files.
    Qr {
        /// The eSIM's ICCID (19 or 20 digits; spaces allowed).
        #[arg(value_parser = typed_iccid)]
        iccid: EsimIccid,
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
    /// "My eSIM has no data": the first-line checks before escalating (state and history,
    /// installed, data moving since the last triage, validity, coverage, APN, manual install),
    /// each passed, failed or needing the customer, and a paste-ready escalation pack.
    Triage {
        /// The eSIM's ICCID (19 or 20 digits; spaces allowed).
        #[arg(value_parser = typed_iccid)]
        iccid: EsimIccid,
        /// The country the customer is in now: its two-letter code (FR) or its name.
        #[arg(long, value_name = "COUNTRY")]
        country: Option<String>,
        /// Write the escalation pack to this file as well.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Your account and company profile.
    Profile {
        #[command(subcommand)]
        action: Option<ProfileAction>,
    },
    /// Top up an eSIM with a plan its availability offers (checked first); asks before paying.
    /// With --from, every row of a CSV file (iccid,slug,qty).
    Topup {
        /// The eSIM to top up (19 or 20 digits).
        #[arg(long, required_unless_present = "from", conflicts_with = "from", value_parser = typed_iccid)]
        iccid: Option<EsimIccid>,
        /// A top-up slug offered for this eSIM (without it, `esimdash topup --iccid I` lists them).
        #[arg(long, conflicts_with = "from")]
        slug: Option<String>,
        #[command(flatten)]
        bulk: BulkArgs,
        #[command(flatten)]
        spend: SpendArgs,
    },
    /// Buy new eSIMs of a catalog plan; asks before paying. With --from, every row of a CSV
    /// file (slug,qty).
    Buy {
        /// The catalog plan's slug (`esimdash plans` lists them), e.g. fr-5gb-30d.
        #[arg(long, required_unless_present = "from", conflicts_with = "from")]
        slug: Option<String>,
        #[command(flatten)]
        bulk: BulkArgs,
        #[command(flatten)]
        spend: SpendArgs,
    },
    /// Run the sandbox server of the API contract, with seeded demo data.
    #[cfg(feature = "sandbox")]
    Sandbox(SandboxArgs),
    /// The team gateway: serve the API to a team's agents under the reseller's key, each agent
    /// with a token, a role and a daily cap of its own (docs/team.md).
    #[cfg(feature = "gateway")]
    Gateway {
        #[command(subcommand)]
        what: GatewayWhat,
    },
    /// The audit trail: every stage of every top-up, order and profile change made here.
    Audit {
        /// Only lines from this day (YYYY-MM-DD, UTC) or time (RFC 3339) on.
        #[arg(long, value_name = "DATE")]
        since: Option<String>,
        /// The team gateway's journal instead of this seat's trail: the agent's own payments,
        /// or everyone's for an admin (needs the connection to the gateway, as any command).
        #[arg(long)]
        team: bool,
    },
    /// Print a shell completion script (see docs/commands.md for where to put it).
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) to stdout.
    Man,
}

impl Command {
    /// Whether it runs until stopped (the sandbox, `metrics --listen`, a watch without
    /// `--once`) rather than answering once: a stop signal is how it ends, not a failure.
    pub fn serves(&self) -> bool {
        match self {
            #[cfg(feature = "sandbox")]
            Command::Sandbox(_) => true,
            Command::Metrics { listen, .. } => listen.is_some(),
            Command::Mcp { .. } => true,
            #[cfg(feature = "gateway")]
            Command::Gateway {
                what: GatewayWhat::Serve(_),
            } => true,
            Command::Watch(args) => !args.once,
            _ => false,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct WatchArgs {
    /// Time between polls: 60, 90s, 5m (at least 10 s). Each poll reads what the background
    /// share of the key's budget allows in it.
    #[arg(long, default_value = "60s", value_parser = interval, value_name = "TIME")]
    pub interval: std::time::Duration,
    /// Run this shell command for each change, with the change's JSON line on its stdin. A
    /// change it fails to take (exit status not 0, or stopped at --exec-timeout) is handed over
    /// again at the next poll, with the same "id".
    #[arg(long, value_name = "CMD", conflicts_with = "webhook")]
    pub exec: Option<String>,
    /// Post each change to this URL (http or https), signed with ESIMDASH_WEBHOOK_SECRET in the
    /// Esimdash-Signature header (docs/operations.md: how to verify it); one that fails or takes
    /// more than 3 s is posted again later, with the same "id" (default: the config's webhook_url).
    #[arg(long, value_name = "URL")]
    pub webhook: Option<String>,
    /// How long --exec may take per change, from its start to its end (the line written to its
    /// stdin included): 60, 90s, 5m (1 s to 1 h). Beyond it, it is stopped.
    #[arg(long, default_value = "60s", value_parser = exec_timeout, value_name = "TIME", requires = "exec")]
    pub exec_timeout: std::time::Duration,
    /// Tell when the balance goes below this many USD (default: the config's low_balance).
    #[arg(long, value_name = "USD", value_parser = amount)]
    pub balance_below: Option<rust_decimal::Decimal>,
    /// Poll once, report and exit (cron; tests).
    #[arg(long)]
    pub once: bool,
}

/// "60", "90s", "5m", "1h": at least 10 seconds.
fn interval(text: &str) -> Result<std::time::Duration, String> {
    seconds(text, 10..=86_400, "from 10s to 24h")
}

/// "60", "90s", "5m": a command's time, 1 second to an hour.
fn exec_timeout(text: &str) -> Result<std::time::Duration, String> {
    seconds(text, 1..=3_600, "from 1s to 1h")
}

/// A whole number of s, m or h within `range` seconds (`within` says it to a person).
fn seconds(text: &str, range: std::ops::RangeInclusive<u64>, within: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let (number, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len()));
    let n: u64 = number
        .parse()
        .map_err(|_| format!("{text:?}: a whole number of s, m or h"))?;
    let seconds = match unit {
        "" | "s" => Some(n),
        "m" => n.checked_mul(60),
        "h" => n.checked_mul(3600),
        _ => None,
    }
    .filter(|s| range.contains(s))
    .ok_or_else(|| format!("{text:?}: {within}"))?;
    Ok(std::time::Duration::from_secs(seconds))
}

/// A bulk file to pay row by row, as `topup --from` and `buy --from` take it.
#[derive(Debug, Clone, Args)]
pub struct BulkArgs {
    /// Pay every row of this CSV file (its first line names the columns: iccid,slug,qty for
    /// top-ups, slug,qty for orders). Checked whole first; a re-run after a crash or Ctrl-C
    /// goes on, skipping the rows already placed; the same rows once placed whole (from any
    /// path) are paid again only with --again.
    #[arg(long, value_name = "FILE.csv")]
    pub from: Option<PathBuf>,
    /// Check the file and print the plan; pay nothing.
    #[arg(long, requires = "from")]
    pub dry_run: bool,
    /// Where the result CSV goes (default: beside the file, NAME.result.csv).
    #[arg(long, value_name = "FILE", requires = "from")]
    pub result: Option<PathBuf>,
}

/// How many, and whether to ask: as top-ups and purchases take them.
#[derive(Debug, Clone, Args)]
pub struct SpendArgs {
    /// How many: 1 to 10 (a bulk file gives its own, per row).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10), conflicts_with = "from")]
    pub qty: u32,
    /// Do not ask: needed when not on a terminal.
    #[arg(long)]
    pub yes: bool,
    /// Pay even though the same payment (same eSIM or plan, slug and quantity) was placed, or
    /// may have been, in the last 10 minutes, or (--from) its rows were paid before by a file
    /// placed whole or by another file: the second, explicit confirmation. With --from, rows
    /// whose outcome is unknown are paid again too.
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

#[cfg(feature = "sandbox")]
#[derive(Debug, Clone, Args)]
pub struct SandboxArgs {
    /// Address to listen on (port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub addr: std::net::SocketAddr,
    /// Seed of the generated data.
    #[arg(long, default_value_t = esimdash_sandbox::DEFAULT_SEED)]
    pub seed: u64,
    /// Orders per reseller: 0 to 2000000 (1000000 takes about 600 MB of memory).
    #[arg(long, default_value_t = esimdash_sandbox::DEFAULT_ORDERS as u64,
        value_parser = clap::value_parser!(u64).range(0..=esimdash_sandbox::MAX_ORDERS as u64))]
    pub orders: u64,
    /// Requests per key per minute: 1 or more.
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
    /// Serve https with this certificate chain (PEM), with --tls-key; clients trust it with
    /// --ca-file (a test certificate is enough).
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// The private key (PEM) of --tls-cert.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,
}

#[cfg(feature = "gateway")]
#[derive(Debug, Clone, Subcommand)]
pub enum GatewayWhat {
    /// Serve the API v1 to agents (the reseller's key taken as every command takes it:
    /// ESIMDASH_ACCESS_CODE and ESIMDASH_SECRET_KEY, or a profile's secret_key_cmd).
    Serve(GatewayServeArgs),
    /// Add, list and revoke agents, and set their caps.
    Agent {
        #[command(subcommand)]
        what: AgentWhat,
    },
}

/// Where the gateway's store is (its settings are the `[gateway]` table of the config file,
/// `--config`: docs/team.md).
#[cfg(feature = "gateway")]
#[derive(Debug, Clone, Args)]
pub struct GatewayPlace {
    /// The store: a file (SQLite) or a postgres:// URL (default: `[gateway] store`, else
    /// esimdash/gateway.db under the XDG state directory).
    #[arg(long, value_name = "PATH|URL")]
    pub store: Option<String>,
}

#[cfg(feature = "gateway")]
#[derive(Debug, Clone, Args)]
pub struct GatewayServeArgs {
    #[command(flatten)]
    pub place: GatewayPlace,
    /// Address to listen on (default 127.0.0.1:8420; port 0 picks a free one).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<std::net::SocketAddr>,
    /// The API the gateway speaks to (default: `[gateway] upstream`, else the profile's base
    /// URL, as for every command).
    #[arg(long, value_name = "URL")]
    pub upstream: Option<String>,
    /// Serve the gateway's figures at http://ADDR/metrics (Prometheus text; no token asked),
    /// on a loopback address unless `--metrics-public`.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Let `--metrics-listen` take an address that is not loopback: whoever reaches it reads
    /// agents' names, request counts and spend, with no token.
    #[arg(long)]
    pub metrics_public: bool,
}

#[cfg(feature = "gateway")]
#[derive(Debug, Clone, Subcommand)]
pub enum AgentWhat {
    /// Add an agent and print its token, once: its access code and secret key.
    Add {
        /// 1 to 64 letters, digits, '.', '_', '-' or '@'.
        name: String,
        /// What the agent may do: a role of docs/team.md's table (a viewer reads; support tops
        /// up within its cap; an admin does everything).
        #[arg(long, value_parser = clap::builder::PossibleValuesParser::new(esimdash_domain::role::Role::names()))]
        role: String,
        /// USD it may spend in a UTC day (none: no cap of its own).
        #[arg(long, value_name = "USD", value_parser = amount)]
        daily_cap: Option<rust_decimal::Decimal>,
        #[command(flatten)]
        place: GatewayPlace,
    },
    /// Every agent, its role, cap and whether it is revoked.
    List {
        #[command(flatten)]
        place: GatewayPlace,
    },
    /// Refuse the agent's token from its next request on.
    Revoke {
        /// The agent, as `agent list` names it.
        name: String,
        #[command(flatten)]
        place: GatewayPlace,
    },
    /// Set the agent's daily cap in USD, or `none` to lift it.
    SetCap {
        /// The agent, as `agent list` names it.
        name: String,
        /// USD it may spend in a UTC day, or `none`: no cap of its own.
        #[arg(value_name = "USD|none")]
        cap: String,
        #[command(flatten)]
        place: GatewayPlace,
    },
}

/// `--status` as typed: sent to the server as it is.
fn status_filter(text: &str) -> Result<StatusFilter, std::convert::Infallible> {
    Ok(StatusFilter::exact(text))
}

/// A share from 0 to 1.
#[cfg(feature = "sandbox")]
fn share(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(rate) if (0.0..=1.0).contains(&rate) => Ok(rate),
        _ => Err(format!(
            "{text:?} is not a share from 0 to 1 (0.1 fails one answer in ten)"
        )),
    }
}

/// An ICCID argument, kept as typed: the command checks it where it starts (`typed_iccid` in
/// `commands`), after what it must say first, so that parsing never fails here.
fn typed_iccid(text: &str) -> Result<EsimIccid, std::convert::Infallible> {
    Ok(EsimIccid::parse(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(words: &[&str]) -> Cli {
        Cli::try_from_args(std::iter::once("esimdash").chain(words.iter().copied()))
            .unwrap_or_else(|e| panic!("{words:?}: {e}"))
    }

    /// A value each connection option takes (none for a switch).
    fn sample(arg: &clap::Arg) -> Option<String> {
        if !arg.get_action().takes_values() {
            return None;
        }
        Some(match arg.get_possible_values().first() {
            Some(value) => value.get_name().to_string(),
            None => "77".to_string(),
        })
    }

    #[test]
    fn the_definition_is_consistent() {
        Cli::definition().debug_assert();
    }

    /// Every connection option, before the command, after it, and after `profile set`, gives
    /// the same settings; typed twice, the later one wins.
    #[test]
    fn connection_options_work_before_or_after_the_command() {
        let connection = ConnectionArgs::augment_args(clap::Command::new("connection"));
        for arg in connection.get_arguments() {
            let flag = format!("--{}", arg.get_long().unwrap_or_default());
            let mut typed = vec![flag.as_str()];
            let value = sample(arg);
            typed.extend(value.as_deref());
            let before = parse(&[&typed[..], &["orders"]].concat()).connection;
            let after = parse(&[&["orders"], &typed[..]].concat()).connection;
            let nested = parse(&[&["profile", "set"], &typed[..]].concat()).connection;
            assert_eq!(format!("{before:?}"), format!("{after:?}"), "{flag}");
            assert_eq!(format!("{before:?}"), format!("{nested:?}"), "{flag}");
            let untyped = parse(&["orders"]).connection;
            assert_ne!(format!("{before:?}"), format!("{untyped:?}"), "{flag} is read");
        }
        let later = parse(&[
            "--base-url",
            "https://a.example",
            "orders",
            "--base-url",
            "https://b.example",
        ]);
        assert_eq!(later.connection.base_url.as_deref(), Some("https://b.example"));
        let kept = parse(&["--base-url", "https://a.example", "--demo", "orders", "--read-only"]);
        assert_eq!(kept.connection.base_url.as_deref(), Some("https://a.example"));
        assert!(kept.connection.demo && kept.connection.read_only);
    }

    /// The commands that never call the API neither list nor take the connection options, nor
    /// those of the dashboard alone; each other command lists its own options first, then the
    /// connection options under their heading.
    #[test]
    fn each_command_lists_its_own_options_first_and_the_connection_ones_only_where_they_apply() {
        let mut definition = Cli::definition();
        definition.build();
        for command in definition.get_subcommands().filter(|c| c.get_name() != "help") {
            let name = command.get_name();
            let help = command.clone().render_help().to_string();
            if OFFLINE.contains(&name) {
                assert!(
                    !help.contains("--base-url") && !help.contains("--demo"),
                    "{name}: {help}"
                );
                let operand = if name == "completions" { Some("bash") } else { None };
                let refused = Cli::try_from_args(["esimdash", "--demo", name].into_iter().chain(operand));
                assert!(
                    refused.is_err_and(|e| e.to_string().contains("does not apply")),
                    "{name}"
                );
            } else {
                let heading = help
                    .find("Connection options:")
                    .unwrap_or_else(|| panic!("{name}: {help}"));
                let own = help.find("Options:").unwrap_or_default();
                assert!(
                    own < heading && help.find("--base-url") > Some(heading),
                    "{name}: {help}"
                );
            }
            assert!(help.find("Global options:") > help.find("--help"), "{name}: {help}");
        }
        let refused = Cli::try_from_args(["esimdash", "--no-cache", "orders"]);
        assert!(refused.is_err(), "--no-cache is the dashboard's alone");
    }

    /// Every option and argument of every command says what it is.
    #[test]
    fn every_option_has_a_description() {
        fn check(command: &clap::Command, path: &str) {
            for arg in command.get_arguments() {
                assert!(arg.get_help().is_some(), "{path} {}", arg.get_id());
            }
            for sub in command.get_subcommands() {
                check(sub, &format!("{path} {}", sub.get_name()));
            }
        }
        let mut definition = Cli::definition();
        definition.build();
        check(&definition, "esimdash");
    }
}
