//! The team gateway: a server of the API v1 contract that a support team's seats talk to, each
//! with a token of its own, while the reseller's key stays in this one process.
//!
//! Two layers. `server` serves, signs agents in and turns answers and refusals into responses;
//! under it, with no HTTP: who may do what (`agents`, the permission table of
//! `esimdash_domain::role`), payments held against the daily caps and journalled before they
//! are sent (`payments`, `sending`, `settling`, `store`), reads passed on under one upstream
//! pace (`relaying`, `reads`, `lookup`), and what every rule reads (`state`).

#![warn(clippy::too_many_lines)]

pub mod agents;
pub mod config;
mod counters;
mod index;
mod lookup;
mod metrics;
mod payments;
mod reads;
mod refused;
mod relaying;
mod requests;
mod sending;
mod server;
mod settling;
mod sign_in;
mod state;
pub mod store;
mod tls;

pub use config::Settings;
pub use server::{Assistant, Metrics, Running, StartError, start, start_with};
pub use store::Store;

/// Now, in Unix seconds.
pub(crate) fn now() -> i64 {
    chrono::Utc::now().timestamp()
}
