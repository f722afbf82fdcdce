//! HTTP plumbing of the sandbox: the `{"error": …}` answer, a JSON body reader with the 64 KiB
//! cap, and query parameters that are validated rather than trusted.

use axum::Json;
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value};

/// Request bodies larger than this are refused with 413 (docs/api-contract.md).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// An error answer: a 4xx status and the message of `{"error": …}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub status: StatusCode,
    pub message: String,
}

impl Failure {
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
        }
    }
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }
}

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        (self.status, Json(serde_json::json!({ "error": self.message }))).into_response()
    }
}

/// A JSON object body. Not JSON: `400 Invalid JSON`; over 64 KiB: `413`.
pub struct JsonObject(pub Map<String, Value>);

impl<S: Send + Sync> FromRequest<S> for JsonObject {
    type Rejection = Failure;

    async fn from_request(req: Request, state: &S) -> Result<Self, Failure> {
        let bytes = Bytes::from_request(req, state).await.map_err(|rejection| {
            if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                Failure::new(StatusCode::PAYLOAD_TOO_LARGE, "Request body too large (limit 64 KiB)")
            } else {
                Failure::bad_request("Could not read the request body")
            }
        })?;
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(Value::Object(map)) => Ok(Self(map)),
            Ok(_) => Err(Failure::bad_request("Invalid JSON: expected an object")),
            Err(_) => Err(Failure::bad_request("Invalid JSON")),
        }
    }
}

impl JsonObject {
    /// A string field; absent, null or blank is `None`; another type is an error naming it.
    pub fn string(&self, name: &str) -> Result<Option<String>, Failure> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.trim().is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.trim().to_string())),
            Some(_) => Err(Failure::bad_request(format!("Invalid {name}: expected a string"))),
        }
    }

    /// The quantity: absent or null is 1; otherwise a whole number from 1 to 10.
    pub fn qty(&self) -> Result<u32, Failure> {
        match self.0.get("qty") {
            None | Some(Value::Null) => Ok(1),
            Some(Value::Number(n)) => n
                .as_u64()
                .filter(|q| (1..=10).contains(q))
                .map(|q| q as u32)
                .ok_or_else(|| Failure::bad_request("Invalid qty: a whole number from 1 to 10")),
            Some(_) => Err(Failure::bad_request("Invalid qty: a whole number from 1 to 10")),
        }
    }
}

/// Query parameters, first occurrence wins.
pub struct Params(Vec<(String, String)>);

impl Params {
    pub fn parse(raw: Option<&str>) -> Self {
        Self(
            form_urlencoded::parse(raw.unwrap_or_default().as_bytes())
                .into_owned()
                .collect(),
        )
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    /// A non-blank value.
    pub fn text(&self, name: &str) -> Option<&str> {
        self.get(name).map(str::trim).filter(|v| !v.is_empty())
    }

    /// A whole number ≥ 1, or the default when absent; anything else is `Invalid <name>`.
    /// Digits too large for a u64 saturate: such a page is simply past the end.
    pub fn positive(&self, name: &str, default: u64) -> Result<u64, Failure> {
        let Some(v) = self.get(name) else { return Ok(default) };
        let invalid = || Failure::bad_request(format!("Invalid {name}"));
        if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
            return Err(invalid());
        }
        let n = v.parse::<u64>().unwrap_or(u64::MAX);
        if n == 0 { Err(invalid()) } else { Ok(n) }
    }
}
