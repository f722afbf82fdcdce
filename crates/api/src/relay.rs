//! Requests passed on as they came, for a gateway that speaks the API to others under this
//! client's key: the same pace, TLS, redirect rule and credentials as every other request, and
//! the answer handed back (an error status is an answer to pass on, not a failure): a success
//! whole, an error as the contract's `{"error": …}` with its message alone, cut short; the
//! reseller's secret scrubbed from both in every encoding (`scrub`).

use super::client::{Client, IDEMPOTENCY_KEY};
use super::error::{ApiError, Endpoint};
use super::payment::{PLACE_ORDER, TOPUP};
pub use super::seat::{SEAT_HEADER, Seat};
use reqwest::Method;
use reqwest::header::CONTENT_TYPE;
use secrecy::ExposeSecret;
use std::time::Duration;

/// A team gateway's journal of payments: the agent's own, or everyone's for an admin.
pub const TEAM_JOURNAL: Endpoint = Endpoint::new("GET", "/gateway/journal");

/// The eSIM list, where a gateway answers lookups by ICCID itself.
pub const ESIMS: Endpoint = super::client::ESIMS;

/// Every route of the contract, as a gateway may pass it on.
pub const ROUTES: [Endpoint; 8] = [
    super::client::PLANS,
    super::client::ORDERS,
    super::client::ESIMS,
    super::client::PROFILE,
    super::client::PROFILE_UPDATE,
    super::client::BALANCE,
    TOPUP,
    PLACE_ORDER,
];

/// An answer as the API gave it, the reseller's secret scrubbed from its body.
#[derive(Debug, Clone)]
pub struct Relayed {
    pub status: u16,
    pub content_type: Option<String>,
    pub body: Vec<u8>,
    pub retry_after: Option<Duration>,
    /// The answer echoed the idempotency key sent: the server honours keys.
    pub key_echoed: bool,
    /// The server's stored answer to an earlier request under the same key.
    pub replayed: bool,
}

impl Client {
    /// The team gateway's journal since `since` (a day or an RFC 3339 time), as it sends it:
    /// `{"entries": [...]}`. The API itself has no such route (404).
    pub async fn team_journal(&self, since: Option<&str>) -> Result<serde_json::Value, ApiError> {
        let query: Vec<(&str, &str)> = since.map(|s| ("since", s)).into_iter().collect();
        self.get(TEAM_JOURNAL, &query).await?.json(self.secret())
    }

    /// Sends `endpoint` with the query as the caller wrote it, once (a read is retried as
    /// every read is; a write never). Only the transport can fail.
    pub async fn relay(
        &self,
        endpoint: Endpoint,
        query: Option<&str>,
        body: Option<Vec<u8>>,
        key: Option<&str>,
    ) -> Result<Relayed, ApiError> {
        let mut url = self.base_url().join(endpoint.path);
        url.set_query(query.filter(|q| !q.is_empty()));
        let method = Method::from_bytes(endpoint.method.as_bytes()).unwrap_or(Method::GET);
        let write = super::client::Write {
            key,
            confirmed_repeat: false,
            request: None,
        };
        let response = self.send_within_origin(method, endpoint, url, body, write).await?;
        let headers = response.headers().clone();
        let header = |name| headers.get(name).and_then(|v| v.to_str().ok());
        let status = response.status().as_u16();
        let key_echoed = key.is_some() && header(IDEMPOTENCY_KEY) == key;
        let replayed = header("idempotent-replayed").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"));
        let content_type = header(CONTENT_TYPE.as_str()).map(str::to_string);
        let retry_after = super::transport::retry_after(&headers);
        let body = self
            .read_answer(endpoint, status, response, method_writes(endpoint))
            .await?;
        let secret = self.secret().expose_secret();
        let body = crate::scrub::scrub(&body, secret.as_bytes());
        let (body, content_type) = if status >= 400 {
            (error_body(status, &body, secret), Some("application/json".to_string()))
        } else {
            (body, content_type)
        };
        Ok(Relayed {
            status,
            content_type,
            body,
            retry_after: (status == 429).then_some(retry_after),
            key_echoed,
            replayed,
        })
    }
}

fn method_writes(endpoint: Endpoint) -> bool {
    endpoint.method != "GET"
}

/// The longest error message passed on: what an agent needs is the API's sentence, not a
/// quoted request or a stack trace.
const ERROR_CHARS: usize = 300;

/// An error answer as the agent gets it: the contract's `{"error": message}` and nothing else,
/// the message scrubbed once more as decoded (an escape inside an escape), cut short.
fn error_body(status: u16, body: &[u8], secret: &str) -> Vec<u8> {
    let message = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_string))
        .unwrap_or_else(|| format!("The API answered {status}"));
    let message = crate::scrub::scrub_text(&message, secret);
    let message = esimdash_domain::text::excerpt(message.trim(), ERROR_CHARS);
    serde_json::json!({ "error": message }).to_string().into_bytes()
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_seat_reads_back_what_a_gateway_wrote() {
        let seat = super::Seat {
            name: "ana".into(),
            role: "support".into(),
            cap: Some("10.00".parse().unwrap()),
            left: Some("5.62".parse().unwrap()),
        };
        assert_eq!(super::Seat::parse(&seat.header()), Some(seat));
        assert_eq!(super::Seat::parse("role=viewer"), None);
        assert_eq!(super::Seat::parse("name=vic; role=viewer").unwrap().cap, None);
    }
}
