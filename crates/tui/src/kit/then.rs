//! What a tab or a window asks of the rest of the screen once it has handled a key or an
//! answer (`Then`), and what happened elsewhere that every tab is told (`Event`): the app does
//! it. So neither reaches into the app, the mode or another tab. A tab opening a window sets
//! the mode through its context (`tabs::Ctx`); a window only ever closes itself.

use super::status::Tone;
use super::tab::Tab;
use crate::keymap::Action;

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
    /// The window open closes (the tab's list is browsed again).
    Close,
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

/// What the owner of a request makes of its answer: what the screen does after, or `None` when
/// the answer is not of the kind the request asks for.
pub type Answered = Option<Vec<Then>>;

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

/// What happened elsewhere that a tab may follow: the app tells every tab.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Money moved: what shows balances, orders and eSIMs is read again.
    MoneyMoved,
    /// A top-up of this eSIM was placed from its window: its record is watched until it shows it.
    ToppedUp(esimdash_domain::iccid::Iccid),
    /// A bulk run topped up these eSIMs: their records are read again.
    ToppedUpMany(Vec<esimdash_domain::iccid::Iccid>),
    /// These eSIMs leave the marks (topped up, or left out of a bulk top-up).
    Unmark(Vec<esimdash_domain::iccid::EsimIccid>),
    /// The plan and quantity a bulk top-up was paid with, offered first the next time.
    BulkChoice(String, u32),
}
