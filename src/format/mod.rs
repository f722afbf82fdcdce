//! How things read to a person, on a terminal or in a table: records as labelled fields, money,
//! data volumes, dates and statuses; and text from outside made safe to show (no control or
//! bidirectional characters reach the terminal). One place, so the commands and the dashboard
//! say the same thing the same way.

pub mod money;
pub mod records;
pub mod text;
pub mod volume;
