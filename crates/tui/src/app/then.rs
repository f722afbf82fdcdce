//! What a tab or a form gets from the app while it handles a key (`Ctx`), and what it asks of
//! the rest of the screen once it has handled a key or an answer (`Then`): the app does it. So a
//! tab never reaches into the app, the mode or another tab.

use super::jobs::{Job, Outbox};
use super::mode::Mode;
use super::{Tab, Tone};
use crate::keymap::{Action, Keymap};
use crate::tabs::Event;
use esimdash_api::model::Profile;
use std::time::Instant;

#[derive(Debug, Clone)]
pub enum Then {
    /// A message on the status line.
    Flash(String, Tone),
    /// The status line's message goes (a question takes its place).
    Quiet,
    /// The whole ICCID searched for was found: typing or browsing ends on its detail.
    FoundIccid,
    /// Money moved: the header's balance (the one the answer gave, if it did) and every tab's
    /// lists are read again.
    MoneyMoved(Option<rust_decimal::Decimal>),
    /// Told to every tab.
    Tell(Event),
    /// The screen goes to this mode: a window opens, a view closes.
    Mode(Mode),
    /// This tab is shown (whatever window was open closes).
    Show(Tab),
    /// Onto the clipboard, if the guard passed it; else the message says why not.
    Copy {
        what: &'static str,
        checked: Result<String, String>,
    },
    /// The profile form's changes, sent (the header's profile is the screen's).
    SaveProfile(esimdash_api::model::ProfileUpdate),
    /// The key goes on to another tab, with what it is about (`b` on an eSIM: the catalog
    /// sells a new eSIM of its plan).
    Hand { tab: Tab, action: Action, about: About },
}

/// What a key handed to a tab is about, when not the tab's own selection.
#[derive(Debug, Clone, Default)]
pub enum About {
    #[default]
    Selection,
    /// An order (its detail, or the one selected on Orders): its eSIM.
    Order(Box<esimdash_api::model::Order>),
    /// An ICCID typed in.
    Iccid(esimdash_domain::iccid::Iccid),
    /// A plan, by its slug.
    Plan(String),
}

/// What a tab or a form may read and send while it handles a key.
pub struct Ctx<'a> {
    pub now: Instant,
    pub about: About,
    /// The mode the screen is in.
    pub mode: &'a Mode,
    /// The keys in force, for messages that name them.
    pub keymap: &'a Keymap,
    /// The profile as last loaded (its balance, the form that edits it).
    pub profile: Option<&'a Profile>,
    pub out: Outbox<'a>,
    pub then: Vec<Then>,
}

impl Ctx<'_> {
    pub fn flash(&mut self, text: impl Into<String>, tone: Tone) {
        self.then.push(Then::Flash(text.into(), tone));
    }

    pub fn set_mode(&mut self, mode: Mode) {
        self.then.push(Then::Mode(mode));
    }

    /// Whether a job of this kind runs for the account.
    pub fn running(&self, which: impl Fn(&Job) -> bool) -> Option<&Job> {
        self.out.running().find(|j| which(j))
    }
}
