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

/// A key as the server reads it. Made only by `pair` and `legacy`, which take the credential as
/// given and keep it as sent: without the whitespace around it.
#[derive(Debug, Clone)]
pub struct Credentials {
    mode: AuthMode,
    /// Needed in `Pair` mode only.
    access_code: Option<String>,
    secret_key: SecretString,
}

/// What surrounds a credential but is not part of it: HTTP strips spaces and tabs around a
/// header's value, and a pasted key or a `secret_key_cmd` brings a line's end.
pub fn trimmed(credential: &str) -> &str {
    credential.trim_matches([' ', '\t', '\r', '\n'])
}

impl Credentials {
    pub fn pair(access_code: &str, secret_key: &str) -> Self {
        Self {
            mode: AuthMode::Pair,
            access_code: Some(trimmed(access_code).to_string()),
            secret_key: trimmed(secret_key).into(),
        }
    }

    pub fn legacy(mode: AuthMode, secret_key: &str) -> Self {
        Self {
            mode,
            access_code: None,
            secret_key: trimmed(secret_key).into(),
        }
    }

    pub fn mode(&self) -> AuthMode {
        self.mode
    }

    pub(crate) fn secret(&self) -> &SecretString {
        &self.secret_key
    }

    /// The access code as sent (pair mode), for people and logs: never a guard's key.
    pub fn access_code(&self) -> Option<&str> {
        self.access_code.as_deref()
    }

    /// The account these credentials reach, as every guard, store and file name knows it: the
    /// secret is what the server authenticates in every mode (the pair's access code only
    /// names it), so one secret sent as a pair, as `x-api-key` or as a bearer token is one
    /// account, however it was spelled, and two secrets are two accounts, legacy or not. A
    /// one-way hash, so that no file name or trail line holds the secret.
    pub fn account(&self) -> String {
        use sha2::{Digest, Sha256};
        let mut hash = Sha256::new();
        hash.update(b"esimdash account of a secret key\0");
        hash.update(self.secret_key.expose_secret().as_bytes());
        format!("key-{}", esimdash_domain::text::hex(&hash.finalize()[..12]))
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

    use proptest::prelude::*;

    /// What a paste or a command may put around a credential.
    fn around() -> impl Strategy<Value = String> {
        proptest::collection::vec(prop_oneof![Just(' '), Just('\t'), Just('\n'), Just('\r')], 0..4)
            .prop_map(|cs| cs.into_iter().collect())
    }

    /// The credential `secret` (of access code `code`) as a user may give it: in any mode,
    /// with whitespace around either part.
    fn spelled(code: &str, secret: &str, mode: u8, pads: &[String; 4]) -> Credentials {
        let secret = format!("{}{secret}{}", pads[0], pads[1]);
        match mode % 3 {
            0 => Credentials::pair(&format!("{}{code}{}", pads[2], pads[3]), &secret),
            1 => Credentials::legacy(AuthMode::ApiKey, &secret),
            _ => Credentials::legacy(AuthMode::Bearer, &secret),
        }
    }

    proptest! {
        #[test]
        fn every_spelling_of_one_account_is_one_identity_and_two_accounts_are_two(
            secret in "[A-Za-z0-9_]{1,24}",
            other in "[A-Za-z0-9_]{1,24}",
            modes in (0u8..3, 0u8..3),
            pads in [around(), around(), around(), around()],
        ) {
            let plain: [String; 4] = Default::default();
            let as_typed = spelled("ak_1", &secret, modes.0, &plain);
            let pasted = spelled("ak_1", &secret, modes.1, &pads);
            prop_assert_eq!(as_typed.account(), pasted.account());
            // What is sent is what the server reads: the same headers as typed plainly.
            let plainly = spelled("ak_1", &secret, modes.1, &plain);
            prop_assert_eq!(pasted.headers().unwrap(), plainly.headers().unwrap());
            if other != secret {
                prop_assert_ne!(spelled("ak_1", &other, modes.1, &pads).account(), as_typed.account());
            }
        }
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
