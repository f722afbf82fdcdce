//! esimdash: a terminal dashboard, one-shot commands and a sandbox server for the Reseller eSIM
//! Sales API v1. See DESIGN.md in the shared folder for the architecture.

pub mod api;
pub mod esim;
