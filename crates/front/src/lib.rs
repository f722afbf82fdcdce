//! What the dashboard and the one-shot commands share: the settings and the account a session
//! opens (`config`, `session`), how records are said to a person (`format`), what a payment
//! checks before it is sent (`purchase`, `quote`), payments an assistant proposed and a person decides
//! (`requests`), bulk top-ups and their journal (`bulk`), files
//! written for the user (`export`), the clipboard, the changes `watch` reports, and the team's own commands (`team_commands`).

#![warn(clippy::too_many_lines)]

pub mod bulk;
pub mod clipboard;
pub mod config;
pub mod export;
pub mod format;
pub mod keeper;
pub mod purchase;
pub mod quote;
pub mod requests;
pub mod session;
pub mod team_commands;
pub mod triage;
pub mod views;
pub mod watch;
