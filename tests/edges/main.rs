//! esimdash at the edges where users' machines live, through the real binary and counted at
//! the server: redirects and plain http, a payment whose process is killed (SIGKILL), stopped
//! (SIGTERM, Ctrl-C) or hung up (SIGHUP) mid-flight, two processes paying at once, and amounts
//! no client should trust; the inventory index of a reseller of 100 000 eSIMs against a server
//! without the lookup; the team gateway killed mid-payment, and an agent's seat in the header.

#[path = "../support/binary.rs"]
#[allow(dead_code)]
mod binary;
#[path = "../support/certs.rs"]
#[allow(dead_code)]
mod certs;
#[path = "../support/holding_proxy.rs"]
mod holding_proxy;
#[path = "../support/orders.rs"]
mod orders;
#[path = "../support/pages.rs"]
#[allow(dead_code)]
mod pages;
#[path = "../support/tmux.rs"]
mod tmux;
#[path = "../support/tools.rs"]
#[allow(dead_code)]
mod tools;

mod amounts;
mod approvals;
mod budget;
mod bulk;
mod common;
mod crash;
mod gateway;
mod identity;
mod index;
mod keeper;
mod mcp;
mod settling;
mod transport;
mod triage;
mod webhook;
