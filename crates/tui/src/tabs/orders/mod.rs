//! The Orders tab: server-side pages with a status filter and a search (`q`, sent after a pause
//! in typing).

pub mod view;

use super::{Motion, TabState, TopUpOf, whole_iccid};
use crate::forms::mode::{Mode, Overlay};
use crate::index::Index;
use crate::keymap::Context;
use crate::kit::jobs::Outbox;
use crate::kit::paged::Paged;
use crate::kit::remote::Slot;
use crate::kit::search::SearchBox;
use crate::kit::then::Answered;
use crate::kit::then::Event;
use crate::msg::{ExportJob, JobId, Payload, Request};
use crate::tabs::ctx::Ctx;
use crate::view::Look;
use esimdash_api::model::{Order, OrderQuery};
use esimdash_domain::status::StatusFilter;
use std::time::{Duration, Instant};

/// Items per page asked of the server (the API allows up to 100).
pub const PAGE_SIZE: u64 = 50;

/// How long typing must pause before the search is sent.
pub const SEARCH_PAUSE: Duration = Duration::from_millis(350);

#[derive(Debug, Clone)]
pub struct Orders {
    pub(crate) list: Paged<Order>,
    status: StatusFilter,
    pub(crate) search: SearchBox,
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

    /// The page asked of the server; a whole ICCID searched for is the orders of that eSIM.
    pub fn query(&self, page: u64) -> OrderQuery {
        let applied = self.search.applied();
        let iccid = whole_iccid(applied);
        OrderQuery {
            page: Some(page),
            page_size: Some(self.list.page_size()),
            status: self.status.clone(),
            q: Some(applied.to_string()).filter(|q| !q.is_empty() && iccid.is_none()),
            iccid,
        }
    }

    /// Whether an answer to `query` is for what the list shows now.
    pub fn is_current(&self, query: &OrderQuery) -> bool {
        let page = query.page.unwrap_or(1);
        *query == self.query(page)
    }
}

impl TabState for Orders {
    fn subject(&self, _index: &Index) -> Option<esimdash_front::team_commands::Values> {
        self.list
            .selected()
            .map(esimdash_front::team_commands::Values::of_order)
    }

    fn draw(&self, frame: &mut ratatui::Frame, area: ratatui::layout::Rect, look: &Look<'_>) {
        view::draw(frame, area, self, look);
    }

    fn context(&self) -> Context {
        Context::Orders
    }

    fn fetch(&mut self, out: &mut Outbox<'_>, now: Instant, _typing: bool, _index: &Index) {
        for page in self.list.wanted(now) {
            let id = out.send(Request::Orders(self.query(page)));
            self.list.start(page, id);
        }
    }

    /// Its pages serve the tab shown only.
    fn still_wants(&self, request: &Request, shown: bool, _index: &Index) -> bool {
        match request {
            Request::Orders(q) => shown && self.is_current(q) && self.list.is_near(q.page.unwrap_or(1)),
            _ => true,
        }
    }

    fn slot(&mut self, request: &Request) -> Option<&mut dyn Slot> {
        match request {
            Request::Orders(q) => self.list.slot(q.page.unwrap_or(1)),
            _ => None,
        }
    }

    fn on_answer(&mut self, id: JobId, request: &Request, payload: Payload, now: Instant, _index: &Index) -> Answered {
        match (request, payload) {
            (Request::Orders(q), Payload::Orders(page)) => {
                self.list.accept(q.page.unwrap_or(1), id, page.orders, page.total, now);
                Some(Vec::new())
            }
            _ => None,
        }
    }

    /// The detail shows the order as last read: a pending order read again is allocated.
    fn follow(&mut self, ctx: &mut Ctx<'_>) {
        let Some(Overlay::OrderDetail(shown)) = ctx.mode.overlay() else {
            return;
        };
        let newer = self
            .list
            .loaded()
            .find(|o| o.record.provider_order_no == shown.record.provider_order_no && *o != &**shown);
        if let Some(newer) = newer {
            ctx.set_mode(Mode::Overlay(Overlay::OrderDetail(Box::new(newer.clone()))));
        }
    }

    fn on_event(&mut self, event: &Event, _index: &Index) {
        if *event == Event::MoneyMoved {
            self.list.reset();
        }
    }

    fn deadlines(&self) -> Vec<Instant> {
        [self.search.due(), self.list.hold_until()]
            .into_iter()
            .flatten()
            .collect()
    }

    /// The search is sent once typing pauses.
    fn tick(&mut self, now: Instant) -> bool {
        let changed = self.search.tick(now);
        if changed {
            self.list.reset();
        }
        changed
    }

    fn refresh(&mut self, _index: &mut Index) {
        self.list.reload();
    }

    fn move_cursor(&mut self, motion: Motion, now: Instant) {
        match motion.rows(self.list.page_size() as i64) {
            Some(d) => self.list.move_by(d, now),
            None if motion == Motion::End => self.list.go_to_end(now),
            None => self.list.go_to_start(now),
        }
    }

    fn open(&self, _mode: &Mode) -> Option<Mode> {
        let order = self.list.selected()?;
        Some(Mode::Overlay(Overlay::OrderDetail(Box::new(order.clone()))))
    }

    fn search_box(&mut self) -> Option<&mut SearchBox> {
        Some(&mut self.search)
    }

    fn search_changed(&mut self, _index: &Index) -> bool {
        self.list.reset();
        false
    }

    fn clear_search(&mut self, _now: Instant, _index: &Index) {
        if self.search.clear() {
            self.list.reset();
        }
    }

    fn typing_hint(&self) -> &'static str {
        "type to search  "
    }

    fn status(&self) -> Option<&StatusFilter> {
        Some(&self.status)
    }

    fn search_applied(&self) -> Option<&str> {
        Some(self.search.applied())
    }

    fn set_status(&mut self, status: StatusFilter, _index: &Index) {
        if status != self.status {
            self.status = status;
            self.list.reset();
        }
    }

    /// Every order of the filter and search, read page by page as the file is written.
    fn export(&self, _index: &Index) -> Option<Result<ExportJob, &'static str>> {
        Some(Ok(ExportJob::Orders(self.query(1))))
    }

    fn top_up(&self) -> TopUpOf {
        TopUpOf::Order(self.list.selected().cloned().map(Box::new))
    }
}
