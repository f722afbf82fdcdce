//! The client of the Reseller eSIM Sales API v1: HTTP, authentication, pacing, retries and the
//! serde model. It knows nothing of terminals; every failure is one `ApiError`.

mod base_url;
mod client;
mod credentials;
mod error;
mod lenient;
mod lock;
pub mod model;
mod pacing;
mod settle;
mod timestamp;
mod writes;

pub use base_url::{BaseUrl, BaseUrlError};
pub use client::{Client, ClientOptions, Found, Lookup, PROFILE_UPDATE};
pub use credentials::{AuthMode, Credentials};
pub use error::{ApiError, Endpoint, RedirectRefused};
pub use pacing::Pacer;
pub use settle::{Found as SettledAs, Listener, Notice, REPEAT_WINDOW, Settled};
pub use timestamp::Timestamp;
pub use writes::{Delivery, PLACE_ORDER, Paid, Payment, Spend, TOPUP, payments_in_flight};
