//! Every request the app makes, in one place: where its answer goes (`slot`), while it is still
//! wanted (`still_wanted`), and what its answer does (`apply`). Requests in flight live in the
//! account's one registry of background jobs (`jobs.rs`).
//!
//! Adding a request: a `Request` variant (and `Payload`, if it brings a new shape), its call in
//! `runtime::execute`, and an arm in `slot` and in `apply` here (and in the tab's `still_wants`
//! when a tab asks for it).

use super::PurchaseForm;
use super::mode::Overlay;
use super::remote::Slot;
use super::{App, Halt, Job, Tone};
use crate::api::ApiError;
use crate::tui::forms::purchase::Stage;
use crate::tui::msg::{Effect, JobId, Payload, Request};
use std::time::Instant;

impl App {
    /// Where the answer to `request` goes, if that place still exists.
    fn slot(&mut self, request: &Request) -> Option<&mut dyn Slot> {
        match request {
            Request::Profile => Some(&mut self.account.profile),
            Request::Plans => Some(&mut self.account.tabs.catalog.plans),
            Request::Plan { slug } => match self.mode.overlay_mut() {
                Some(Overlay::PlanDetail { summary, fetched }) if &summary.slug == slug => Some(fetched),
                _ => None,
            },
            Request::Orders(q) => self.account.tabs.orders.list.slot(q.page.unwrap_or(1)),
            Request::Esims(q) => self.account.tabs.esims.list.slot(q.page.unwrap_or(1)),
            Request::EsimScan { .. } => self.account.tabs.esims.scan_slot(),
            Request::FindEsim { iccid, .. } => self.account.tabs.esims.fresh_slot(iccid.as_str()),
            Request::RefreshEsims { .. } => Some(&mut self.account.tabs.esims.refreshing),
            Request::ActivationCode { esim } => self
                .account
                .tabs
                .esims
                .codes
                .get_mut(&crate::tui::tabs::esims::profile_key(esim))
                .map(|c| c as &mut dyn Slot),
            Request::UpdateProfile(_) => Some(&mut self.account.saving),
            Request::TopupOffers { .. } => self
                .mode
                .bulk_mut()
                .and_then(super::BulkForm::request_slot)
                .map(|r| r as &mut dyn Slot),
            Request::TopupPlans { .. }
            | Request::OrdersOfPlan { .. }
            | Request::Pay(_)
            | Request::LookUpPayment { .. } => self
                .mode
                .purchase_mut()
                .and_then(PurchaseForm::request_slot)
                .map(|r| r as &mut dyn Slot),
        }
    }

    /// Whether the screen still needs this read's answer (writes are always awaited): a tab's
    /// read, while that tab is shown and still wants it.
    fn still_wanted(&self, request: &Request) -> bool {
        match owner(request) {
            Some(tab) => tab == self.tab && self.account.tabs.get(tab).still_wants(request),
            None => true,
        }
    }

    /// Reads whose answer nobody waits for any more are cancelled: dropped from the client's
    /// queue if not yet sent, aborted if in flight, and their place asks again when it needs to.
    /// A write is never cancelled: once sent, its answer is always awaited.
    pub(super) fn cancel_unwanted(&mut self, effects: &mut Vec<Effect>) {
        for (id, request) in self.account.jobs.reads() {
            if self.still_wanted(&request) && self.slot(&request).is_some_and(|s| s.awaits(id)) {
                continue;
            }
            if let Some(slot) = self.slot(&request) {
                slot.abandon(id);
            }
            self.account.jobs.cancel(id, effects);
            tracing::debug!(id, "cancelled a request nobody waits for");
        }
    }

    /// After a 401: every request is forgotten (reads cancelled) and nothing awaits an answer
    /// any more. Files being written go on and are told as before (they need no request).
    pub(super) fn abandon_requests(&mut self, effects: &mut Vec<Effect>) {
        for (id, job) in self.account.jobs.drain(|job| matches!(job, Job::Request(_)), effects) {
            if let Job::Request(request) = job
                && let Some(slot) = self.slot(&request)
            {
                slot.abandon(id);
            }
        }
    }

    pub(super) fn on_answer(
        &mut self,
        id: JobId,
        result: Result<Payload, ApiError>,
        now: Instant,
        effects: &mut Vec<Effect>,
    ) {
        let unauthorized = matches!(self.account.halt, Some(Halt::Unauthorized { .. }));
        let Some(Job::Request(request)) = self.account.jobs.finish(id) else {
            tracing::debug!(id, "dropped a stale answer");
            return;
        };
        let awaited = self.slot(&request).is_some_and(|s| s.awaits(id));
        if unauthorized || !awaited {
            tracing::debug!(id, "dropped a stale answer");
            return;
        }
        self.dirty = true;
        match result {
            Ok(payload) => self.apply(id, &request, payload, now),
            Err(error) => self.on_error(id, &request, error, now, effects),
        }
    }

    fn apply(&mut self, id: JobId, request: &Request, payload: Payload, now: Instant) {
        let tabs = &mut self.account.tabs;
        match (request, payload) {
            (Request::Profile, Payload::Profile(p)) => {
                self.account.profile.resolve(id, p, now);
            }
            (Request::Plans, Payload::Plans(plans)) => {
                tabs.catalog.accept(id, plans, now);
            }
            (Request::Plan { .. }, Payload::Plan(plan)) => {
                if let Some(Overlay::PlanDetail { fetched, .. }) = self.mode.overlay_mut() {
                    fetched.resolve(id, Box::new(plan), now);
                }
            }
            (Request::Orders(q), Payload::Orders(page)) => {
                tabs.orders
                    .list
                    .accept(q.page.unwrap_or(1), id, page.orders, page.total, now);
            }
            (Request::Esims(q), Payload::Esims(page)) => {
                let number = q.page.unwrap_or(1);
                if tabs.esims.list.accept(number, id, page.esims, page.total, now) {
                    tabs.esims.list_page_arrived(number);
                }
            }
            (Request::EsimScan { .. }, Payload::Esims(page)) => {
                tabs.esims.accept_scan(id, page.esims.len(), page.total, now);
            }
            (Request::RefreshEsims { .. }, Payload::Refreshed) => {
                tabs.esims.refreshing.resolve(id, (), now);
            }
            (Request::FindEsim { .. }, Payload::FoundEsim(found)) => {
                if tabs.esims.accept_fresh(id, found, now) {
                    self.found_iccid(now);
                }
            }
            (Request::ActivationCode { esim }, Payload::ActivationCode(code)) => {
                if let Some(slot) = tabs.esims.codes.get_mut(&crate::tui::tabs::esims::profile_key(esim)) {
                    // The client checks a decoded image; `ac` is checked here, the same way.
                    let code = code.and_then(|c| crate::domain::lpa::checked_code(&c));
                    slot.resolve(id, code, now);
                }
            }
            (Request::UpdateProfile(_), Payload::ProfileSaved(p)) => {
                self.account.saving.resolve(id, (), now);
                self.account.profile = super::remote::Remote::Loaded(super::remote::Loaded { value: p, at: now });
                if matches!(self.mode.overlay(), Some(Overlay::ProfileForm(_))) {
                    self.mode = super::Mode::Browse;
                }
                self.flash("Profile saved", Tone::Success, now);
            }
            (Request::TopupOffers { .. }, Payload::Offers(offers)) => {
                if let Some(form) = self.mode.bulk_mut() {
                    form.offered(offers);
                }
            }
            (
                Request::TopupPlans { .. }
                | Request::OrdersOfPlan { .. }
                | Request::Pay(_)
                | Request::LookUpPayment { .. },
                payload,
            ) => self.apply_purchase(id, payload, now),
            (request, payload) => {
                // Its place says so and is not asked again until `r` (never left "loading").
                tracing::warn!(?request, ?payload, "an answer that fits no request");
                if let Some(slot) = self.slot(request) {
                    slot.fail(id, misfit(), now);
                }
            }
        }
    }

    /// The purchase form's answers: the plans offered, the order list before paying, the
    /// payment placed, the order a lost answer became.
    fn apply_purchase(&mut self, id: JobId, payload: Payload, now: Instant) {
        let Some(form) = self.mode.purchase_mut() else { return };
        match payload {
            Payload::TopupOffer(offer) => form.offered(offer),
            Payload::OrderNumbers(numbers) => form.orders_before(numbers),
            Payload::Paid(paid) => {
                let number = paid.placed.order.record.provider_order_no.to_string();
                let balance = paid.placed.balance_usd;
                let topped_up = match form.what() {
                    crate::domain::purchase::Purchase::Topup { iccid } => Some(iccid.to_string()),
                    crate::domain::purchase::Purchase::Order => None,
                };
                let charged_other = paid.charged_other.as_ref().map(|other| other.sentence());
                form.paid(paid);
                if let Some(iccid) = topped_up {
                    self.account.tabs.esims.note_top_up(&iccid);
                }
                self.money_moved(balance);
                match charged_other {
                    Some(words) => self.flash(format!("Placed: order {number}. {words}"), Tone::Error, now),
                    None => self.flash(format!("Placed: order {number}"), Tone::Success, now),
                }
            }
            Payload::FoundOrder(found) => {
                let placed = found.is_some();
                form.looked_up(Ok(found));
                if placed {
                    self.money_moved(None);
                }
            }
            payload => {
                // A payment's answer that cannot be read may hide a payment made: it is looked
                // up, never sent again; a read's is a failure the form shows.
                tracing::warn!(?payload, "a purchase answer that fits no request");
                match form.stage() {
                    Stage::Sending { payment, .. } => {
                        let unread = ApiError::Decode {
                            endpoint: payment.endpoint(),
                            status: 200,
                            detail: "the answer did not fit the payment".to_string(),
                            excerpt: String::new(),
                        };
                        form.pay_failed(&unread);
                    }
                    Stage::Unknown { .. } => form.looked_up(Err(&misfit())),
                    _ => form.read_failed(&misfit()),
                }
                if let Some(slot) = form.request_slot() {
                    slot.abandon(id);
                }
            }
        }
    }

    fn on_error(&mut self, id: JobId, request: &Request, error: ApiError, now: Instant, effects: &mut Vec<Effect>) {
        tracing::warn!(kind = error.kind(), %error, "request failed");
        if error.is_auth() {
            let revoked = matches!(error, ApiError::Revoked { .. });
            self.account.halt = Some(Halt::Unauthorized {
                revoked,
                message: error.to_string(),
            });
            self.mode = super::Mode::Browse;
            self.abandon_requests(effects);
            return;
        }
        if error.status() == Some(402) {
            // The balance the header shows was wrong: read it again.
            self.account.profile.invalidate();
        }
        if self.purchase_failed(request, &error) {
            return;
        }
        let writes = request.writes();
        match &error {
            // Reads wait for the countdown and then go again by themselves; a write never does.
            ApiError::RateLimited { retry_after, .. } if !writes => {
                if let Some(slot) = self.slot(request) {
                    slot.abandon(id);
                }
                self.account.rate_limited_until = Some(now + *retry_after);
                return;
            }
            ApiError::Network { .. } | ApiError::Timeout { .. } if !writes => {
                self.account.halt = Some(Halt::Offline {
                    message: error.to_string(),
                });
            }
            _ => {}
        }
        if let (Request::UpdateProfile(_), Some(Overlay::ProfileForm(form))) = (request, self.mode.overlay_mut()) {
            form.server_error = Some(error.server_message().map_or_else(|| error.to_string(), str::to_string));
        } else if writes {
            self.flash(error.to_string(), Tone::Error, now);
        }
        // Shown in place, where the data would be; not asked again until `r`.
        if let Some(slot) = self.slot(request) {
            slot.fail(id, error, now);
        }
    }

    /// A purchase request failed: the form says so. `false` leaves the error to the general
    /// handling (a read that waits for a countdown or for `r`).
    fn purchase_failed(&mut self, request: &Request, error: &ApiError) -> bool {
        if let (Request::TopupOffers { .. }, Some(form)) = (request, self.mode.bulk_mut()) {
            form.read_failed(error);
            return !error.is_transient();
        }
        let Some(form) = self.mode.purchase_mut() else {
            return false;
        };
        match request {
            Request::Pay(_) => form.pay_failed(error),
            Request::LookUpPayment { .. } => form.looked_up(Err(error)),
            // A read before paying: the form says so (and that no money moved), in place.
            Request::TopupPlans { .. } | Request::OrdersOfPlan { .. } => {
                form.read_failed(error);
                // Offline or out of budget: the rest of the app hears of it too.
                return !error.is_transient();
            }
            _ => return false,
        }
        true
    }
}

/// The tab whose view a read serves: wanted only while that tab is shown. The index's reads
/// (a page of the background read, records read again after a top-up) serve every tab and an
/// order's detail, so no tab switch cancels them (on a slow server one never came back).
fn owner(request: &Request) -> Option<super::Tab> {
    use super::Tab;
    match request {
        Request::Orders(_) => Some(Tab::Orders),
        Request::Esims(_) | Request::FindEsim { .. } | Request::ActivationCode { .. } => Some(Tab::Esims),
        _ => None,
    }
}

/// What a place shows when the answer it got is not the kind its request asks for.
fn misfit() -> ApiError {
    ApiError::Setup("the API's answer did not fit the request".to_string())
}
