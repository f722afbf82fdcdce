//! What My eSIMs does: the requests it needs, where their answers go, how its list moves and
//! what it follows of the rest of the screen.

use super::{Esims, profile_key};
use crate::app::jobs::Outbox;
use crate::app::mode::{Mode, Overlay};
use crate::app::remote::Slot;
use crate::app::search::SearchBox;
use crate::app::{Ctx, Then};
use crate::keymap::{Action, Context};
use crate::msg::{ExportJob, JobId, Payload, Request};
use crate::tabs::{Event, JobDone, Motion, SCREEN_PAGE, TabState};
use crate::view::Look;
use esimdash_domain::status::StatusFilter;
use std::time::Instant;

impl TabState for Esims {
    fn draw(&self, frame: &mut ratatui::Frame, area: ratatui::layout::Rect, look: &Look<'_>) {
        super::view::draw(frame, area, self, look);
    }

    fn withholds(&self, action: Action) -> bool {
        let Some(class) = self.selected().map(|e| e.facts().classify()) else {
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
    /// the background read's next page, and the selected eSIM's activation code.
    fn fetch(&mut self, out: &mut Outbox<'_>, now: Instant, typing: bool) {
        if !self.search_active() {
            for page in self.list.wanted(now) {
                let id = out.send(Request::Esims(self.query(page)));
                self.list.start(page, id);
            }
        }
        if let Some((iccid, seen)) = self.wanted_fresh(typing) {
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
        self.fetch_scan(out);
        self.fetch_code(out, now);
    }

    fn views(&self) -> Vec<Context> {
        vec![Context::EsimDetail, Context::Zoom]
    }

    /// The list's pages, the lookup and the activation code serve the tab shown; the index's
    /// reads (a page of the background read, records read again after a top-up) serve every tab
    /// and an order's detail, so no tab switch cancels them (on a slow server one never came
    /// back).
    fn still_wants(&self, request: &Request, shown: bool) -> bool {
        match request {
            Request::Esims(q) => {
                shown && !self.search_active() && self.is_current(q) && self.list.is_near(q.page.unwrap_or(1))
            }
            Request::FindEsim { iccid, .. } => shown && self.wants_fresh(iccid),
            Request::ActivationCode { esim } => {
                shown
                    && self
                        .selected()
                        .is_some_and(|e| e.raw_order_json.iccid == esim.raw_order_json.iccid)
            }
            _ => true,
        }
    }

    fn slot(&mut self, request: &Request) -> Option<&mut dyn Slot> {
        match request {
            Request::Esims(q) => self.list.slot(q.page.unwrap_or(1)),
            Request::EsimScan { .. } => self.scan_slot(),
            Request::FindEsim { iccid, .. } => self.fresh_slot(iccid),
            Request::RefreshEsims { .. } => Some(&mut self.refreshing),
            Request::ActivationCode { esim } => self.codes.get_mut(&profile_key(esim)).map(|c| c as &mut dyn Slot),
            _ => None,
        }
    }

    fn on_answer(&mut self, id: JobId, request: &Request, payload: Payload, now: Instant) -> Option<Vec<Then>> {
        match (request, payload) {
            (Request::Esims(q), Payload::Esims(page)) => {
                let number = q.page.unwrap_or(1);
                if self.list.accept(number, id, page.esims, page.total, now) {
                    self.list_page_arrived(number);
                }
            }
            (Request::EsimScan { .. }, Payload::IndexPage { seen, total }) => {
                let found_whole = self.index_seen(&seen).found_whole;
                self.accept_scan(id, seen.entries.len(), total, now);
                if found_whole {
                    return Some(vec![Then::FoundIccid]);
                }
            }
            (Request::RefreshEsims { .. }, Payload::Refreshed) => {
                self.refreshing.resolve(id, (), now);
            }
            (Request::FindEsim { .. }, Payload::FoundEsim(found, earlier)) => {
                if self.accept_fresh(id, found, earlier, now) {
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

    fn on_event(&mut self, event: &Event) {
        match event {
            Event::MoneyMoved => self.reload(),
            Event::ToppedUp(iccid) => self.note_top_up(iccid),
            Event::ToppedUpMany(iccids) => self.note_top_ups(iccids),
            Event::Unmark(iccids) => self.marks_mut().unmark(iccids.iter().map(String::as_str)),
            Event::BulkChoice(slug, qty) => self.marks_mut().remember_choice(slug.clone(), *qty),
            Event::OrderDetailRefreshed => self.index.from_the_top(),
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

    /// An order's detail names its eSIMs: the index is read for them when not at hand.
    fn fetch_for_window(&mut self, mode: &Mode, out: &mut Outbox<'_>) {
        if let Mode::Overlay(Overlay::OrderDetail(order)) = mode
            && order.iccid.is_empty()
        {
            self.look_for_order(order);
            self.fetch_scan(out);
        }
    }

    fn deadlines(&self) -> Vec<Instant> {
        self.list.hold_until().into_iter().collect()
    }

    fn refresh(&mut self) {
        self.reload();
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

    fn search_changed(&mut self) -> bool {
        Esims::search_changed(self)
    }

    fn start_search(&mut self) {
        self.start_scan();
    }

    fn clear_search(&mut self, now: Instant) {
        self.close_search(now);
    }

    fn typing_hint(&self) -> &'static str {
        "type an ICCID or package  "
    }

    fn status(&self) -> Option<&StatusFilter> {
        Some(Esims::status(self))
    }

    fn set_status(&mut self, status: StatusFilter) {
        Esims::set_status(self, status);
    }

    /// The list of the status filter; or, for a search, the eSIMs it found (once the whole
    /// inventory is known, so that none is missing).
    fn export(&self) -> Option<Result<ExportJob, &'static str>> {
        if !self.search_active() {
            return Some(Ok(ExportJob::Esims {
                query: self.query(1),
                only: None,
            }));
        }
        if !self.index.is_complete() {
            return Some(Err(
                "The search is still reading the inventory; export when it is complete",
            ));
        }
        let only = self.result_rows().map(|r| r.iccid().to_string()).collect();
        Some(Ok(ExportJob::Esims {
            query: self.query(1),
            only: Some(only),
        }))
    }

    fn badge(&self) -> Option<String> {
        Esims::attention_count(self).map(|n| format!("(! {n})"))
    }
}
