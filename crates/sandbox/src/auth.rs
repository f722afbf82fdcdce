//! Who is calling: an access-code + secret-key pair, a legacy secret (`x-api-key` or Bearer), or
//! a portal session cookie. Secrets are stored as SHA-256 digests and compared in constant time.

use super::http::Failure;
use super::seed::{DEMO_KEYS, DEMO_SESSIONS};
use axum::http::{HeaderMap, StatusCode, header};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The name of the portal session cookie (docs/api-contract.md: ours).
pub const SESSION_COOKIE: &str = "esim_session";

struct KeyRecord {
    id: String,
    access_code: Option<String>,
    secret_digest: [u8; 32],
    reseller: usize,
    revoked: bool,
    /// Requests per window for this key (spec: "stored per key").
    rate_limit: u32,
}

struct Session {
    token_digest: [u8; 32],
    reseller: usize,
    rate_limit: u32,
}

/// The authenticated caller, put in the request's extensions for the handlers.
#[derive(Debug, Clone)]
pub struct Caller {
    pub reseller: usize,
    /// The budget the rate limit counts against: one per key or session.
    pub budget: String,
    pub rate_limit: u32,
}

pub struct Keys {
    keys: Vec<KeyRecord>,
    sessions: Vec<Session>,
}

fn digest(secret: &str) -> [u8; 32] {
    Sha256::digest(secret.as_bytes()).into()
}

fn unauthorized() -> Failure {
    Failure::new(StatusCode::UNAUTHORIZED, "Unauthorized")
}

impl Keys {
    /// The demo keys and sessions, each allowed `rate_limit` requests per window.
    pub fn demo(rate_limit: u32) -> Self {
        let keys = DEMO_KEYS
            .iter()
            .map(|k| KeyRecord {
                id: k.access_code.unwrap_or("legacy").to_string(),
                access_code: k.access_code.map(str::to_string),
                secret_digest: digest(k.secret_key),
                reseller: k.reseller,
                revoked: k.revoked,
                rate_limit,
            })
            .collect();
        let sessions = DEMO_SESSIONS
            .iter()
            .map(|(token, reseller)| Session {
                token_digest: digest(token),
                reseller: *reseller,
                rate_limit,
            })
            .collect();
        Self { keys, sessions }
    }

    pub fn resolve(&self, headers: &HeaderMap) -> Result<Caller, Failure> {
        let value = |name| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::trim)
                .filter(|v| !v.is_empty())
        };
        let matches = |k: &&KeyRecord, d: &[u8; 32]| bool::from(k.secret_digest.ct_eq(d));
        let key = if let Some(code) = value("x-access-code") {
            let secret = digest(value("x-secret-key").ok_or_else(unauthorized)?);
            self.keys
                .iter()
                .find(|k| k.access_code.as_deref() == Some(code) && matches(k, &secret))
        } else if let Some(secret) = value("x-api-key").or_else(|| bearer(headers)) {
            let secret = digest(secret);
            self.keys.iter().find(|k| matches(k, &secret))
        } else if let Some(token) = cookie(headers, SESSION_COOKIE) {
            let token = digest(token);
            return self
                .sessions
                .iter()
                .enumerate()
                .find(|(_, s)| bool::from(s.token_digest.ct_eq(&token)))
                .map(|(i, s)| Caller {
                    reseller: s.reseller,
                    budget: format!("session-{i}"),
                    rate_limit: s.rate_limit,
                })
                .ok_or_else(unauthorized);
        } else {
            None
        };
        let key = key.ok_or_else(unauthorized)?;
        if key.revoked {
            return Err(Failure::new(StatusCode::UNAUTHORIZED, "API key revoked or expired"));
        }
        Ok(Caller {
            reseller: key.reseller,
            budget: key.id.clone(),
            rate_limit: key.rate_limit,
        })
    }
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
        .filter(|t| !t.is_empty())
}

fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim())
}
