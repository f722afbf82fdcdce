#![warn(clippy::too_many_lines)]

//! The money: the account's orders read as sales (what the wallet paid, what it cost, the
//! margin), summed by day, week, plan and country, and the balance's runway at the last seven
//! days' pace. The orders are read newest first only back to the start of the period asked
//! for, and kept on disk beside the inventory index, so that a second look reads from the top
//! only what is new (`ledger`). Every view and command that shows money over time reads its
//! figures from `sums`, so a chart, a report and a check never count differently.

pub mod kept;
pub mod ledger;
pub mod overview;
pub mod period;
mod reading;
pub mod sale;
pub mod sums;

pub use ledger::{Ledger, Refreshed};
pub use sale::Sale;
