//! The windows over the tab, behind one trait (`window`): the forms that take input and send
//! what it says (the purchase form for a top-up or new eSIMs, the bulk top-up of the marked
//! eSIMs, the profile form, the ICCID prompt, the requests an assistant proposed), each holding its stages and reads; and what the
//! other windows are (help, details, pickers). `plan_choice` is the choice of plan and
//! quantity the payment forms share.

pub mod bulk;
pub mod iccid_prompt;
pub mod mode;
pub mod palette;
pub mod plan_choice;
pub mod profile;
pub mod purchase;
pub mod requests;
pub mod team_command;
pub mod triage;
pub mod views;
pub mod window;

pub use window::{Window, WindowCtx};
