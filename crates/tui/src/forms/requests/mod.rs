//! The payments an assistant proposed, for a person to approve or refuse (`R`): each with the
//! eSIM's state in words, the price and the reason. A decision is asked once more, then made by
//! `esimdash_front::requests::approval` as `esimdash approve` makes it (checked again at this
//! moment's price, paid once through the one payment path); what became of it stays in the
//! window until the next key.

pub mod view;

use crate::keymap::{Action, Context};
use crate::kit::jobs::Outbox;
use crate::kit::remote::{Remote, Slot};
use crate::kit::status::Tone;
use crate::kit::then::Then;
use crate::msg::{JobId, Payload, Request};
use esimdash_api::Client;
use esimdash_front::requests::approval::{self, ApproveError, Listed};
use esimdash_front::requests::{Requests, Standing};
use rust_decimal::Decimal;
use std::time::Instant;

/// What a decision came to, in words for the window.
#[derive(Debug, Clone, PartialEq)]
pub struct Decided {
    pub text: String,
    pub tone: Tone,
    /// Money moved: the balance the answer gave, if it did.
    pub paid: Option<Option<Decimal>>,
}

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
    pub(crate) told: Option<Decided>,
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
                    let words = approval::decided_already(&row.request, &row.standing);
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

/// The requests of the client's account as the window lists them.
pub async fn list(client: &Client) -> Result<Vec<Listed>, esimdash_api::ApiError> {
    let store = store(client)?;
    approval::listed(client, &store)
        .await
        .map_err(|e| esimdash_api::ApiError::Setup(e.to_string()))
}

fn store(client: &Client) -> Result<Requests, esimdash_api::ApiError> {
    Requests::of(client).ok_or_else(|| {
        esimdash_api::ApiError::Setup("requests are kept in the state folder, and this session has none".to_string())
    })
}

/// Approves (and pays) or refuses request `id` as this machine's user, in words.
pub async fn decide(client: &Client, id: &str, approve: bool) -> Decided {
    let store = match store(client) {
        Ok(store) => store,
        Err(e) => return refused(e.to_string()),
    };
    let user = esimdash_api::audit::local_user();
    if !approve {
        return match approval::refuse(client, &store, id, &user, "refused by a person in the dashboard").await {
            Ok(request) => Decided {
                text: format!("Refused {}: nothing was paid.", request.id),
                tone: Tone::Success,
                paid: None,
            },
            Err(e) => refused(e.to_string()),
        };
    }
    let approved = match approval::approve(client, &store, id, &user, false).await {
        Ok(approved) => approved,
        Err(ApproveError::Refused(why)) => return refused(why),
        Err(e) => return refused(format!("{e}: nothing was paid")),
    };
    let what = approved.payment.spend.what.clone();
    match approved.answer {
        Ok(paid) => Decided {
            text: format!(
                "Approved and paid {}: order {} ({} USD).{}",
                approved.request.id,
                paid.placed.order.record.provider_order_no,
                esimdash_domain::money::format_amount(approved.quote.total),
                paid.charged_other
                    .as_ref()
                    .map_or_else(String::new, |o| format!(" {}", o.sentence()))
            ),
            tone: if paid.charged_other.is_some() {
                Tone::Error
            } else {
                Tone::Success
            },
            paid: Some(paid.placed.balance_usd),
        },
        Err(error) if error.outcome_unknown() => {
            let found = client.look_up_payment(&approved.payment, &approved.before).await;
            match found {
                Ok(Some(order)) => Decided {
                    text: format!(
                        "Approved {}: no answer came, and the order list shows it placed: order {}.",
                        approved.request.id, order.record.provider_order_no
                    ),
                    tone: Tone::Success,
                    paid: Some(None),
                },
                Ok(None) => refused(format!(
                    "Approved {}: no answer came ({error}), and the order list shows no such order: most likely not placed. Check Orders before proposing it again.",
                    approved.request.id
                )),
                Err(lookup) => refused(format!(
                    "Approved {}: no answer came ({error}) and the order list could not be read ({lookup}): it may or may not have been placed. Check Orders.",
                    approved.request.id
                )),
            }
        }
        Err(error @ esimdash_api::ApiError::Repeat { .. }) => refused(format!(
            "Not paid: {error}. If it is meant, pay it a second time with `esimdash approve {} --again`.",
            approved.request.id
        )),
        Err(error @ esimdash_api::ApiError::Api { .. }) => refused(esimdash_front::purchase::explain(&error, &what)),
        Err(error) => refused(format!("{error}: nothing was paid")),
    }
}

fn refused(text: String) -> Decided {
    Decided {
        text,
        tone: Tone::Error,
        paid: None,
    }
}
