//! Domain helpers shared by the client, the sandbox and every screen: one place for how money,
//! data volumes, ICCIDs, activation codes, locations and statuses are read and shown.

pub mod attention;
pub mod iccid;
pub mod location;
pub mod lpa;
pub mod money;
pub mod profile_fields;
pub mod qr;
pub mod status;
pub mod text;
pub mod volume;
