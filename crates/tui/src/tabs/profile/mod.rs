//! The Profile tab: the account's profile and its money over the last 30 days, both of which
//! the app holds for the header too; the tab itself has no list and nothing of its own to read.

mod money;
pub mod view;

pub use money::{SPARK_DAYS, sparkline};

use super::TabState;
use crate::forms::mode::{Mode, Overlay};
use crate::forms::profile::ProfileForm;
use crate::keymap::{Action, Context};
use crate::kit::status::Tone;
use crate::tabs::ctx::Ctx;
use crate::view::Look;

#[derive(Debug, Clone, Default)]
pub struct ProfileTab;

impl TabState for ProfileTab {
    fn draw(&self, frame: &mut ratatui::Frame, area: ratatui::layout::Rect, look: &Look<'_>) {
        view::draw(frame, area, look);
    }

    fn context(&self) -> Context {
        Context::Profile
    }

    fn has_list(&self) -> bool {
        false
    }

    fn on_action(&mut self, action: Action, ctx: &mut Ctx<'_>) -> bool {
        if action != Action::Edit {
            return false;
        }
        match ctx.profile {
            Some(p) => ctx.set_mode(Mode::Overlay(Overlay::ProfileForm(Box::new(ProfileForm::new(p))))),
            None => ctx.flash("The profile has not loaded yet", Tone::Error),
        }
        true
    }
}
