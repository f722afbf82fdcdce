//! The Orders tab: server-side pages with a status filter and a search (`q`, sent after a pause
//! in typing). The status choices are shared with My eSIMs.

use super::input::TextInput;
use super::paged::Paged;
use crate::api::model::{Order, OrderQuery};
use crate::esim::status::{ACTIVE_FILTER, Status};
use std::time::{Duration, Instant};

/// Items per page asked of the server (the API allows up to 100).
pub const PAGE_SIZE: u64 = 50;

/// How long typing must pause before the search is sent.
pub const SEARCH_PAUSE: Duration = Duration::from_millis(350);

/// The status filter choices: everything, `active`, then each known status.
pub fn status_choices() -> Vec<Option<String>> {
    let mut choices = vec![None, Some(ACTIVE_FILTER.to_string())];
    choices.extend(Status::KNOWN.iter().map(|s| Some(s.as_str().to_string())));
    choices
}

#[derive(Debug, Clone)]
pub struct Orders {
    pub list: Paged<Order>,
    pub status: Option<String>,
    /// The search the shown list answers.
    pub q: String,
    pub search: TextInput,
    pub searching: bool,
    /// When typing paused long enough to send the search.
    pub search_due: Option<Instant>,
}

impl Default for Orders {
    fn default() -> Self {
        Self {
            list: Paged::new(PAGE_SIZE),
            status: None,
            q: String::new(),
            search: TextInput::default(),
            searching: false,
            search_due: None,
        }
    }
}

impl Orders {
    pub fn query(&self, page: u64) -> OrderQuery {
        OrderQuery {
            page: Some(page),
            page_size: Some(self.list.page_size),
            status: self.status.clone(),
            q: Some(self.q.clone()).filter(|q| !q.is_empty()),
        }
    }

    /// Sends the typed search now if it differs from the one shown.
    pub fn apply_search(&mut self) {
        self.search_due = None;
        let typed = self.search.value.trim().to_string();
        if typed != self.q {
            self.q = typed;
            self.list.reset();
        }
    }

    pub fn set_status(&mut self, status: Option<String>) {
        if status != self.status {
            self.status = status;
            self.list.reset();
        }
    }
}
