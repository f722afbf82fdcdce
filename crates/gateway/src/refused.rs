//! A request the gateway refuses, or fails, before anything is paid: its status and the
//! contract's `{"error": …}` (with the figures a cap refusal adds, and the time to wait
//! before trying again). Every rule says no with this one type; the HTTP layer turns it into
//! the answer (`server::answer`).

use crate::agents::Agent;
use esimdash_api::ApiError;
use esimdash_domain::role::Deed;
use http::StatusCode;
use std::time::Duration;

#[derive(Debug)]
pub(crate) struct Refused {
    pub status: StatusCode,
    /// `{"error": …}` and any fields beside it.
    pub body: serde_json::Value,
    pub retry_after: Option<Duration>,
}

impl Refused {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Refused {
        Refused {
            status,
            body: serde_json::json!({ "error": message.into() }),
            retry_after: None,
        }
    }

    pub(crate) fn bad_request(message: impl Into<String>) -> Refused {
        Refused::new(StatusCode::BAD_REQUEST, message)
    }

    pub(crate) fn not_found() -> Refused {
        Refused::new(StatusCode::NOT_FOUND, "Not found")
    }

    /// Asked to wait this long before trying again (429).
    pub(crate) fn wait(message: impl Into<String>, wait: Duration) -> Refused {
        Refused {
            retry_after: Some(wait),
            ..Refused::new(StatusCode::TOO_MANY_REQUESTS, message)
        }
    }

    /// The role does not allow the deed (the permission table, `esimdash_domain::role`).
    pub(crate) fn forbidden(agent: &Agent, deed: Deed, more: &str) -> Refused {
        Refused::new(
            StatusCode::FORBIDDEN,
            format!(
                "agent {} ({} role) may not {}{more}",
                agent.name,
                agent.role.name(),
                deed.words()
            ),
        )
    }

    /// The upstream could not be asked what the request needed.
    pub(crate) fn upstream(e: &ApiError) -> Refused {
        tracing::warn!("upstream: {e}");
        Refused::new(
            StatusCode::BAD_GATEWAY,
            format!("The gateway could not reach the API: {e}"),
        )
    }

    pub(crate) fn store(e: &crate::store::StoreError) -> Refused {
        tracing::error!("{e}");
        Refused::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "The gateway's store failed; nothing was paid. Try again",
        )
    }
}
