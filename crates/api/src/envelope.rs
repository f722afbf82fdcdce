//! The answers' envelopes around a record, as the client unwraps them.

use esimdash_domain::model::{Plan, Profile};
use esimdash_domain::money;
use rust_decimal::Decimal;
use serde::Deserialize;

/// `{"data": Plan}`, the answer to `?slug=`.
#[derive(Debug, Deserialize)]
pub(crate) struct PlanEnvelope {
    pub data: Plan,
}

/// `{"profile": Profile}`, the answer to GET and PATCH of the profile.
#[derive(Debug, Deserialize)]
pub(crate) struct ProfileEnvelope {
    pub profile: Profile,
}

/// `{"balanceUsd": "…"}`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct BalanceEnvelope {
    #[serde(default, deserialize_with = "money::de_opt")]
    pub balance_usd: Option<Decimal>,
}
