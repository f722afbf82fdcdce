//! The windows that take input and send what it says: the purchase form (a top-up or new
//! eSIMs), the bulk top-up of the marked eSIMs, the profile form, the ICCID prompt. Each holds its stages and
//! reads; `plan_choice` is the choice of plan and quantity the payment forms share.

pub mod bulk;
pub mod iccid_prompt;
pub mod plan_choice;
pub mod profile;
pub mod purchase;
