//! The dashboard: the screen's state and update (`app`), each tab in its folder with its state,
//! update and drawing (`tabs`), the account's inventory index (`index`), the windows that take input (`forms`), messages (`msg`), the
//! frame and what all views share (`view`), and the runtime that connects them to the terminal
//! and the API (`runtime`, `terminal`).

#![warn(clippy::too_many_lines)]

pub mod app;
mod bulk_run;
pub mod export_jobs;
pub mod forms;
pub mod index;
pub mod keymap;
pub mod kit;
pub mod money_read;
pub mod msg;
pub mod runtime;
pub mod tabs;
mod terminal;
pub mod view;

pub use runtime::{IndexFile, Options, Outcome, run};
