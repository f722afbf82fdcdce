//! One error type for every API call, each variant a sentence a screen can show as it is.

use std::fmt;
use std::time::Duration;

/// Which call failed: method and path, never the query (it may hold a customer's search text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    pub method: &'static str,
    pub path: &'static str,
}

impl Endpoint {
    pub const fn new(method: &'static str, path: &'static str) -> Self {
        Self { method, path }
    }
}

impl fmt::Display for Endpoint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.method, self.path)
    }
}

#[derive(Debug, Clone, thiserror::Error, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
pub enum ApiError {
    #[error(
        "{endpoint}: the API did not accept the credentials (401: {message}). Check the access code and secret key."
    )]
    Unauthorized { endpoint: Endpoint, message: String },
    #[error(
        "{endpoint}: the API key is revoked or expired (401). Create a new key pair in the reseller portal and update the configuration."
    )]
    Revoked { endpoint: Endpoint },
    #[error("{endpoint}: rate limited by the API; try again in {} s.", whole_seconds(*retry_after))]
    RateLimited { endpoint: Endpoint, retry_after: Duration },
    #[error("{endpoint}: the API answered {status}: {message}")]
    Api {
        endpoint: Endpoint,
        status: u16,
        message: String,
    },
    #[error("{endpoint}: could not read the API's answer (HTTP {status}): {detail}. The body starts: {excerpt:?}")]
    Decode {
        endpoint: Endpoint,
        status: u16,
        detail: String,
        excerpt: String,
    },
    #[error("{endpoint}: could not reach the API at {host}: {detail}{}",
        if *outcome_unknown { "; the connection dropped after the request was sent, so it may or may not have been carried out" } else { "" })]
    Network {
        endpoint: Endpoint,
        host: String,
        detail: String,
        outcome_unknown: bool,
    },
    #[error("{endpoint}: no answer from the API within {} s{}", whole_seconds(*after),
        if *outcome_unknown { "; the request may or may not have been carried out" } else { "" })]
    Timeout {
        endpoint: Endpoint,
        after: Duration,
        outcome_unknown: bool,
    },
    #[error("the API client could not be set up: {0}")]
    Setup(String),
    #[error("{endpoint}: not sent: this session is read-only ({setting}).")]
    ReadOnly { endpoint: Endpoint, setting: String },
    /// The server answered with a redirect that is not followed (docs/api-contract.md, "Transport").
    /// Nothing was sent to `to`.
    #[error("{endpoint}: the API at {from} redirected to {to}: {}", refused.reason(from))]
    Redirected {
        endpoint: Endpoint,
        from: String,
        to: String,
        refused: RedirectRefused,
        /// The redirect's status: after a write, 302 and 303 may follow a payment carried out.
        status: u16,
    },
    /// A payment sent again under its key is still being handled by the API (409): it reached
    /// the server, and its outcome is not known yet.
    #[error(
        "{endpoint}: the API still has this payment in progress; its outcome is not known yet and is settled at the next start"
    )]
    InProgress { endpoint: Endpoint },
    #[error("{endpoint}: not sent: the payment lock {path} cannot be taken ({detail}).")]
    Lock {
        endpoint: Endpoint,
        path: String,
        detail: String,
    },
    /// The same payment was placed (or may have been) minutes ago; it is sent again only after
    /// a second, explicit confirmation.
    #[error(
        "{endpoint}: not sent: {earlier}. The same payment again needs a second confirmation: add --again to pay it a second time"
    )]
    Repeat { endpoint: Endpoint, earlier: String },
    /// After a lost answer, the order list shows more than one new order that could be this
    /// payment: none is claimed as its own.
    #[error(
        "{endpoint}: the order list shows {} new orders that could each be this payment ({}); esimdash cannot tell which, so check them in Orders",
        orders.len(), orders.join(", ")
    )]
    Ambiguous { endpoint: Endpoint, orders: Vec<String> },
    #[error("{endpoint}: not sent: the audit trail {path} cannot be written ({detail}).")]
    Audit {
        endpoint: Endpoint,
        path: String,
        detail: String,
    },
}

/// Why a redirect was not followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectRefused {
    /// Another scheme, host or port: credentials go only to the API's own origin.
    OtherOrigin,
    /// A write is never sent again anywhere, whatever the redirect says.
    Write,
    /// More redirects in a row than a server that works needs.
    TooMany,
}

impl RedirectRefused {
    fn reason(self, from: &str) -> String {
        match self {
            RedirectRefused::OtherOrigin => {
                format!("esimdash sends credentials only to {from}, so nothing was sent there")
            }
            RedirectRefused::Write => {
                "a payment or change is never sent again after a redirect, so nothing was sent there".to_string()
            }
            RedirectRefused::TooMany => "too many redirects in a row; esimdash stopped following them".to_string(),
        }
    }
}

pub(crate) fn whole_seconds(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

impl ApiError {
    /// A short stable name, for `--json` errors and logs: the variant's, in snake case
    /// (`RateLimited`: `rate_limited`).
    pub fn kind(&self) -> &'static str {
        self.into()
    }

    /// The HTTP status, when the server answered.
    pub fn status(&self) -> Option<u16> {
        match self {
            ApiError::Unauthorized { .. } | ApiError::Revoked { .. } => Some(401),
            ApiError::RateLimited { .. } => Some(429),
            ApiError::Api { status, .. } | ApiError::Decode { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The server's own message for an API error (`Plan not found`), when there is one.
    pub fn server_message(&self) -> Option<&str> {
        match self {
            ApiError::Api { message, .. } | ApiError::Unauthorized { message, .. } => Some(message),
            _ => None,
        }
    }

    /// Offline or out of the rate budget: a condition of the moment that the whole dashboard
    /// hears of (a countdown, the offline banner), not only the request that met it.
    pub fn is_transient(&self) -> bool {
        matches!(
            self,
            ApiError::RateLimited { .. } | ApiError::Network { .. } | ApiError::Timeout { .. }
        )
    }

    /// True when a request that changes something may have been carried out although no
    /// answer came: it must not be sent again blindly.
    pub fn outcome_unknown(&self) -> bool {
        // A write answered 2xx with a body that cannot be read was carried out, but how is not
        // known (which order, what balance): as unknown as a lost answer.
        match self {
            ApiError::Decode { endpoint, status, .. } => {
                return endpoint.method != "GET" && (200..300).contains(status);
            }
            // A gateway's error: the API behind it may have acted before the gateway gave up.
            ApiError::Api {
                endpoint,
                status: 502 | 504,
                ..
            } => return endpoint.method != "GET",
            // Post-then-redirect: a write answered 302 or 303 may have been carried out.
            ApiError::Redirected {
                refused: RedirectRefused::Write,
                status: 302 | 303,
                ..
            }
            | ApiError::InProgress { .. } => return true,
            _ => {}
        }
        matches!(
            self,
            ApiError::Timeout {
                outcome_unknown: true,
                ..
            } | ApiError::Network {
                outcome_unknown: true,
                ..
            }
        )
    }

    /// Whether a payment sent again under its key was refused as such (docs/api-contract.md's refusals):
    /// the server has no earlier request with that key carried out, so nothing was paid. Any
    /// other failure of a resend (429, 5xx, 401, a redirect) says nothing about the first.
    pub fn refuses_a_resend(&self) -> bool {
        matches!(
            self,
            ApiError::Api {
                status: 400 | 402 | 404,
                ..
            }
        )
    }

    /// Whether no money can have moved: the request that failed was never carried out (not
    /// sent, refused by the client, or answered by the server with a refusal). False for an
    /// unknown outcome, and for a lookup that could not tell.
    pub fn nothing_moved(&self) -> bool {
        !self.outcome_unknown() && !matches!(self, ApiError::Ambiguous { .. })
    }

    pub fn is_auth(&self) -> bool {
        matches!(self, ApiError::Unauthorized { .. } | ApiError::Revoked { .. })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kind_is_the_variant_in_snake_case_as_scripts_read_it() {
        let setup = ApiError::Setup(String::new());
        let read_only = ApiError::ReadOnly {
            endpoint: crate::TOPUP,
            setting: String::new(),
        };
        let limited = ApiError::RateLimited {
            endpoint: crate::TOPUP,
            retry_after: Duration::ZERO,
        };
        assert_eq!(
            [setup.kind(), read_only.kind(), limited.kind()],
            ["setup", "read_only", "rate_limited"]
        );
    }

    const EP: Endpoint = Endpoint::new("GET", "/reseller/orders");

    #[test]
    fn messages_read_as_sentences() {
        let e = ApiError::RateLimited {
            endpoint: EP,
            retry_after: Duration::from_millis(1500),
        };
        assert_eq!(
            e.to_string(),
            "GET /reseller/orders: rate limited by the API; try again in 2 s."
        );
        let e = ApiError::Timeout {
            endpoint: EP,
            after: Duration::from_secs(20),
            outcome_unknown: true,
        };
        assert!(e.to_string().contains("may or may not"));
        let e = ApiError::Api {
            endpoint: EP,
            status: 404,
            message: "Plan not found".into(),
        };
        assert_eq!(
            e.to_string(),
            "GET /reseller/orders: the API answered 404: Plan not found"
        );
    }
}
