//! The dashboard: state and update (`app`), messages (`msg`), drawing (`view`), and the runtime
//! that connects them to the terminal and the API (`runtime`, `terminal`).

pub mod app;
mod bulk_run;
pub mod export_jobs;
pub mod keymap;
pub mod msg;
pub mod runtime;
mod terminal;
pub mod view;

pub use runtime::{IndexFile, Options, Outcome, run};
