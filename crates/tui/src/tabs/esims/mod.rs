//! "My eSIMs": the account's eSIMs, a server page at a time or searched in the inventory index
//! the background read fills. Its state (`state`), the index read (`index_read`), the search's results over it (`results`), the marks for
//! many at once (`marks`), an order's eSIMs found in it (`order_esims`), what it does
//! (`update`), its own keys (`keys`), the top-up and whereabouts of an order's or a typed eSIM
//! (`top_up`), what became of the QR
//! codes it wrote (`qr_files`), and its drawing (`view`).

pub mod index_read;
mod keys;
pub mod marks;
pub mod order_esims;
mod qr_files;
mod results;
mod state;
mod top_up;
mod update;
pub mod view;

pub use index_read::{IndexRead, SCAN_PAGE_SIZE};
pub use state::*;
