//! What the business is about, shared by the client, the sandbox, the commands and the
//! dashboard: ICCIDs, statuses and their filters, money amounts read exactly, data volumes,
//! activation codes and the iPhone install link, a gateway seat's role, locations, the rule of
//! "needs attention", the rules of a profile's fields, what is bought, and the API's records as
//! they are read (`model`, its lenient readers and `Timestamp`); with the text rules
//! every layer shares (server text made terminal-safe). It does no I/O: how any of it is fetched
//! is the client's (`esimdash-api`), how it is shown to a person the binary's `format`.

#![warn(clippy::too_many_lines)]

pub mod attention;
pub mod esim_state;
pub mod iccid;
mod lenient;
pub mod location;
pub mod lpa;
pub mod model;
pub mod money;
pub mod order_no;
pub mod panic_guard;
pub mod profile_fields;
pub mod prometheus;
pub mod purchase;
pub mod role;
pub mod status;
pub mod sync;
pub mod text;
pub mod timestamp;
pub mod volume;
