//! Dashboard tests in one binary: the app driven by messages (no terminal), snapshots of every
//! view rendered into ratatui's TestBackend, and the real binary in tmux.

mod accounts;
mod app_behaviour;
mod bulk_topup;
mod cancelling;
mod chaos;
mod common;
mod esims;
mod finding;
mod handover;
#[path = "../support/holding_proxy.rs"]
mod holding_proxy;
mod install_kit;
mod navigation;
mod one_story;
#[path = "../support/orders.rs"]
mod orders;
mod orders_esims;
#[path = "../support/pages.rs"]
mod pages;
mod payment_edges;
mod properties;
mod purchases;
mod screenshots;
mod snapshots;
mod terminal_e2e;
mod terminal_edges;
#[path = "../support/tmux.rs"]
mod tmux;
