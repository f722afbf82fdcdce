//! The tabs: each one a folder with its state, what it does (`TabState`) and its drawing. The app
//! asks the tab shown what it needs read, how its list moves, what its search and export are;
//! the answers to a tab's requests come back to it (`slot`, `on_answer`); what happens elsewhere
//! that a tab follows is told to every tab (`on_event`). A tab is chosen in one place
//! (`Tabs::get` and `get_mut`, in `app/account.rs`), so adding a tab does not mean editing every
//! action or answer.

pub mod catalog;
pub mod ctx;
pub mod esims;
pub mod orders;
pub mod profile;

use crate::forms::mode::Mode;
use crate::index::Index;
use crate::keymap::{Action, Context};
use crate::kit::jobs::Outbox;
use crate::kit::remote::Slot;
use crate::kit::search::SearchBox;
use crate::kit::then::Answered;
use crate::kit::then::Event;
use crate::msg::{ExportJob, JobId, Payload, Request};
use crate::tabs::ctx::Ctx;
use crate::view::Look;
use esimdash_domain::status::StatusFilter;
use std::time::Instant;

/// How far PgDn/PgUp move in lists held whole (the catalog, eSIM search results); server lists
/// move a whole server page.
pub const SCREEN_PAGE: i64 = 20;

/// A movement in the tab's list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Motion {
    By(i64),
    Pages(i64),
    HalfPages(i64),
    Start,
    End,
}

impl Motion {
    /// Rows to move in a list whose page is `page` rows; `None` for the start or the end.
    pub fn rows(self, page: i64) -> Option<i64> {
        match self {
            Motion::By(d) => Some(d),
            Motion::Pages(n) => Some(n * page),
            Motion::HalfPages(n) => Some(n * (page / 2).max(1)),
            Motion::Start | Motion::End => None,
        }
    }
}

/// The search text as a whole, valid ICCID (spaces and dashes dropped), if it is one.
pub(crate) fn whole_iccid(text: &str) -> Option<esimdash_domain::iccid::Iccid> {
    let digits: String = text.chars().filter(|c| !matches!(c, ' ' | '-')).collect();
    esimdash_domain::iccid::Iccid::parse(&digits).ok()
}

/// What became of a job a tab started that is not a request (a file written).
#[derive(Debug)]
pub enum JobDone {
    /// An eSIM's QR code as a PNG.
    QrSaved {
        iccid: esimdash_domain::iccid::Iccid,
        code: String,
        result: Result<std::path::PathBuf, crate::msg::SaveError>,
    },
    /// The marked eSIMs' QR codes, into a folder.
    QrFolderSaved(Result<esimdash_front::export::qr_folder::Written, String>),
}

/// What `t` tops up from a tab that does not top up its own selection (My eSIMs does, in its
/// `on_action`).
#[derive(Debug, Clone, PartialEq)]
pub enum TopUpOf {
    /// The selected order's eSIM: the one a top-up names, or the one it made.
    Order(Option<Box<esimdash_api::model::Order>>),
    /// Whichever eSIM the user types.
    Ask,
}

/// What each tab does. Defaults are for a tab without a list (Profile). The account's index
/// (`crate::index`) is lent to what reads or moves the eSIMs it holds.
///
/// Adding a tab: its folder here with its state implementing this and its view, a variant of
/// `Tab` with its title, an arm in `Tabs::get` and `get_mut`, and its key context and `Tab…`
/// action in the keymap.
pub trait TabState {
    /// The context of this tab's own keys.
    fn context(&self) -> Context;

    /// The contexts of the tab's other views (My eSIMs: its detail pane and the QR code
    /// alone), for the help.
    fn views(&self) -> Vec<Context> {
        Vec::new()
    }

    /// The contexts whose keys apply while the tab is browsed, first match wins.
    fn browse_contexts(&self) -> Vec<Context> {
        if self.has_list() {
            vec![self.context(), Context::List, Context::Global]
        } else {
            vec![self.context(), Context::Global]
        }
    }

    /// Whether the tab withholds `action` from what is selected now (a deleted eSIM's code, a
    /// top-up of an eSIM that can never take data): its key is left out of the status line's
    /// hints. Pressed all the same, the key says why.
    fn withholds(&self, _action: Action, _index: &Index) -> bool {
        false
    }

    /// Whether the tab shows a list: the list keys apply and a search can start.
    fn has_list(&self) -> bool {
        true
    }

    /// Asks for what the tab shows and does not have (`typing`: a search is being typed).
    fn fetch(&mut self, _out: &mut Outbox<'_>, _now: Instant, _typing: bool, _index: &Index) {}

    /// Whether the screen still needs the answer to this read of the tab's (`shown`: the tab is
    /// on screen).
    fn still_wants(&self, _request: &Request, _shown: bool, _index: &Index) -> bool {
        true
    }

    /// Where the answer to this request of the tab's goes, if that place still exists.
    fn slot(&mut self, _request: &Request) -> Option<&mut dyn Slot> {
        None
    }

    /// The awaited answer to one of the tab's requests: what the rest of the screen does after
    /// (`None`: the answer is not of the kind the request asks for).
    fn on_answer(
        &mut self,
        _id: JobId,
        _request: &Request,
        _payload: Payload,
        _now: Instant,
        _index: &Index,
    ) -> Answered {
        None
    }

    /// Something happened elsewhere (money moved, an eSIM was topped up).
    fn on_event(&mut self, _event: &Event, _index: &Index) {}

    /// The record chosen, as a team command's placeholders read it (`[[commands]]`): the eSIM,
    /// the order or the plan selected; `None` where nothing is.
    fn subject(&self, _index: &Index) -> Option<esimdash_front::team_commands::Values> {
        None
    }

    /// A job of the tab's that is not a request ended (a file written).
    fn on_job_done(&mut self, _done: JobDone, _ctx: &mut Ctx<'_>) {}

    /// After every message: what the tab follows of the screen (Orders: an order's detail shows
    /// the order as last read; My eSIMs: the eSIM of an order asked for, once found).
    fn follow(&mut self, _ctx: &mut Ctx<'_>) {}

    /// Draws the tab in its area of the frame, from its own state and the frame's context
    /// (its folder's `view::draw`).
    fn draw(&self, frame: &mut ratatui::Frame, area: ratatui::layout::Rect, look: &Look<'_>);

    /// A key of the tab's own (sort, mark, copy…), or one handed to it with what it is about
    /// (`ctx.about`: an order's eSIM to top up): `false` when `action` is not one of them.
    fn on_action(&mut self, _action: Action, _ctx: &mut Ctx<'_>) -> bool {
        false
    }

    /// When the tab next needs a tick (a search waiting for a pause in typing, a list holding
    /// its page reads while the cursor moves).
    fn deadlines(&self) -> Vec<Instant> {
        Vec::new()
    }

    /// A deadline came: `true` when what the tab shows changed.
    fn tick(&mut self, _now: Instant) -> bool {
        false
    }

    /// `r`: what the tab shows, read again (My eSIMs: the account's index from the top too).
    fn refresh(&mut self, _index: &mut Index) {}

    fn move_cursor(&mut self, _motion: Motion, _now: Instant) {}

    /// Enter on the list: the window or pane that opens (`mode`: the one now).
    fn open(&self, _mode: &Mode) -> Option<Mode> {
        None
    }

    /// The text typed to filter or search the list.
    fn search_box(&mut self) -> Option<&mut SearchBox> {
        None
    }

    /// The search in effect changed: the list follows. `true` when it found a whole ICCID.
    fn search_changed(&mut self, _index: &Index) -> bool {
        false
    }

    /// A search starts (the search key): My eSIMs wants the whole index.
    fn start_search(&mut self, _index: &mut Index) {}

    /// Esc or the clear key: the search is emptied.
    fn clear_search(&mut self, _now: Instant, _index: &Index) {}

    /// What the bottom line says while a search is typed.
    fn typing_hint(&self) -> &'static str {
        ""
    }

    /// The status filter, where the tab has one.
    fn status(&self) -> Option<&StatusFilter> {
        None
    }

    /// The search or filter text in effect, where the tab has one.
    fn search_applied(&self) -> Option<&str> {
        None
    }

    /// My eSIMs' attention filter: whether it is on (`None`: the tab has none).
    fn attention_on(&self) -> Option<bool> {
        None
    }

    fn set_attention(&mut self, _on: bool, _index: &mut Index) {}

    /// The Catalog's sort, by its name (`None`: the tab has none).
    fn sort_name(&self) -> Option<&'static str> {
        None
    }

    fn set_sort(&mut self, _name: &str) {}

    fn set_status(&mut self, _status: StatusFilter, _index: &Index) {}

    /// The view as an export (`None`: nothing to export here; `Err`: not yet, and why).
    fn export(&self, _index: &Index) -> Option<Result<ExportJob, &'static str>> {
        None
    }

    /// Added to the tab's title on the bar (how many eSIMs need attention).
    fn badge(&self, _index: &Index) -> Option<String> {
        None
    }

    fn top_up(&self) -> TopUpOf {
        TopUpOf::Ask
    }
}
