//! esimdash: a terminal dashboard, one-shot commands and a sandbox server for the Reseller eSIM
//! Sales API v1. This crate is the binary's command line and one-shot commands; the dashboard is
//! `esimdash-tui`, what both share `esimdash-front`. docs/architecture.md describes the
//! architecture (its Layout: every file).

#![warn(clippy::too_many_lines)]

pub mod cli;
pub mod commands;
pub mod logging;
