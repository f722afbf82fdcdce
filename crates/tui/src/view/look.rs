//! What a view reads besides its own state: the frame's context, made by the app once a frame
//! (`App::look`), read-only. A tab draws from its state and this; a window from its own state
//! and this; neither sees the app.

use super::theme::Theme;
use crate::keymap::{Action, Context, Keymap};
use crate::kit::remote::Remote;
use crate::kit::status::Halt;
use esimdash_api::model::Profile;
use esimdash_front::session::Session;
use esimdash_ledger::overview::Overview;
use ratatui::text::Line;
use std::time::Instant;

/// Where the keyboard is, as a view shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Focus {
    /// The tab's list (or the Profile page).
    Browse,
    /// The tab's search or filter is being typed.
    Typing,
    /// My eSIMs' detail pane, shown alone on a narrow terminal.
    Detail,
    /// My eSIMs' QR code alone.
    Zoom,
    /// A window over the tab.
    Window,
}

pub struct Look<'a> {
    pub theme: &'a Theme,
    /// The time the frame is drawn at (countdowns).
    pub now: Instant,
    pub keymap: &'a Keymap,
    pub focus: Focus,
    /// The account in use: its profile (colour, read-only setting, pace of the index).
    pub session: &'a Session,
    /// The reseller's profile: the header's name and balance, the Profile tab.
    pub profile: &'a Remote<Profile>,
    /// The money of the last 30 days.
    pub money: &'a Remote<Overview>,
    /// The account's inventory index: My eSIMs' search and pane, an order's eSIMs.
    pub index: &'a crate::index::Index,
    /// Why requests stopped, if they did.
    pub halt: Option<&'a Halt>,
    /// Requests wait for a 429's countdown.
    pub rate_limited: bool,
    /// The dashboard is closing: nothing more is asked.
    pub closing: bool,
    /// The profile's change is being saved.
    pub saving: bool,
    /// The spinner's frame, while anything loads.
    pub spinner: usize,
    /// What the status line says other than keys (a message, a wait, a failure), for a view
    /// drawn without the status line (the QR code alone).
    pub notice: Option<Line<'static>>,
}

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

impl Look<'_> {
    pub fn keymap(&self) -> &Keymap {
        self.keymap
    }

    pub fn typing(&self) -> bool {
        self.focus == Focus::Typing
    }

    /// The profile as last loaded.
    pub fn profile(&self) -> Option<&Profile> {
        self.profile.value()
    }

    /// The key that refreshes, as the messages about failed loads name it.
    pub fn refresh_key(&self) -> String {
        self.keymap.first_key(Context::Global, Action::Refresh)
    }

    pub fn spinner(&self) -> &'static str {
        SPINNER[self.spinner % SPINNER.len()]
    }
}
