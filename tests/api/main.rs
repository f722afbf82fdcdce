//! API tests in one binary (one link): the contract over real HTTP against the sandbox, the
//! client's behaviour against scripted servers, and decoding of every variant and of hostile
//! bodies.

#[path = "../support/certs.rs"]
mod certs;
mod client_resilience;
mod common;
mod contract_auth;
mod contract_lists;
mod contract_money;
mod contract_plans;
mod contract_profile_errors;
mod contract_rate_limit;
mod decoding;
mod esim_states;
mod hostile_orders;
mod ledger;
#[path = "../support/pages.rs"]
#[allow(dead_code)]
mod pages;
mod tls;
mod transport;
mod writes;
