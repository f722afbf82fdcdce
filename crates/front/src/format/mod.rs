//! How things read to a person, on a terminal or in a table: the API's records as labelled
//! fields, money, data volumes, dates and statuses. One place, so the commands and the
//! dashboard say the same thing the same way. (Text from outside made safe to show is `text`,
//! below everything, since the client and the domain need it too.)

pub mod money;
pub mod records;
pub mod verdict;
pub mod volume;
