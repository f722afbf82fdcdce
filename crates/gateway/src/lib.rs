//! The team gateway: a server of the API v1 contract that a support team's seats talk to, each
//! with a token of its own, while the reseller's key stays in this one process. It decides who
//! may do what (`agents`), holds every payment against the daily caps and journals it before it
//! is sent (`payments`, `store`), and passes reads on under one upstream pace (`server`).

#![warn(clippy::too_many_lines)]

pub mod agents;
pub mod config;
mod index;
mod lookup;
mod metrics;
mod payments;
mod reads;
mod server;
mod settling;
mod sign_in;
pub mod store;
mod tls;

pub use config::Settings;
pub use server::{Metrics, Running, StartError, start};
pub use store::Store;

/// Now, in Unix seconds.
pub(crate) fn now() -> i64 {
    chrono::Utc::now().timestamp()
}
