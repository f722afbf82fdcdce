//! The Orders tab: server-side pages with a status filter and a search (`q`, sent after a pause
//! in typing).

use super::paged::Paged;
use super::search::SearchBox;
use crate::api::model::{Order, OrderQuery};
use crate::esim::status::StatusFilter;
use std::time::Duration;

/// Items per page asked of the server (the API allows up to 100).
pub const PAGE_SIZE: u64 = 50;

/// How long typing must pause before the search is sent.
pub const SEARCH_PAUSE: Duration = Duration::from_millis(350);

#[derive(Debug, Clone)]
pub struct Orders {
    pub(super) list: Paged<Order>,
    status: StatusFilter,
    pub(super) search: SearchBox,
}

impl Default for Orders {
    fn default() -> Self {
        Self {
            list: Paged::new(PAGE_SIZE),
            status: StatusFilter::All,
            search: SearchBox::new(SEARCH_PAUSE),
        }
    }
}

impl Orders {
    pub fn list(&self) -> &Paged<Order> {
        &self.list
    }

    pub fn status(&self) -> &StatusFilter {
        &self.status
    }

    pub fn search(&self) -> &SearchBox {
        &self.search
    }

    pub fn query(&self, page: u64) -> OrderQuery {
        OrderQuery {
            page: Some(page),
            page_size: Some(self.list.page_size()),
            status: self.status.query(),
            q: Some(self.search.applied().to_string()).filter(|q| !q.is_empty()),
            iccid: None,
        }
    }

    /// Whether an answer to `query` is for what the list shows now.
    pub fn is_current(&self, query: &OrderQuery) -> bool {
        let page = query.page.unwrap_or(1);
        *query == self.query(page)
    }

    /// The search in effect changed: the pages are for another query.
    pub fn search_changed(&mut self) {
        self.list.reset();
    }

    pub fn set_status(&mut self, status: StatusFilter) {
        if status != self.status {
            self.status = status;
            self.list.reset();
        }
    }
}
