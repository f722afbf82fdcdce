//! The client of the Reseller eSIM Sales API v1: HTTP, authentication, pacing, retries and the
//! serde model; `pages`, a whole list read in order; `changes`, every request that changes the
//! account on the server (payments, profile), with what guards them. It knows nothing of
//! terminals; every failure is one `ApiError`. With it: the audit trail that records every payment
//! before it is sent (`audit`), the files it keeps private, and the signals that stop a process
//! (a resend is never started after one).

#![warn(clippy::too_many_lines)]

pub mod audit;
mod base_url;
pub mod calls;
mod changes;
mod client;
mod credentials;
mod envelope;
mod error;
mod lock;
mod pacing;
pub mod pages;
mod payment;
pub mod relay;
pub mod requests;
pub mod scrub;
mod seat;
mod settle;
mod shared_log;
pub mod signals;
mod sweep;
mod tls;
mod transport;
pub mod webhook;

pub use base_url::{BaseUrl, BaseUrlError};
pub use changes::{Delivery, Paid, describe_earlier, payments_in_flight};
pub use client::{Client, ClientOptions, EsimsRead, EsimsTap, Found, Lookup, ORDERS, PROFILE_UPDATE, tran_no_order};
pub use credentials::{AuthMode, Credentials, trimmed as trimmed_credential};
pub use error::{ApiError, Endpoint, RedirectRefused};
/// The API's records, as the domain keeps them (the inventory reads them without the client).
pub use esimdash_domain::model;
pub use esimdash_domain::timestamp::Timestamp;
pub use lock::AccountLock;
pub use pacing::Pacer;
pub use payment::{PLACE_ORDER, Payment, Proposed, TOPUP, fresh_key};
pub use settle::{Found as SettledAs, Listener, Notice, REPEAT_WINDOW, Settled, counts_as_repeated, pays_the_same};
pub use sweep::{Later, Reach, Searched, Stop as SweepStop, Sweep};
pub use tls::{provider as tls_provider, read_pem_certificates};
