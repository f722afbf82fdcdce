//! Agents: who may use the gateway, with which role and daily cap, known by a token of their
//! own. A token is a pair like the API's (an access code and a secret key), so the dashboard
//! and every command take it unchanged; only a hash of its secret is kept.

use esimdash_domain::text::hex;
use rust_decimal::Decimal;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// What an agent may do: the one permission table, shared with the dashboard and the docs.
pub use esimdash_domain::role::{Deed, Role};

/// An agent as the store keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Agent {
    pub name: String,
    pub access_code: String,
    /// SHA-256 of the secret key, hex.
    pub secret_hash: String,
    pub role: Role,
    /// USD a UTC day; `None`: no cap of its own (the team's still holds).
    pub daily_cap: Option<Decimal>,
    pub created_at: i64,
    pub revoked_at: Option<i64>,
}

impl Agent {
    /// Whether `secret` is this agent's, compared in constant time.
    pub fn holds(&self, secret: &str) -> bool {
        let hash = hash_secret(secret);
        bool::from(hash.as_bytes().ct_eq(self.secret_hash.as_bytes()))
    }

    pub fn is_revoked(&self) -> bool {
        self.revoked_at.is_some()
    }
}

/// A new agent's token, shown once.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Token {
    pub access_code: String,
    pub secret_key: String,
}

impl Token {
    /// 128 random bits name the agent's key record, 256 its secret: the secret is never
    /// guessed, so one round of SHA-256 keeps it as safe as a slow password hash would.
    pub fn new() -> Result<Self, String> {
        Ok(Self {
            access_code: format!("gw_{}", random_hex(16)?),
            secret_key: format!("gs_{}", random_hex(32)?),
        })
    }
}

pub fn hash_secret(secret: &str) -> String {
    hex(&Sha256::digest(secret.as_bytes()))
}

fn random_hex(bytes: usize) -> Result<String, String> {
    let mut buf = vec![0u8; bytes];
    getrandom::fill(&mut buf).map_err(|e| format!("the system's random source failed: {e}"))?;
    Ok(hex(&buf))
}

/// A name an agent can be told by: letters, digits, `.`, `_`, `-` and `@`, 1 to 64 of them.
pub fn check_name(name: &str) -> Result<(), String> {
    let fine = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@');
    if name.is_empty() || name.len() > 64 || !name.chars().all(fine) {
        return Err(format!(
            "{name:?} is no agent name: use 1 to 64 letters, digits, '.', '_', '-' or '@'"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_holds_its_own_secret_only() {
        let token = Token::new().unwrap();
        let agent = Agent {
            name: "ana".into(),
            access_code: token.access_code.clone(),
            secret_hash: hash_secret(&token.secret_key),
            role: Role::SUPPORT,
            daily_cap: None,
            created_at: 0,
            revoked_at: None,
        };
        assert!(agent.holds(&token.secret_key));
        assert!(!agent.holds("gs_0"));
        assert!(!agent.holds(&agent.secret_hash), "the hash is not the secret");
        assert_ne!(Token::new().unwrap().secret_key, token.secret_key);
    }

    #[test]
    fn names_are_plain() {
        assert!(check_name("ana.m@acme").is_ok());
        assert!(check_name("").is_err());
        assert!(check_name("a b").is_err());
        assert!(check_name("ä").is_err());
    }
}
