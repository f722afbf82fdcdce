//! Where the keyboard goes: one value, so that two modes can never be on at once (a search typed
//! while a window is open, a zoom left on after the tab changed).

use crate::forms::Window;
use crate::forms::bulk::BulkForm;
use crate::forms::profile::ProfileForm;
use crate::forms::purchase::PurchaseForm;
use crate::keymap::Context;
use crate::kit::jobs::{Outbox, Owner};
use crate::kit::remote::Remote;
use esimdash_api::model::{Order, Plan};
use esimdash_domain::status::StatusFilter;

/// A window drawn over the tab.
#[derive(Debug, Clone)]
pub enum Overlay {
    /// The keys, scrolled down this many lines.
    Help {
        scroll: u16,
    },
    /// A plan from the catalog, and the same plan fetched with the reseller's own pricing.
    PlanDetail {
        summary: Box<Plan>,
        fetched: Remote<Box<Plan>>,
    },
    OrderDetail(Box<Order>),
    /// The status filter of the tab shown (Orders or My eSIMs).
    StatusPicker {
        choices: Vec<StatusFilter>,
        cursor: usize,
    },
    ProfileForm(Box<ProfileForm>),
    /// A top-up or a purchase.
    Purchase(Box<PurchaseForm>),
    /// A top-up of every marked eSIM.
    Bulk(Box<BulkForm>),
    /// A team command run from the palette: its output and end.
    CommandOutput(Box<crate::forms::team_command::CommandOutput>),
    /// The command palette: the actions where the keyboard was.
    Palette(Box<crate::forms::palette::Palette>),
    /// The payments an assistant proposed, to approve or refuse.
    Requests(Box<crate::forms::requests::RequestsWindow>),
    /// An eSIM's triage and its escalation pack.
    Triage(Box<crate::forms::triage::TriageWindow>),
    /// The saved views of the tab shown.
    Views(Box<crate::forms::views::ViewsWindow>),
    /// A QR image's file exists: replace it?
    Replace {
        iccid: esimdash_domain::iccid::Iccid,
        code: String,
        path: std::path::PathBuf,
        /// Who wrote it (and so is told what became of it written again).
        owner: Owner,
    },
    /// The profile picker: the config file's profiles (or the demo's accounts).
    AccountPicker {
        names: Vec<String>,
        cursor: usize,
        /// Why the last choice could not be opened, or could not be switched to yet.
        error: Option<String>,
    },
    /// What became of earlier payments that their sessions left unsettled (`App::notices`):
    /// stays until closed.
    Notices,
    /// "Top up which eSIM?": an ICCID typed in.
    IccidPrompt {
        input: crate::kit::input::TextInput,
        error: Option<String>,
    },
}

#[derive(Debug, Clone, Default)]
pub enum Mode {
    /// The tab's list (or the Profile page).
    #[default]
    Browse,
    /// The tab's filter or search is being typed.
    Typing,
    /// My eSIMs on a narrow terminal: the detail pane instead of the table.
    Detail,
    /// My eSIMs: the QR code alone; `from_detail`: opened from the pane shown alone, where
    /// closing it goes back.
    Zoom {
        from_detail: bool,
    },
    Overlay(Overlay),
}

impl Mode {
    /// "Top up which eSIM?", empty (`forms/iccid_prompt.rs` takes its keys).
    pub fn iccid_prompt() -> Mode {
        Mode::Overlay(Overlay::IccidPrompt {
            input: crate::kit::input::TextInput::limited(crate::kit::input::ICCID_MAX_CHARS),
            error: None,
        })
    }

    /// Where closing this view leads: the pane a zoom was opened from, else the list.
    pub fn closed(&self) -> Mode {
        match self {
            Mode::Zoom { from_detail: true } => Mode::Detail,
            _ => Mode::Browse,
        }
    }

    /// The contexts whose keys apply, first match wins. While typing, printable keys edit the
    /// text before the later contexts are asked.
    /// `browse`: the contexts of the tab shown (`TabState::browse_contexts`).
    pub fn contexts(&self, browse: Vec<Context>) -> Vec<Context> {
        match self {
            Mode::Browse => browse,
            Mode::Typing => vec![Context::Typing, Context::List, Context::Global],
            Mode::Detail => [vec![Context::EsimDetail], browse].concat(),
            Mode::Zoom { .. } => vec![Context::Zoom, Context::Esims, Context::Global],
            Mode::Overlay(window) => window.contexts(),
        }
    }

    /// What the window open needs read (a plan's own pricing, a form's next read).
    pub fn fetch(&mut self, out: &mut Outbox<'_>) {
        if let Mode::Overlay(window) = self {
            window.fetch(&mut out.owned_by(Owner::Window));
        }
    }

    /// Where the keyboard is, as the views show it.
    pub fn focus(&self) -> crate::view::Focus {
        use crate::view::Focus;
        match self {
            Mode::Browse => Focus::Browse,
            Mode::Typing => Focus::Typing,
            Mode::Detail => Focus::Detail,
            Mode::Zoom { .. } => Focus::Zoom,
            Mode::Overlay(_) => Focus::Window,
        }
    }

    /// Whether printable keys edit text here.
    pub fn takes_text(&self) -> bool {
        match self {
            Mode::Typing => true,
            Mode::Overlay(window) => window.takes_text(),
            _ => false,
        }
    }

    pub fn overlay(&self) -> Option<&Overlay> {
        match self {
            Mode::Overlay(o) => Some(o),
            _ => None,
        }
    }

    pub fn overlay_mut(&mut self) -> Option<&mut Overlay> {
        match self {
            Mode::Overlay(o) => Some(o),
            _ => None,
        }
    }
}
