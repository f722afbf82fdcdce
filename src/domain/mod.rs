//! What the business is about, shared by the client, the sandbox, the commands and the
//! dashboard: ICCIDs, statuses and their filters, money amounts read exactly, data volumes,
//! activation codes and the iPhone install link, locations, the rule of "needs attention", and
//! the rules of a profile's fields, and what is bought. How any of it is shown to a person is in `format`.

pub mod attention;
pub mod esim_state;
pub mod iccid;
pub mod location;
pub mod lpa;
pub mod money;
pub mod order_no;
pub mod profile_fields;
pub mod purchase;
pub mod status;
pub mod volume;
