//! What a one-shot command can fail with, the exit code each gives, and how scripts read it
//! (`--json`).

use esimdash_api::ApiError;
use esimdash_api::signals::Stop;
use esimdash_domain::iccid::Iccid;
use esimdash_domain::money::format_amount;
use esimdash_front::config::ConfigError;
use serde_json::json;

/// What a one-shot command can fail with; each maps to its own exit code (docs/commands.md).
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Api(#[from] ApiError),
    #[error("{0}")]
    Usage(String),
    #[error("{0}")]
    NotFound(String),
    /// An ICCID not in the pages of the list read: "not in this account" only when every
    /// page was read (`Searched::proves_absence`), else not known (exit 6).
    #[error("{}", .searched.describe(.iccid))]
    Missed {
        iccid: Iccid,
        searched: esimdash_api::Searched,
    },
    #[error("{0}")]
    Qr(String),
    /// Not sent: the plan is not offered, the balance is short, the user said no.
    #[error("{0}")]
    Refused(String),
    /// An eSIM whose state cannot take data (`Class::cannot_take_data`): no top-up is paid.
    /// `state` is the class's key, for scripts.
    #[error("{message}")]
    CannotTakeData {
        message: String,
        state: Option<&'static str>,
    },
    /// No answer came to a request that moves money; what the order list showed is said.
    #[error("{0}")]
    OutcomeUnknown(String),
    /// Placed, for another total than the one confirmed (exit 7): the order is told on stdout
    /// as usual, this on stderr.
    #[error("{}", .0.sentence())]
    ChargedOther(esimdash_domain::purchase::ChargedOther),
    /// Rows of a bulk file placed for another total than the one confirmed (exit 7).
    #[error(
        "{0} row(s) were placed for another total than the one confirmed (each said in the result): check them with your provider"
    )]
    ChargedOtherRows(usize),
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The team gateway could not start, or its store refused or failed.
    #[error("{0}")]
    Gateway(String),
    /// Failed before the payment was sent (or refused by the server), so no money moved: the
    /// error, then those words. Exit code and JSON kind are the error's.
    #[error("{}", esimdash_front::purchase::nothing_moved(&.error.to_string(), .nothing))]
    NothingMoved {
        error: Box<CommandError>,
        nothing: &'static str,
    },
    /// A stop signal (Ctrl-C, SIGTERM, a hang-up) while no payment was in flight: stopped at
    /// once, and nothing half-written is left.
    #[error("interrupted ({}): stopped before the end; no payment was in flight and no file was left half-written", .0.name())]
    Interrupted(Stop),
    /// A stop signal between the rows of a bulk file, after the payment in flight was answered
    /// and recorded: what was done is said.
    #[error("{1}")]
    Stopped(Stop, String),
    /// A check's state other than OK, its line printed: the exit status is the state.
    #[error("check state {0}")]
    Check(u8),
}

impl From<esimdash_front::quote::QuoteError> for CommandError {
    fn from(e: esimdash_front::quote::QuoteError) -> Self {
        use esimdash_front::quote::QuoteError;
        match e {
            QuoteError::Api(e) => CommandError::Api(e),
            QuoteError::NotFound(m) => CommandError::NotFound(m),
            QuoteError::CannotTakeData { message, state } => CommandError::CannotTakeData { message, state },
            QuoteError::Refused(m) => CommandError::Refused(m),
            QuoteError::Wrong(m) => CommandError::Usage(m),
        }
    }
}

impl From<esimdash_front::session::SessionError> for CommandError {
    fn from(e: esimdash_front::session::SessionError) -> Self {
        use esimdash_front::session::SessionError;
        match e {
            SessionError::Config(e) => CommandError::Config(e),
            SessionError::Client(e) => CommandError::Api(e),
            other @ (SessionError::NoDemoAccount(_) | SessionError::DemoAddress(_)) => {
                CommandError::Usage(other.to_string())
            }
        }
    }
}

/// The exit status after the server refused the credentials, for a command and the dashboard
/// alike.
pub const EXIT_CREDENTIALS_REFUSED: u8 = 3;

/// The exit status of a search that stopped before it could tell whether the account has the
/// eSIM: a script must not take it for "not in this account" (1).
pub const EXIT_NOT_KNOWN: u8 = 6;
/// A payment placed for another total than the one confirmed.
pub const EXIT_CHARGED_OTHER: u8 = 7;

impl CommandError {
    /// 1 API or other error, 2 usage, configuration or a write in a read-only session, 3 credentials refused, 4 rate limited,
    /// 5 network or timeout, 6 not found in the pages read but not every page read.
    pub fn exit_code(&self) -> u8 {
        match self {
            CommandError::NothingMoved { error, .. } => error.exit_code(),
            CommandError::Config(_) | CommandError::Usage(_) | CommandError::CannotTakeData { .. } => 2,
            CommandError::Api(ApiError::ReadOnly { .. } | ApiError::Repeat { .. }) => 2,
            CommandError::Api(e) if e.is_auth() => EXIT_CREDENTIALS_REFUSED,
            CommandError::Api(ApiError::RateLimited { .. }) => 4,
            CommandError::Api(ApiError::Network { .. } | ApiError::Timeout { .. }) => 5,
            CommandError::OutcomeUnknown(_) => 5,
            CommandError::ChargedOther(_) | CommandError::ChargedOtherRows(_) => EXIT_CHARGED_OTHER,
            CommandError::Interrupted(stop) | CommandError::Stopped(stop, _) => stop.exit_code(),
            CommandError::Check(state) => *state,
            CommandError::Missed { searched, .. } if !searched.proves_absence() => EXIT_NOT_KNOWN,
            _ => 1,
        }
    }

    /// The error as scripts read it from stderr with `--json`.
    pub fn to_json(&self) -> serde_json::Value {
        let cause = match self {
            CommandError::NothingMoved { error, .. } => error.as_ref(),
            other => other,
        };
        let (kind, status) = match cause {
            CommandError::NothingMoved { .. } => ("refused", None),
            CommandError::Config(_) => ("config", None),
            CommandError::Usage(_) => ("usage", None),
            CommandError::NotFound(_) => ("not_found", None),
            CommandError::Missed { searched, .. } if searched.proves_absence() => ("not_found", None),
            CommandError::Missed { .. } => ("search_incomplete", None),
            CommandError::Qr(_) => ("qr", None),
            CommandError::Refused(_) => ("refused", None),
            CommandError::CannotTakeData { .. } => ("cannot_take_data", None),
            CommandError::OutcomeUnknown(_) => ("outcome_unknown", None),
            CommandError::ChargedOther(_) | CommandError::ChargedOtherRows(_) => ("charged_other", None),
            CommandError::Io(_) => ("io", None),
            CommandError::Gateway(_) => ("gateway", None),
            CommandError::Interrupted(_) | CommandError::Stopped(..) => ("interrupted", None),
            CommandError::Check(_) => ("check", None),
            CommandError::Api(e) => (e.kind(), e.status()),
        };
        let mut error = json!({ "kind": kind, "message": self.to_string() });
        if let Some(status) = status {
            error["status"] = json!(status);
        }
        if let CommandError::Api(ApiError::RateLimited { retry_after, .. }) = cause {
            error["retryAfterSeconds"] = json!(retry_after.as_secs());
        }
        if let CommandError::CannotTakeData { state: Some(state), .. } = cause {
            error["state"] = json!(state);
        }
        if let CommandError::Missed { searched, .. } = cause {
            error["searched"] = json!({
                "pagesRead": searched.pages_read,
                "pages": searched.pages,
                "esimsSeen": searched.esims_seen,
            });
            if let Some(wait) = searched.retry_after() {
                error["retryAfterSeconds"] = json!(wait.as_secs());
            }
        }
        if let CommandError::ChargedOther(other) = cause {
            error["charged"] = json!(format_amount(other.charged));
            error["confirmed"] = json!(format_amount(other.confirmed));
            error["moneyMoved"] = json!(true);
        }
        match self {
            // Scripts need not parse the words to know whether money moved.
            CommandError::NothingMoved { .. } => error["moneyMoved"] = json!(false),
            CommandError::OutcomeUnknown(_) => error["moneyMoved"] = json!("unknown"),
            _ => {}
        }
        json!({ "error": error })
    }

    /// This error, with the words that no money moved (`purchase::NOTHING_…`).
    pub fn nothing_moved(self, nothing: &'static str) -> CommandError {
        CommandError::NothingMoved {
            error: Box::new(self),
            nothing,
        }
    }
}
