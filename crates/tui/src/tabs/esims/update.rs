//! What My eSIMs does: the requests it needs, where their answers go, how its list moves and
//! what it follows of the rest of the screen.

use super::{Esims, profile_key};
use crate::forms::mode::Mode;
use crate::index::Index;
use crate::keymap::{Action, Context};
use crate::kit::jobs::Outbox;
use crate::kit::remote::Slot;
use crate::kit::search::SearchBox;
use crate::kit::then::Event;
use crate::kit::then::{Answered, Then};
use crate::msg::{ExportJob, JobId, Payload, Request};
use crate::tabs::ctx::Ctx;
use crate::tabs::{JobDone, Motion, SCREEN_PAGE, TabState};
use crate::view::Look;
use esimdash_domain::status::StatusFilter;
use std::time::Instant;

impl TabState for Esims {
    fn subject(&self, index: &Index) -> Option<esimdash_front::team_commands::Values> {
        self.selected(index).map(esimdash_front::team_commands::Values::of_esim)
    }

    fn draw(&self, frame: &mut ratatui::Frame, area: ratatui::layout::Rect, look: &Look<'_>) {
        super::view::draw(frame, area, self, look);
    }

    fn withholds(&self, action: Action, index: &Index) -> bool {
        let Some(class) = self.selected(index).map(|e| e.facts().classify()) else {
            return false;
        };
        match action {
            Action::CopyCode | Action::CopyLink | Action::CopySmdp | Action::CopyMatchingId | Action::SaveQr => {
                self.marks().is_empty() && !class.installable()
            }
            Action::TopUp => self.marks().is_empty() && class.cannot_take_data().is_some(),
            _ => false,
        }
    }

    fn context(&self) -> Context {
        Context::Esims
    }

    /// The list's pages (unless a search shows results instead), the record a search needs,
    /// and the selected eSIM's activation code (the index's reads are the account's).
    fn fetch(&mut self, out: &mut Outbox<'_>, now: Instant, typing: bool, index: &Index) {
        if !self.search_active() {
            for page in self.list.wanted(now) {
                let id = out.send(Request::Esims(self.query(page)));
                self.list.start(page, id);
            }
        }
        if let Some((iccid, seen)) = self.wanted_fresh(typing, index) {
            let id = out.send(Request::FindEsim {
                iccid: iccid.clone(),
                seen,
            });
            self.fresh_started(iccid, seen, id);
        }
        if !self.to_refresh.is_empty() && !self.refreshing.is_loading() {
            let iccids = std::mem::take(&mut self.to_refresh);
            let id = out.send(Request::RefreshEsims { iccids });
            self.refreshing.start(id);
        }
        self.fetch_code(out, now, index);
    }

    fn views(&self) -> Vec<Context> {
        vec![Context::EsimDetail, Context::Zoom]
    }

    /// The list's pages, the lookup and the activation code serve the tab shown; records read
    /// again after a top-up serve every tab, so no tab switch cancels them.
    fn still_wants(&self, request: &Request, shown: bool, index: &Index) -> bool {
        match request {
            Request::Esims(q) => {
                shown && !self.search_active() && self.is_current(q) && self.list.is_near(q.page.unwrap_or(1))
            }
            Request::FindEsim { iccid, .. } => shown && self.wants_fresh(iccid, index),
            Request::ActivationCode { esim } => {
                shown
                    && self
                        .selected(index)
                        .is_some_and(|e| e.raw_order_json.iccid == esim.raw_order_json.iccid)
            }
            _ => true,
        }
    }

    fn slot(&mut self, request: &Request) -> Option<&mut dyn Slot> {
        match request {
            Request::Esims(q) => self.list.slot(q.page.unwrap_or(1)),
            Request::FindEsim { iccid, .. } => self.fresh_slot(iccid),
            Request::RefreshEsims { .. } => Some(&mut self.refreshing),
            Request::ActivationCode { esim } => self.codes.get_mut(&profile_key(esim)).map(|c| c as &mut dyn Slot),
            _ => None,
        }
    }

    fn on_answer(&mut self, id: JobId, request: &Request, payload: Payload, now: Instant, index: &Index) -> Answered {
        match (request, payload) {
            (Request::Esims(q), Payload::Esims(page)) => {
                let number = q.page.unwrap_or(1);
                if self.list.accept(number, id, page.esims, page.total, now) {
                    self.list_page_arrived(number);
                }
            }
            (Request::RefreshEsims { .. }, Payload::Refreshed) => {
                self.refreshing.resolve(id, (), now);
            }
            (Request::FindEsim { .. }, Payload::FoundEsim(found, earlier)) => {
                if self.accept_fresh(id, found, earlier, now, index) {
                    return Some(vec![Then::FoundIccid]);
                }
            }
            (Request::ActivationCode { esim }, Payload::ActivationCode(code)) => {
                if let Some(slot) = self.codes.get_mut(&profile_key(esim)) {
                    // The client checks a decoded image; `ac` is checked here, the same way.
                    let code = code.and_then(|c| esimdash_domain::lpa::checked_code(&c));
                    slot.resolve(id, code, now);
                }
            }
            _ => return None,
        }
        Some(Vec::new())
    }

    fn on_event(&mut self, event: &Event, index: &Index) {
        match event {
            Event::MoneyMoved => self.reload(),
            Event::ToppedUp(iccid) => self.note_top_up(iccid, index),
            Event::ToppedUpMany(iccids) => self.note_top_ups(iccids),
            Event::Unmark(iccids) => self.marks_mut().unmark(iccids),
            Event::BulkChoice(slug, qty) => self.marks_mut().remember_choice(slug.clone(), *qty),
        }
    }

    fn on_action(&mut self, action: Action, ctx: &mut Ctx<'_>) -> bool {
        self.act(action, ctx)
    }

    fn on_job_done(&mut self, done: JobDone, ctx: &mut Ctx<'_>) {
        self.qr_written(done, ctx);
    }

    fn follow(&mut self, ctx: &mut Ctx<'_>) {
        self.follow_order(ctx);
    }

    fn deadlines(&self) -> Vec<Instant> {
        self.list.hold_until().into_iter().collect()
    }

    fn refresh(&mut self, index: &mut Index) {
        self.reload();
        index.from_the_top();
    }

    fn move_cursor(&mut self, motion: Motion, now: Instant) {
        let page = if self.search_active() {
            SCREEN_PAGE
        } else {
            self.list.page_size() as i64
        };
        match motion.rows(page) {
            Some(d) => self.move_by(d, now),
            None if motion == Motion::End => self.go_to_end(now),
            None => self.go_to_start(now),
        }
    }

    /// The eSIM pane, or back to the table (on a narrow terminal the pane replaces it).
    fn open(&self, mode: &Mode) -> Option<Mode> {
        Some(match mode {
            Mode::Detail => Mode::Browse,
            _ => Mode::Detail,
        })
    }

    fn search_box(&mut self) -> Option<&mut SearchBox> {
        Some(&mut self.search)
    }

    fn search_changed(&mut self, index: &Index) -> bool {
        Esims::search_changed(self, index)
    }

    fn start_search(&mut self, index: &mut Index) {
        index.want_whole();
    }

    fn clear_search(&mut self, now: Instant, index: &Index) {
        self.close_search(now, index);
    }

    fn typing_hint(&self) -> &'static str {
        "type an ICCID or package  "
    }

    fn status(&self) -> Option<&StatusFilter> {
        Some(Esims::status(self))
    }

    fn search_applied(&self) -> Option<&str> {
        Some(self.search.applied())
    }

    fn attention_on(&self) -> Option<bool> {
        Some(self.attention)
    }

    fn set_attention(&mut self, on: bool, index: &mut Index) {
        if on != self.attention {
            self.toggle_attention(index);
        }
    }

    fn set_status(&mut self, status: StatusFilter, index: &Index) {
        Esims::set_status(self, status, index);
    }

    /// The list of the status filter; or, for a search, the eSIMs it found (once the whole
    /// inventory is known, so that none is missing).
    fn export(&self, index: &Index) -> Option<Result<ExportJob, &'static str>> {
        if !self.search_active() {
            return Some(Ok(ExportJob::Esims {
                query: self.query(1),
                only: None,
            }));
        }
        if !index.read().is_complete() {
            return Some(Err(
                "The search is still reading the inventory; export when it is complete",
            ));
        }
        let only = self.result_rows(index).map(|r| r.iccid()).collect();
        Some(Ok(ExportJob::Esims {
            query: self.query(1),
            only: Some(only),
        }))
    }

    fn badge(&self, index: &Index) -> Option<String> {
        index.attention_count().map(|n| format!("(! {n})"))
    }
}
