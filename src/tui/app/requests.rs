//! Every request the app makes, in one place: where its answer goes (`slot`), while it is still
//! wanted (`still_wanted`), and what its answer does (`apply`). Requests in flight live in one
//! registry, so "is anything loading", "drop a stale answer", "cancel what nobody waits for" and
//! the clean-up after a 401 are each written once, for every kind.
//!
//! Adding a request: a `Request` variant (and `Payload`, if it brings a new shape), its call in
//! `runtime::execute`, and an arm in `slot` and in `apply` here.

use super::mode::Overlay;
use super::purchase_form::{Lookup, Stage};
use super::remote::Slot;
use super::{App, Halt, Tab, Tone};
use crate::api::ApiError;
use crate::tui::msg::{Effect, Payload, Request, RequestId};
use std::collections::BTreeMap;
use std::time::Instant;

/// The requests in flight, by id.
#[derive(Debug, Default)]
pub struct Requests {
    next: RequestId,
    live: BTreeMap<RequestId, Request>,
}

impl Requests {
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }

    /// Whether a write is in flight (its answer tells whether something changed).
    pub fn writing(&self) -> bool {
        self.live.values().any(Request::writes)
    }

    fn open(&mut self, request: Request) -> (RequestId, Effect) {
        self.next += 1;
        self.live.insert(self.next, request.clone());
        (self.next, Effect::Send { id: self.next, request })
    }
}

impl App {
    /// Sends a request; the caller records the id in the request's slot.
    pub(super) fn send(&mut self, request: Request, effects: &mut Vec<Effect>) -> RequestId {
        let (id, effect) = self.requests.open(request);
        effects.push(effect);
        self.dirty = true;
        id
    }

    /// Where the answer to `request` goes, if that place still exists.
    fn slot(&mut self, request: &Request) -> Option<&mut dyn Slot> {
        match request {
            Request::Profile => Some(&mut self.account),
            Request::Plans => Some(&mut self.catalog.plans),
            Request::Plan { slug } => match self.mode.overlay_mut() {
                Some(Overlay::PlanDetail { summary, fetched }) if &summary.slug == slug => Some(fetched),
                _ => None,
            },
            Request::Orders(q) => self.orders.list.slot(q.page.unwrap_or(1)),
            Request::Esims(q) => self.esims.list.slot(q.page.unwrap_or(1)),
            Request::EsimScan { .. } => Some(self.esims.scan_slot()),
            Request::FindEsim { iccid, .. } => self.esims.fresh_slot(iccid.as_str()),
            Request::ActivationCode { esim } => self
                .esims
                .codes
                .get_mut(&esim.raw_order_json.iccid)
                .map(|c| c as &mut dyn Slot),
            Request::UpdateProfile(_) => Some(&mut self.saving),
            Request::TopupPlans { .. }
            | Request::OrdersOfPlan { .. }
            | Request::Pay(_)
            | Request::LookUpPayment { .. } => self.mode.purchase_mut().map(|f| &mut f.request as &mut dyn Slot),
        }
    }

    /// Whether the screen still needs this read's answer (writes are always awaited).
    fn still_wanted(&self, request: &Request) -> bool {
        match request {
            Request::Orders(q) => {
                self.tab == Tab::Orders && self.orders.is_current(q) && self.orders.list.is_near(q.page.unwrap_or(1))
            }
            Request::Esims(q) => {
                self.tab == Tab::Esims
                    && !self.esims.search_active()
                    && self.esims.is_current(q)
                    && self.esims.list.is_near(q.page.unwrap_or(1))
            }
            Request::EsimScan { .. } => self.tab == Tab::Esims,
            Request::FindEsim { iccid, .. } => self.tab == Tab::Esims && self.esims.wants_fresh(iccid.as_str()),
            Request::ActivationCode { esim } => {
                self.tab == Tab::Esims
                    && self
                        .esims
                        .selected()
                        .is_some_and(|e| e.raw_order_json.iccid == esim.raw_order_json.iccid)
            }
            _ => true,
        }
    }

    /// Reads whose answer nobody waits for any more are cancelled: dropped from the client's
    /// queue if not yet sent, aborted if in flight, and their place asks again when it needs to.
    /// A write is never cancelled: once sent, its answer is always awaited.
    pub(super) fn cancel_unwanted(&mut self, effects: &mut Vec<Effect>) {
        let reads: Vec<RequestId> = self
            .requests
            .live
            .iter()
            .filter(|(_, r)| !r.writes())
            .map(|(id, _)| *id)
            .collect();
        for id in reads {
            // Taken out to be looked at, and put back if it is still awaited.
            let Some(request) = self.requests.live.remove(&id) else {
                continue;
            };
            if self.still_wanted(&request) && self.slot(&request).is_some_and(|s| s.awaits(id)) {
                self.requests.live.insert(id, request);
                continue;
            }
            if let Some(slot) = self.slot(&request) {
                slot.abandon(id);
            }
            effects.push(Effect::Cancel(id));
            tracing::debug!(id, "cancelled a request nobody waits for");
        }
    }

    /// After a 401: every read in flight is cancelled and nothing awaits an answer any more.
    pub(super) fn abandon_everything(&mut self, effects: &mut Vec<Effect>) {
        for (id, request) in std::mem::take(&mut self.requests.live) {
            if let Some(slot) = self.slot(&request) {
                slot.abandon(id);
            }
            if !request.writes() {
                effects.push(Effect::Cancel(id));
            }
        }
    }

    pub(super) fn on_answer(
        &mut self,
        id: RequestId,
        request: Request,
        result: Result<Payload, ApiError>,
        now: Instant,
        effects: &mut Vec<Effect>,
    ) {
        let unauthorized = matches!(self.halt, Some(Halt::Unauthorized { .. }));
        let awaited = self.requests.live.remove(&id).is_some() && self.slot(&request).is_some_and(|s| s.awaits(id));
        if unauthorized || !awaited {
            tracing::debug!(id, "dropped a stale answer");
            return;
        }
        self.dirty = true;
        match result {
            Ok(payload) => self.apply(id, &request, payload, now, effects),
            Err(error) => self.on_error(id, &request, error, now, effects),
        }
    }

    fn apply(&mut self, id: RequestId, request: &Request, payload: Payload, now: Instant, effects: &mut Vec<Effect>) {
        if let Some(form) = self.mode.purchase_mut()
            && form.request == Some(id)
        {
            form.request = None;
        }
        match (request, payload) {
            (Request::Profile, Payload::Profile(p)) => {
                self.account.resolve(id, p, now);
            }
            (Request::Plans, Payload::Plans(plans)) => {
                self.catalog.accept(id, plans, now);
            }
            (Request::Plan { .. }, Payload::Plan(plan)) => {
                if let Some(Overlay::PlanDetail { fetched, .. }) = self.mode.overlay_mut() {
                    fetched.resolve(id, Box::new(plan), now);
                }
            }
            (Request::Orders(q), Payload::Orders(page)) => {
                self.orders
                    .list
                    .accept(q.page.unwrap_or(1), id, page.orders, page.total, now);
            }
            (Request::Esims(q), Payload::Esims(page)) => {
                let number = q.page.unwrap_or(1);
                if self.esims.list.accept(number, id, page.esims, page.total, now) {
                    self.esims.list_page_arrived(number, page.total);
                }
            }
            (Request::EsimScan { .. }, Payload::Esims(page)) => {
                let Some(step) = self.esims.accept_scan(id, page.esims, page.total, now) else {
                    return;
                };
                if step.found_whole {
                    self.found_iccid(now);
                }
                if step.complete {
                    effects.push(Effect::SaveInventory(Box::new(self.esims.scan().inventory().clone())));
                }
            }
            (Request::FindEsim { .. }, Payload::FoundEsim(found)) => {
                if self.esims.accept_fresh(id, found, now) {
                    self.found_iccid(now);
                }
            }
            (Request::ActivationCode { esim }, Payload::ActivationCode(code)) => {
                if let Some(slot) = self.esims.codes.get_mut(&esim.raw_order_json.iccid) {
                    // The client checks a decoded image; `ac` is checked here, the same way.
                    let code = code.and_then(|c| crate::esim::lpa::checked_code(&c));
                    slot.resolve(id, code, now);
                }
            }
            (Request::TopupPlans { .. }, Payload::Plans(plans)) => {
                if let Some(form) = self.mode.purchase_mut() {
                    form.offered(plans);
                }
            }
            (Request::OrdersOfPlan { .. }, Payload::OrderNumbers(numbers)) => {
                if let Some(form) = self.mode.purchase_mut() {
                    form.before = Some(numbers);
                }
            }
            (Request::Pay(_), Payload::Paid(paid)) => {
                let placed = paid.placed;
                let number = placed.order.record.provider_order_no.clone();
                let balance = placed.balance_usd;
                if let Some(form) = self.mode.purchase_mut() {
                    form.stage = Stage::Done {
                        order: Box::new(placed.order),
                        balance,
                        delivery: paid.delivery,
                    };
                }
                self.money_moved(balance);
                self.flash(format!("Placed: order {number}"), Tone::Success, now);
            }
            (Request::LookUpPayment { .. }, Payload::FoundOrder(found)) => {
                let placed = found.is_some();
                if let Some(form) = self.mode.purchase_mut()
                    && let Stage::Unknown { lookup, .. } = &mut form.stage
                {
                    *lookup = match found {
                        Some(order) => Lookup::Found(Box::new(order)),
                        None => Lookup::NotFound,
                    };
                }
                if placed {
                    self.money_moved(None);
                }
            }
            (Request::UpdateProfile(_), Payload::ProfileSaved(p)) => {
                self.saving.resolve(id, (), now);
                self.account = super::remote::Remote::Loaded(super::remote::Loaded { value: p, at: now });
                if matches!(self.mode.overlay(), Some(Overlay::ProfileForm(_))) {
                    self.mode = super::Mode::Browse;
                }
                self.flash("Profile saved", Tone::Success, now);
            }
            (request, payload) => tracing::warn!(?request, ?payload, "an answer that fits no request"),
        }
    }

    fn on_error(&mut self, id: RequestId, request: &Request, error: ApiError, now: Instant, effects: &mut Vec<Effect>) {
        tracing::warn!(kind = error.kind(), %error, "request failed");
        if error.is_auth() {
            let revoked = matches!(error, ApiError::Revoked { .. });
            self.halt = Some(Halt::Unauthorized {
                revoked,
                message: error.to_string(),
            });
            self.mode = super::Mode::Browse;
            self.abandon_everything(effects);
            return;
        }
        if error.status() == Some(402) {
            // The balance the header shows was wrong: read it again.
            self.account.invalidate();
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
                self.rate_limited_until = Some(now + *retry_after);
                return;
            }
            ApiError::Network { .. } | ApiError::Timeout { .. } if !writes => {
                self.halt = Some(Halt::Offline {
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
        let Some(form) = self.mode.purchase_mut() else {
            return false;
        };
        match request {
            Request::Pay(_) if error.outcome_unknown() => {
                form.stage = Stage::Unknown {
                    error: error.to_string(),
                    lookup: Lookup::Checking,
                };
            }
            Request::Pay(_) => {
                form.stage = match error {
                    ApiError::Repeat { earlier, .. } => Stage::Again(earlier.clone()),
                    _ => Stage::Failed(crate::purchase::explain(error, &form.what)),
                };
            }
            Request::LookUpPayment { .. } => {
                if let Stage::Unknown { lookup, .. } = &mut form.stage {
                    *lookup = match error {
                        ApiError::Ambiguous { orders, .. } => Lookup::Ambiguous(orders.clone()),
                        _ => Lookup::Failed(error.to_string()),
                    };
                }
            }
            // A read before paying: the form says so (and that no money moved), in place.
            Request::TopupPlans { .. } | Request::OrdersOfPlan { .. } => {
                form.stage = Stage::Failed(crate::purchase::explain(error, &form.what));
                form.request = None;
                // Offline or out of budget: the rest of the app hears of it too.
                return !matches!(
                    error,
                    ApiError::RateLimited { .. } | ApiError::Network { .. } | ApiError::Timeout { .. }
                );
            }
            _ => return false,
        }
        form.request = None;
        true
    }
}
