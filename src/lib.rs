//! esimdash: a terminal dashboard, one-shot commands and a sandbox server for the Reseller eSIM
//! Sales API v1. docs/architecture.md describes the architecture (its Layout: every file).

#![warn(clippy::too_many_lines)]

pub mod bulk;
pub mod cli;
pub mod clipboard;
pub mod commands;
pub mod config;
pub mod export;
pub mod format;
pub mod logging;
pub mod purchase;
pub mod session;
pub mod tui;
pub mod watch;
