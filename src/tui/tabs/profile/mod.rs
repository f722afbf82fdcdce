//! The Profile tab: the account's profile, which the app holds for the header too; the tab
//! itself has no list and nothing of its own to read.

pub mod view;

use super::TabState;
use crate::tui::keymap::Context;

#[derive(Debug, Clone, Default)]
pub struct ProfileTab;

impl TabState for ProfileTab {
    fn context(&self) -> Context {
        Context::Profile
    }

    fn has_list(&self) -> bool {
        false
    }
}
