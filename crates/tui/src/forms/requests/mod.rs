//! The payments an assistant proposed, for a person to approve or refuse (`R`): each with the
//! eSIM's state in words, the price and the reason. A decision is asked once more, then made by
//! `esimdash_front::requests::approval` as `esimdash approve` makes it (checked again at this
//! moment's price, paid once through the one payment path; `approval::decide`); what became
//! of it stays in the window until the next key.

pub mod view;

use crate::keymap::{Action, Context};
use crate::kit::jobs::Outbox;
use crate::kit::remote::{Remote, Slot};
use crate::kit::status::Tone;
use crate::kit::then::Then;
use crate::msg::{JobId, Payload, Request};
use esimdash_front::requests::Standing;
use esimdash_front::requests::approval::{Listed, Told};
use std::time::Instant;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Stage {
    Browsing,
    /// "Approve (or refuse) this one?"
    Asking {
        id: String,
        approve: bool,
    },
    Deciding {
        approve: bool,
    },
}

#[derive(Debug, Clone)]
pub struct RequestsWindow {
    pub(crate) list: Remote<Vec<Listed>>,
    pub(crate) cursor: usize,
    pub(crate) stage: Stage,
    /// The decision in flight.
    deciding: Option<JobId>,
    /// What the last decision came to.
    pub(crate) told: Option<Told>,
}

impl Default for RequestsWindow {
    fn default() -> Self {
        Self {
            list: Remote::default(),
            cursor: 0,
            stage: Stage::Browsing,
            deciding: None,
            told: None,
        }
    }
}

impl RequestsWindow {
    pub fn contexts(&self) -> Vec<Context> {
        match self.stage {
            Stage::Browsing => vec![Context::Requests],
            Stage::Asking { .. } => vec![Context::Decide],
            // Nothing interrupts a decision being paid.
            Stage::Deciding { .. } => Vec::new(),
        }
    }

    pub fn fetch(&mut self, out: &mut Outbox<'_>) {
        if self.list.wanted() {
            let id = out.send(Request::Requests);
            self.list.start(id);
        }
    }

    pub(crate) fn selected(&self) -> Option<&Listed> {
        self.list.value().and_then(|rows| rows.get(self.cursor))
    }

    pub fn on_action(&mut self, action: Action, out: &mut Outbox<'_>) -> Vec<Then> {
        match (&self.stage, action) {
            (Stage::Browsing, Action::Down | Action::Up) => {
                let rows = self.list.value().map_or(0, Vec::len);
                self.cursor = match action {
                    Action::Down => (self.cursor + 1).min(rows.saturating_sub(1)),
                    _ => self.cursor.saturating_sub(1),
                };
                self.told = None;
            }
            (Stage::Browsing, Action::Approve | Action::Refuse) => {
                let Some(row) = self.selected() else { return Vec::new() };
                if row.standing != Standing::Pending {
                    let words = esimdash_front::requests::decided_already(&row.request, &row.standing);
                    return vec![Then::Flash(words, Tone::Info)];
                }
                self.stage = Stage::Asking {
                    id: row.request.id.clone(),
                    approve: action == Action::Approve,
                };
                self.told = None;
            }
            (Stage::Browsing, Action::Refresh) => {
                self.list.invalidate();
                self.told = None;
            }
            (Stage::Browsing, Action::Close) => return vec![Then::Close],
            (Stage::Asking { id, approve }, Action::Accept) => {
                let request = Request::Decide {
                    id: id.clone(),
                    approve: *approve,
                };
                self.stage = Stage::Deciding { approve: *approve };
                self.deciding = Some(out.send(request));
            }
            (Stage::Asking { .. }, Action::Back | Action::Close) => self.stage = Stage::Browsing,
            _ => {}
        }
        Vec::new()
    }

    pub fn slot(&mut self, request: &Request) -> Option<&mut dyn Slot> {
        match request {
            Request::Requests => Some(&mut self.list),
            Request::Decide { .. } => Some(&mut self.deciding),
            _ => None,
        }
    }

    pub fn on_answer(&mut self, id: JobId, payload: Payload, now: Instant) -> Option<Vec<Then>> {
        match payload {
            Payload::Requests(rows) => {
                self.cursor = self.cursor.min(rows.len().saturating_sub(1));
                self.list.resolve(id, rows, now);
                Some(Vec::new())
            }
            Payload::Decided(decided) => {
                self.deciding = None;
                self.stage = Stage::Browsing;
                self.list.invalidate();
                let then = decided.paid.map(Then::MoneyMoved).into_iter().collect();
                self.told = Some(decided);
                Some(then)
            }
            _ => None,
        }
    }

    /// A decision's request failed before it was made (it never does: its words are its
    /// answer); the window goes back to the list.
    pub fn on_error(&mut self, request: &Request) -> bool {
        if matches!(request, Request::Decide { .. }) {
            self.stage = Stage::Browsing;
            self.deciding = None;
        }
        false
    }
}
