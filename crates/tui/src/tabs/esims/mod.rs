//! "My eSIMs": the account's eSIMs, a server page at a time or searched in the account's
//! inventory index (`crate::index`). Its state (`state`), the search's results over the index
//! (`results`), the marks for many at once (`marks`), what it does (`update`), its own keys
//! (`keys`), the top-up and whereabouts of an order's or a typed eSIM (`top_up`), what became of
//! the QR codes it wrote (`qr_files`), and its drawing (`view`).

mod fresh;
mod keys;
pub mod marks;
mod qr_files;
mod results;
mod state;
mod top_up;
mod update;
pub mod view;

pub use fresh::{Code, Fresh, profile_key};
pub use results::ResultRow;
pub use state::*;
