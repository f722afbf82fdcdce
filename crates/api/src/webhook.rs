//! A webhook the watch's changes are posted to (`watch --webhook URL`), each signed as Stripe
//! signs its events: one header, `Esimdash-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>`,
//! the HMAC taken with the shared secret over `<t>.<body>`. A receiver recomputes it, compares
//! in constant time, and refuses a `t` too far from its clock (a replay). Each change also
//! carries its stable id (`Esimdash-Event-Id`, and `id` in the body): delivery is at least once,
//! so a receiver that sees an id twice has seen it already.
//!
//! The answer must come within 3 s (the receiver queues; a slow one is tried again later), a
//! 2xx is taken, anything else is a failure in words; redirects are not followed (the body
//! would go where a server names).

use secrecy::{ExposeSecret, SecretString};
use std::time::Duration;

/// How long a receiver has to answer.
pub const ANSWER_WITHIN: Duration = Duration::from_secs(3);

/// The signature's header.
pub const SIGNATURE: &str = "esimdash-signature";

/// The change's id's header.
pub const EVENT_ID: &str = "esimdash-event-id";

pub struct Webhook {
    http: reqwest::Client,
    url: url::Url,
    secret: SecretString,
}

impl std::fmt::Debug for Webhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhook")
            .field("url", &self.url.as_str())
            .finish_non_exhaustive()
    }
}

impl Webhook {
    /// A webhook at `url` (http or https), signed with `secret`; https servers verified as the
    /// API's are (the system's roots and `extra_roots`).
    pub fn new(
        url: &str,
        secret: SecretString,
        extra_roots: Vec<rustls::pki_types::CertificateDer<'static>>,
    ) -> Result<Self, String> {
        let url = url::Url::parse(url).map_err(|e| format!("{url:?} is not a URL: {e}"))?;
        if !matches!(url.scheme(), "http" | "https") || url.host().is_none() {
            return Err(format!("{url} is not an http or https address"));
        }
        if secret.expose_secret().trim().is_empty() {
            return Err("the webhook's secret is empty: a receiver could not tell our posts from anyone's".to_string());
        }
        let (tls, _) = super::tls::client_config(extra_roots).map_err(|e| e.to_string())?;
        let http = reqwest::Client::builder()
            .tls_backend_preconfigured(tls)
            .timeout(ANSWER_WITHIN)
            .connect_timeout(ANSWER_WITHIN)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("esimdash/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| e.to_string())?;
        Ok(Self { http, url, secret })
    }

    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    /// Posts `body` (one change, JSON) with its `id`, signed now.
    pub async fn post(&self, id: &str, body: &str) -> Result<(), String> {
        let t = chrono::Utc::now().timestamp();
        let answer = self
            .http
            .post(self.url.clone())
            .header("content-type", "application/json")
            .header(EVENT_ID, id)
            .header(SIGNATURE, signature(&self.secret, t, body))
            .body(body.to_string())
            .send()
            .await
            .map_err(|e| {
                if e.is_timeout() {
                    format!("no answer within {} s", ANSWER_WITHIN.as_secs())
                } else {
                    format!("it could not be reached ({e})")
                }
            })?;
        match answer.status() {
            s if s.is_success() => Ok(()),
            s => Err(format!("it answered {s}")),
        }
    }
}

/// `t=<t>,v1=<hex HMAC-SHA256 of "<t>.<body>" with the secret>`.
pub fn signature(secret: &SecretString, t: i64, body: &str) -> String {
    use hmac::{KeyInit, Mac};
    let mut mac = match hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.expose_secret().as_bytes()) {
        Ok(mac) => mac,
        // An HMAC takes a key of any length: this does not happen.
        Err(_) => return format!("t={t},v1="),
    };
    mac.update(format!("{t}.{body}").as_bytes());
    format!("t={t},v1={}", esimdash_domain::text::hex(&mac.finalize().into_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_is_stripes_scheme_over_the_time_and_the_body() {
        // HMAC-SHA256("whsec", "1700000000.{}") as any HMAC library computes it.
        let sig = signature(&SecretString::from("whsec"), 1_700_000_000, "{}");
        assert_eq!(
            sig, "t=1700000000,v1=7d44587dddbaf4c7f70fef20f48cd594834ffea1641e3ac227b84408298738af",
            "as Python's hmac computes it"
        );
        assert_ne!(
            sig,
            signature(&SecretString::from("whsec"), 1_700_000_001, "{}"),
            "the time is signed"
        );
        assert_ne!(sig, signature(&SecretString::from("other"), 1_700_000_000, "{}"));
        assert!(Webhook::new("ftp://x", SecretString::from("s"), Vec::new()).is_err());
        assert!(Webhook::new("http://127.0.0.1:1/h", SecretString::from(" "), Vec::new()).is_err());
    }
}
