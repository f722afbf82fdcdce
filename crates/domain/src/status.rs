//! Order and eSIM status (docs/api-contract.md): lowercase strings; unknown values are kept as they are.

use serde::{Deserialize, Serialize};
use std::fmt;

/// An order or eSIM status. `Other` keeps a value this version does not know.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum Status {
    Pending,
    GotResource,
    InUse,
    Suspended,
    UsedUp,
    UsedExpired,
    UnusedExpired,
    Cancel,
    Revoked,
    Other(String),
}

/// The filter value that matches every status in which an eSIM can be used (ours).
pub const ACTIVE_FILTER: &str = "active";

impl Status {
    /// Every known status, in the order of docs/api-contract.md.
    pub const KNOWN: [Status; 9] = [
        Status::Pending,
        Status::GotResource,
        Status::InUse,
        Status::Suspended,
        Status::UsedUp,
        Status::UsedExpired,
        Status::UnusedExpired,
        Status::Cancel,
        Status::Revoked,
    ];

    pub fn parse(s: &str) -> Self {
        Self::KNOWN
            .into_iter()
            .find(|k| k.as_str().eq_ignore_ascii_case(s))
            .unwrap_or_else(|| Status::Other(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        match self {
            Status::Pending => "pending",
            Status::GotResource => "got_resource",
            Status::InUse => "in_use",
            Status::Suspended => "suspended",
            Status::UsedUp => "used_up",
            Status::UsedExpired => "used_expired",
            Status::UnusedExpired => "unused_expired",
            Status::Cancel => "cancel",
            Status::Revoked => "revoked",
            Status::Other(s) => s,
        }
    }

    /// Matched by the `active` filter: the profile exists and may be used.
    pub fn is_active(&self) -> bool {
        matches!(self, Status::GotResource | Status::InUse | Status::Suspended)
    }
}

/// What a list is filtered by: every status, the usable ones (`active`), or one status.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum StatusFilter {
    #[default]
    All,
    Active,
    Is(Status),
}

impl StatusFilter {
    /// The choices a picker offers: all, active, then each known status.
    pub fn choices() -> Vec<StatusFilter> {
        let mut choices = vec![StatusFilter::All, StatusFilter::Active];
        choices.extend(Status::KNOWN.into_iter().map(StatusFilter::Is));
        choices
    }

    /// From a command line or config value: `all`, `active`, or a status (unknown ones kept).
    pub fn parse(text: &str) -> StatusFilter {
        let text = text.trim();
        if text.is_empty() || text.eq_ignore_ascii_case("all") {
            StatusFilter::All
        } else if text.eq_ignore_ascii_case(ACTIVE_FILTER) {
            StatusFilter::Active
        } else {
            StatusFilter::Is(Status::parse(text))
        }
    }

    /// The filter a `status` query parameter names, to the letter: exactly `active`, exactly a
    /// status as the API writes it, or any other text kept as it is and sent as it is (the
    /// server decides what it means). A command's `--status` is sent as typed.
    pub fn exact(text: &str) -> StatusFilter {
        if text == ACTIVE_FILTER {
            return StatusFilter::Active;
        }
        let known = Status::KNOWN.into_iter().find(|k| k.as_str() == text);
        StatusFilter::Is(known.unwrap_or_else(|| Status::Other(text.to_string())))
    }

    /// The `status` query parameter as sent; none for every status.
    pub fn param(&self) -> Option<&str> {
        match self {
            StatusFilter::All => None,
            StatusFilter::Active => Some(ACTIVE_FILTER),
            StatusFilter::Is(s) => Some(s.as_str()),
        }
    }

    /// The `status` query parameter, if any.
    pub fn query(&self) -> Option<String> {
        self.param().map(str::to_string)
    }

    pub fn label(&self) -> &str {
        match self {
            StatusFilter::All => "all",
            StatusFilter::Active => ACTIVE_FILTER,
            StatusFilter::Is(s) => s.as_str(),
        }
    }

    pub fn matches(&self, status: &Status) -> bool {
        match self {
            StatusFilter::All => true,
            StatusFilter::Active => status.is_active(),
            StatusFilter::Is(s) => s == status,
        }
    }
}

/// A `status` parameter's text, to the letter (`StatusFilter::exact`).
impl From<&str> for StatusFilter {
    fn from(text: &str) -> Self {
        StatusFilter::exact(text)
    }
}

impl From<Status> for StatusFilter {
    fn from(status: Status) -> Self {
        StatusFilter::Is(status)
    }
}

impl From<String> for Status {
    fn from(s: String) -> Self {
        Status::parse(&s)
    }
}

impl From<Status> for String {
    fn from(s: Status) -> Self {
        s.as_str().to_string()
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_values_are_kept_and_active_is_a_filter() {
        assert_eq!(Status::parse("IN_USE"), Status::InUse);
        assert_eq!(Status::parse("teleported").as_str(), "teleported");
        assert!(StatusFilter::parse("active").matches(&Status::Suspended));
        assert!(!StatusFilter::parse("active").matches(&Status::Cancel));
        assert!(StatusFilter::parse("cancel").matches(&Status::Cancel));
        assert_eq!(StatusFilter::parse("Active"), StatusFilter::Active);
        assert_eq!(StatusFilter::parse("in_use").query().as_deref(), Some("in_use"));
        assert!(StatusFilter::Active.matches(&Status::InUse) && !StatusFilter::Active.matches(&Status::Cancel));
        assert_eq!(StatusFilter::choices().len(), 11);
        assert_eq!(StatusFilter::exact("IN_USE").param(), Some("IN_USE"), "sent as typed");
        assert_eq!(StatusFilter::exact("all").param(), Some("all"));
        assert_eq!(StatusFilter::exact("in_use"), StatusFilter::Is(Status::InUse));
        assert_eq!(StatusFilter::exact("active"), StatusFilter::Active);
        assert_eq!(StatusFilter::All.param(), None);
        let s: Status = serde_json::from_str("\"brand_new\"").unwrap();
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"brand_new\"");
    }
}
