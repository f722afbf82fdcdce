//! What a tab gets from the app while it handles a key (`Ctx`): the moment, what the key is
//! about, the mode, the keys, the profile, the account's index, where requests go, and what it
//! asks of the screen after (the mode it opens first, then `Then`s in order).

use crate::forms::mode::Mode;
use crate::index::Index;
use crate::keymap::Keymap;
use crate::kit::jobs::{Job, Outbox};
use crate::kit::status::Tone;
use crate::kit::then::{About, Then};
use esimdash_api::model::Profile;
use std::time::Instant;

/// What a tab may read and send while it handles a key.
pub struct Ctx<'a> {
    pub now: Instant,
    pub about: About,
    /// The mode the screen is in.
    pub mode: &'a Mode,
    /// The keys in force, for messages that name them.
    pub keymap: &'a Keymap,
    /// The profile as last loaded (its balance, the form that edits it).
    pub profile: Option<&'a Profile>,
    /// The account's inventory index (an order's eSIMs, where an eSIM was seen).
    pub index: &'a mut Index,
    pub out: Outbox<'a>,
    /// The mode the screen goes to (a window opens, a view closes), before `then`.
    pub next_mode: Option<Mode>,
    pub then: Vec<Then>,
}

impl Ctx<'_> {
    pub fn flash(&mut self, text: impl Into<String>, tone: Tone) {
        self.then.push(Then::Flash(text.into(), tone));
    }

    pub fn set_mode(&mut self, mode: Mode) {
        self.next_mode = Some(mode);
    }

    /// Whether a job of this kind runs for the account.
    pub fn running(&self, which: impl Fn(&Job) -> bool) -> Option<&Job> {
        self.out.running().find(|j| which(j))
    }
}
