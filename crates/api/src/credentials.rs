//! API credentials. The secret lives in a `SecretString`: `Debug` prints `[REDACTED]`, and the
//! header that carries it is marked sensitive so that no HTTP-level log shows it either.

use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use secrecy::{ExposeSecret, SecretString};
use std::str::FromStr;

/// How the secret is sent (spec: the pair is preferred; the other two are legacy).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AuthMode {
    #[default]
    Pair,
    ApiKey,
    Bearer,
}

impl AuthMode {
    /// The names a configuration or a command line gives the modes, as `FromStr` reads them.
    pub const NAMES: [&str; 3] = ["pair", "api-key", "bearer"];
}

impl FromStr for AuthMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "pair" => Ok(AuthMode::Pair),
            "api-key" => Ok(AuthMode::ApiKey),
            "bearer" => Ok(AuthMode::Bearer),
            other => Err(format!("unknown auth mode {other:?}: use pair, api-key or bearer")),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Credentials {
    pub mode: AuthMode,
    /// Needed in `Pair` mode only.
    pub access_code: Option<String>,
    pub secret_key: SecretString,
}

impl Credentials {
    pub fn pair(access_code: &str, secret_key: &str) -> Self {
        Self {
            mode: AuthMode::Pair,
            access_code: Some(access_code.to_string()),
            secret_key: secret_key.into(),
        }
    }

    pub fn legacy(mode: AuthMode, secret_key: &str) -> Self {
        Self {
            mode,
            access_code: None,
            secret_key: secret_key.into(),
        }
    }

    /// The headers every request carries. Errors never quote the secret.
    pub(crate) fn headers(&self) -> Result<HeaderMap, String> {
        let secret = self.secret_key.expose_secret();
        let sensitive = |value: &str, what: &str| {
            HeaderValue::from_str(value)
                .map(|mut v| {
                    v.set_sensitive(true);
                    v
                })
                .map_err(|_| format!("the {what} has characters that cannot be sent in an HTTP header"))
        };
        if secret.is_empty() {
            return Err("the secret key is empty".to_string());
        }
        let mut headers = HeaderMap::new();
        match self.mode {
            AuthMode::Pair => {
                let code =
                    self.access_code.as_deref().filter(|c| !c.is_empty()).ok_or(
                        "the access code is missing (needed with the access-code + secret-key pair)".to_string(),
                    )?;
                headers.insert(
                    HeaderName::from_static("x-access-code"),
                    sensitive(code, "access code")?,
                );
                headers.insert(
                    HeaderName::from_static("x-secret-key"),
                    sensitive(secret, "secret key")?,
                );
            }
            AuthMode::ApiKey => {
                headers.insert(HeaderName::from_static("x-api-key"), sensitive(secret, "secret key")?);
            }
            AuthMode::Bearer => {
                headers.insert(AUTHORIZATION, sensitive(&format!("Bearer {secret}"), "secret key")?);
            }
        }
        Ok(headers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_secret() {
        let c = Credentials::pair("ak_demo_acme", "sk_top_secret");
        let shown = format!("{c:?} {:?}", c.headers().unwrap());
        assert!(!shown.contains("sk_top_secret"), "{shown}");
        assert!(shown.contains("ak_demo_acme") || shown.contains("Sensitive"));
    }

    #[test]
    fn each_mode_sends_its_headers() {
        let h = Credentials::legacy(AuthMode::Bearer, "s").headers().unwrap();
        assert_eq!(h.get(AUTHORIZATION).unwrap(), "Bearer s");
        let h = Credentials::legacy(AuthMode::ApiKey, "s").headers().unwrap();
        assert_eq!(h.get("x-api-key").unwrap(), "s");
        let err = Credentials::pair("a", "bad\nsecret").headers().unwrap_err();
        assert!(!err.contains("bad"), "{err}");
        assert!(Credentials::legacy(AuthMode::Pair, "s").headers().is_err());
    }
}
