//! The dashboard's state and `update`: messages in, effects out, no I/O.
//!
//! Requests follow from state: after every message, `fetch_missing` asks for whatever the screen
//! needs and does not have (the header's profile, the catalog, the pages around each cursor).
//! Each answer is matched to the request still awaited for its place; any other is stale and
//! dropped, so fresh data is never overwritten by old.

mod catalog;
mod esims;
mod input;
mod keys;
mod lists;
mod paged;
mod profile_form;
mod purchase_form;
mod tab;

pub use catalog::{Catalog, SortKey};
pub use esims::{Code, Esims, SCAN_PAGE_SIZE, Scan};
pub use input::TextInput;
pub use lists::{Orders, PAGE_SIZE, status_choices};
pub use paged::Paged;
pub use profile_form::{FIELDS as PROFILE_FIELDS, ProfileForm};
pub use purchase_form::{Lookup, MAX_QTY, PurchaseForm, Stage};
pub use tab::Tab;

use super::msg::{Effect, Msg, Payload, Request, RequestId};
use crate::api::ApiError;
use crate::api::model::{Order, Plan, Profile};
use std::time::{Duration, Instant};

/// How long a message in the status line stays.
pub const FLASH_FOR: Duration = Duration::from_secs(5);
/// Spinner frame interval while something loads.
pub const SPINNER_EVERY: Duration = Duration::from_millis(120);

/// The reseller's profile, shown in the header and on the Profile tab.
#[derive(Debug, Clone)]
pub struct Account {
    pub profile: Option<Profile>,
    pub stale: bool,
    pub request: Option<RequestId>,
}

/// A window drawn over the tab.
#[derive(Debug, Clone)]
pub enum Overlay {
    Help,
    PlanDetail {
        summary: Box<Plan>,
        fetched: Option<Box<Plan>>,
        request: Option<RequestId>,
        error: Option<String>,
    },
    OrderDetail(Box<Order>),
    /// The status filter of the Orders or My eSIMs tab.
    StatusPicker {
        tab: Tab,
        cursor: usize,
    },
    ProfileForm(Box<ProfileForm>),
    /// A top-up or a purchase.
    Purchase(Box<PurchaseForm>),
    /// "Top up which eSIM?": an ICCID typed in.
    IccidPrompt {
        input: TextInput,
        error: Option<String>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flash {
    pub text: String,
    pub error: bool,
    pub until: Instant,
}

/// Why requests stopped until the user acts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Halt {
    /// 401: nothing more is sent; the view is replaced by a banner.
    Unauthorized { revoked: bool, message: String },
    /// The network failed; `r` tries again.
    Offline { message: String },
}

pub struct App {
    pub tab: Tab,
    pub account: Account,
    pub catalog: Catalog,
    pub orders: Orders,
    pub esims: Esims,
    pub overlay: Option<Overlay>,
    pub flash: Option<Flash>,
    pub halt: Option<Halt>,
    /// A 429: requests wait until then, and the status line counts down.
    pub rate_limited_until: Option<Instant>,
    /// The profile update in flight.
    pub saving: Option<RequestId>,
    /// Running against the built-in sandbox.
    pub demo: bool,
    pub spinner: usize,
    next_id: RequestId,
    dirty: bool,
    quit: bool,
}

impl App {
    pub fn new(demo: bool) -> Self {
        Self {
            tab: Tab::Catalog,
            account: Account {
                profile: None,
                stale: true,
                request: None,
            },
            catalog: Catalog::default(),
            orders: Orders::default(),
            esims: Esims::default(),
            overlay: None,
            flash: None,
            halt: None,
            rate_limited_until: None,
            saving: None,
            demo,
            spinner: 0,
            next_id: 0,
            dirty: true,
            quit: false,
        }
    }

    /// The first requests, before any message.
    pub fn start(&mut self) -> Vec<Effect> {
        let mut effects = Vec::new();
        self.fetch_missing(&mut effects);
        effects
    }

    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// Whether the screen must be drawn again; clears the flag.
    pub fn take_dirty(&mut self) -> bool {
        std::mem::take(&mut self.dirty)
    }

    pub fn update(&mut self, msg: Msg, now: Instant) -> Vec<Effect> {
        let mut effects = Vec::new();
        match msg {
            Msg::Key(key) => {
                self.dirty = true;
                self.on_key(key, now, &mut effects);
            }
            Msg::Mouse(mouse) => self.on_mouse(mouse),
            Msg::Resize => self.dirty = true,
            Msg::Tick => self.on_tick(now),
            Msg::Answer(answer) => self.on_answer(answer.id, answer.request, answer.result, now),
            Msg::Copied { what, result } => match result {
                Ok(delivery) => self.flash(format!("{what} {}", delivery.describe()), false, now),
                Err(why) => self.flash(format!("{what} not copied: {why}"), true, now),
            },
        }
        if self.quit {
            effects.push(Effect::Quit);
        } else {
            self.fetch_missing(&mut effects);
        }
        effects
    }

    /// Whether anything is being fetched or sent (the spinner turns).
    pub fn is_loading(&self) -> bool {
        self.account.request.is_some()
            || self.catalog.request.is_some()
            || self.orders.list.is_loading()
            || self.esims.list.is_loading()
            || self.esims.scan.request.is_some()
            || self.esims.codes.values().any(|c| matches!(c, Code::Loading(_)))
            || self.saving.is_some()
            || matches!(self.overlay, Some(Overlay::PlanDetail { request: Some(_), .. }))
            || matches!(&self.overlay, Some(Overlay::Purchase(f)) if f.request.is_some())
    }

    /// When the app next needs a `Tick`; `None` when idle (no timer runs, no CPU is used).
    pub fn next_wake(&self, now: Instant) -> Option<Instant> {
        let mut wake: Option<Instant> = None;
        let mut at = |t: Instant| wake = Some(wake.map_or(t, |w| w.min(t)));
        if self.halt.is_some() {
            return None;
        }
        if self.is_loading() {
            at(now + SPINNER_EVERY);
        }
        if let Some(until) = self.rate_limited_until {
            // Each whole second of the countdown, and the end.
            let left = until.saturating_duration_since(now);
            at(now
                + Duration::from_nanos(u64::from(left.subsec_nanos()))
                    .max(Duration::from_millis(1))
                    .min(left));
            at(until);
        }
        if let Some(f) = &self.flash {
            at(f.until);
        }
        if let Some(due) = self.orders.search_due {
            at(due);
        }
        wake
    }

    pub fn flash(&mut self, text: impl Into<String>, error: bool, now: Instant) {
        self.flash = Some(Flash {
            text: text.into(),
            error,
            until: now + FLASH_FOR,
        });
        self.dirty = true;
    }

    fn on_tick(&mut self, now: Instant) {
        if self.is_loading() {
            self.spinner = self.spinner.wrapping_add(1);
            self.dirty = true;
        }
        if let Some(until) = self.rate_limited_until {
            self.dirty = true;
            if now >= until {
                self.rate_limited_until = None;
            }
        }
        if self.flash.as_ref().is_some_and(|f| now >= f.until) {
            self.flash = None;
            self.dirty = true;
        }
        if self.orders.search_due.is_some_and(|due| now >= due) {
            self.orders.apply_search();
            self.dirty = true;
        }
    }

    /// Asks for what the screen needs and does not have. Nothing is sent while halted or
    /// rate limited; a page that failed is not asked again until the user refreshes.
    fn fetch_missing(&mut self, effects: &mut Vec<Effect>) {
        if self.halt.is_some() || self.rate_limited_until.is_some() {
            return;
        }
        if self.account.stale && self.account.request.is_none() {
            let id = self.send(Request::Profile, effects);
            self.account.request = Some(id);
        }
        if self.tab == Tab::Catalog && self.catalog.stale && self.catalog.request.is_none() {
            let id = self.send(Request::Plans, effects);
            self.catalog.request = Some(id);
        }
        if let Some(Overlay::PlanDetail {
            summary,
            fetched: None,
            request: None,
            error: None,
        }) = &self.overlay
        {
            let slug = summary.slug.clone();
            let id = self.send(Request::Plan { slug }, effects);
            if let Some(Overlay::PlanDetail { request, .. }) = &mut self.overlay {
                *request = Some(id);
            }
        }
        if let Some(request) = self.purchase_request() {
            let id = self.send(request, effects);
            if let Some(Overlay::Purchase(form)) = &mut self.overlay {
                form.request = Some(id);
            }
        }
        if self.tab == Tab::Orders {
            for page in self.orders.list.wanted() {
                let id = self.send(Request::Orders(self.orders.query(page)), effects);
                self.orders.list.started(page, id);
            }
        }
        if self.tab == Tab::Esims {
            if !self.esims.search_active() {
                for page in self.esims.list.wanted() {
                    let id = self.send(Request::Esims(self.esims.query(page)), effects);
                    self.esims.list.started(page, id);
                }
            }
            if self.esims.scan.wants_page() {
                let page = self.esims.scan.next_page();
                let id = self.send(Request::EsimScan { page }, effects);
                self.esims.scan.request = Some(id);
            }
            self.fetch_code(effects);
        }
    }

    /// What the purchase form needs read now: the offered top-ups, the order list before paying,
    /// or, after an unknown outcome, the order list again. Never the payment itself: only Enter
    /// on the confirmation sends that.
    fn purchase_request(&self) -> Option<Request> {
        let Some(Overlay::Purchase(form)) = &self.overlay else {
            return None;
        };
        if form.request.is_some() {
            return None;
        }
        let slug = form.plan().map(|p| p.slug.clone());
        match (&form.stage, &form.before) {
            (Stage::Loading, _) => form.iccid().map(|iccid| Request::TopupPlans {
                iccid: iccid.to_string(),
            }),
            (Stage::Confirming, None) => slug.map(|slug| Request::OrdersOfPlan { slug }),
            (
                Stage::Unknown {
                    lookup: Lookup::Checking,
                    ..
                },
                Some(before),
            ) => slug.map(|slug| Request::FindNewOrder {
                slug,
                iccid: form.iccid().map(str::to_string),
                before: before.clone(),
            }),
            _ => None,
        }
    }

    /// After money moved: the header, Orders and My eSIMs are fetched again.
    fn money_moved(&mut self, balance: Option<rust_decimal::Decimal>) {
        if let (Some(profile), Some(balance)) = (&mut self.account.profile, balance) {
            profile.balance_usd = Some(balance);
        }
        self.account.stale = true;
        self.orders.list.reset();
        self.esims.list.reload();
        self.esims.restart_scan();
    }

    /// The selected eSIM's activation code: from `ac` at once, else its QR image is fetched.
    fn fetch_code(&mut self, effects: &mut Vec<Effect>) {
        let Some(esim) = self.esims.selected() else { return };
        let iccid = esim.raw_order_json.iccid.clone();
        if iccid.is_empty() || self.esims.codes.contains_key(&iccid) {
            return;
        }
        if let Some(ac) = esim
            .raw_order_json
            .ac
            .as_deref()
            .map(str::trim)
            .filter(|ac| !ac.is_empty())
        {
            let ac = ac.to_string();
            self.esims.codes.insert(iccid, Code::Ready(ac));
            return;
        }
        let request = Request::ActivationCode {
            esim: Box::new(esim.clone()),
        };
        let id = self.send(request, effects);
        self.esims.codes.insert(iccid, Code::Loading(id));
    }

    fn send(&mut self, request: Request, effects: &mut Vec<Effect>) -> RequestId {
        self.next_id += 1;
        self.dirty = true;
        effects.push(Effect::Send {
            id: self.next_id,
            request,
        });
        self.next_id
    }

    /// Whether this answer is the one still awaited for its place; marks it received.
    fn claim(&mut self, id: RequestId, request: &Request) -> bool {
        let mine = |slot: &mut Option<RequestId>| {
            let ok = *slot == Some(id);
            if ok {
                *slot = None;
            }
            ok
        };
        match request {
            Request::Profile => mine(&mut self.account.request),
            Request::Plans => mine(&mut self.catalog.request),
            Request::Plan { slug } => match &mut self.overlay {
                Some(Overlay::PlanDetail { summary, request, .. }) if &summary.slug == slug => mine(request),
                _ => false,
            },
            Request::Orders(q) => self.orders.list.is_inflight(q.page.unwrap_or(1), id),
            Request::Esims(q) => self.esims.list.is_inflight(q.page.unwrap_or(1), id),
            Request::EsimScan { .. } => self.esims.scan.request == Some(id),
            Request::ActivationCode { esim } => {
                self.esims.codes.get(&esim.raw_order_json.iccid) == Some(&Code::Loading(id))
            }
            Request::UpdateProfile(_) => mine(&mut self.saving),
            Request::TopupPlans { .. }
            | Request::OrdersOfPlan { .. }
            | Request::Topup(_)
            | Request::PlaceOrder(_)
            | Request::FindNewOrder { .. } => match &mut self.overlay {
                Some(Overlay::Purchase(form)) => mine(&mut form.request),
                _ => false,
            },
        }
    }

    fn on_answer(
        &mut self,
        id: RequestId,
        request: Request,
        result: Result<crate::tui::msg::Payload, ApiError>,
        now: Instant,
    ) {
        if matches!(self.halt, Some(Halt::Unauthorized { .. })) || !self.claim(id, &request) {
            tracing::debug!(id, "dropped a stale answer");
            return;
        }
        self.dirty = true;
        match result {
            Ok(payload) => self.apply(id, &request, payload, now),
            Err(error) => self.on_error(id, &request, error, now),
        }
    }

    fn apply(&mut self, id: RequestId, request: &Request, payload: Payload, now: Instant) {
        match (request, payload) {
            (_, Payload::Profile(p)) => {
                self.account.profile = Some(p);
                self.account.stale = false;
            }
            (Request::Plans, Payload::Plans(plans)) => {
                self.catalog.set_plans(plans);
                self.catalog.stale = false;
            }
            (_, Payload::Plan(plan)) => {
                if let Some(Overlay::PlanDetail { fetched, .. }) = &mut self.overlay {
                    *fetched = Some(Box::new(plan));
                }
            }
            (Request::Orders(q), Payload::Orders(page)) => {
                self.orders
                    .list
                    .accept(q.page.unwrap_or(1), id, page.orders, page.total);
            }
            (Request::Esims(q), Payload::Esims(page)) => {
                self.esims.list.accept(q.page.unwrap_or(1), id, page.esims, page.total);
            }
            (Request::EsimScan { .. }, Payload::Esims(page)) => {
                if self.esims.accept_scan(id, page.esims, page.total) == Some(true) {
                    self.flash("Found the eSIM with that ICCID", false, now);
                }
            }
            (Request::ActivationCode { esim }, Payload::ActivationCode(code)) => {
                let state = match code {
                    Ok(code) => Code::Ready(code),
                    Err(why) => Code::Failed(why),
                };
                self.esims.codes.insert(esim.raw_order_json.iccid.clone(), state);
            }
            (Request::TopupPlans { .. }, Payload::Plans(plans)) => {
                if let Some(Overlay::Purchase(form)) = &mut self.overlay {
                    form.offered(plans);
                }
            }
            (_, Payload::OrderNumbers(numbers)) => {
                if let Some(Overlay::Purchase(form)) = &mut self.overlay {
                    form.before = Some(numbers);
                }
            }
            (_, Payload::Placed(placed)) => {
                let number = placed.order.record.provider_order_no.clone();
                if let Some(Overlay::Purchase(form)) = &mut self.overlay {
                    form.stage = Stage::Done {
                        order: Box::new(placed.order),
                        balance: placed.balance_usd,
                    };
                }
                self.money_moved(placed.balance_usd);
                self.flash(format!("Placed: order {number}"), false, now);
            }
            (_, Payload::FoundOrder(found)) => {
                let placed = found.is_some();
                if let Some(Overlay::Purchase(form)) = &mut self.overlay
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
            (_, Payload::ProfileSaved(p)) => {
                self.account.profile = Some(p);
                if matches!(self.overlay, Some(Overlay::ProfileForm(_))) {
                    self.overlay = None;
                }
                self.flash("Profile saved", false, now);
            }
            (request, payload) => tracing::warn!(?request, ?payload, "an answer that fits no request"),
        }
    }

    fn on_error(&mut self, id: RequestId, request: &Request, error: ApiError, now: Instant) {
        tracing::warn!(kind = error.kind(), %error, "request failed");
        match request {
            Request::Orders(q) => {
                self.orders.list.failed(q.page.unwrap_or(1), id);
            }
            Request::Esims(q) => {
                self.esims.list.failed(q.page.unwrap_or(1), id);
            }
            Request::EsimScan { .. } => self.esims.scan.request = None,
            Request::ActivationCode { esim } => {
                // Asked again later (after a countdown or `r`) rather than shown as failed.
                self.esims.codes.remove(&esim.raw_order_json.iccid);
            }
            _ => {}
        }
        if self.purchase_failed(request, &error) {
            return;
        }
        if error.is_auth() {
            let revoked = matches!(error, ApiError::Revoked { .. });
            self.halt = Some(Halt::Unauthorized {
                revoked,
                message: error.to_string(),
            });
            self.overlay = None;
            // Nothing more will be sent, and answers still on their way are dropped.
            self.account.request = None;
            self.catalog.request = None;
            self.orders.list.reload();
            self.esims.list.reload();
            self.esims.scan.request = None;
            self.esims.codes.retain(|_, c| !matches!(c, Code::Loading(_)));
            self.saving = None;
            return;
        }
        let writes = request.writes();
        match &error {
            // Reads wait for the countdown and then go again by themselves; a write never does.
            ApiError::RateLimited { retry_after, .. } if !writes => {
                self.rate_limited_until = Some(now + *retry_after);
            }
            ApiError::Network { .. } | ApiError::Timeout { .. } if !writes => {
                self.halt = Some(Halt::Offline {
                    message: error.to_string(),
                });
            }
            _ => {
                let message = error.server_message().map_or_else(|| error.to_string(), str::to_string);
                match (&mut self.overlay, request) {
                    (Some(Overlay::ProfileForm(form)), Request::UpdateProfile(_)) => form.server_error = Some(message),
                    (Some(Overlay::PlanDetail { error: slot, .. }), Request::Plan { .. }) => *slot = Some(message),
                    _ => self.flash(error.to_string(), true, now),
                }
                // A failed read is not asked again by itself: `r` does.
                match request {
                    Request::Profile => self.account.stale = false,
                    Request::Plans => self.catalog.stale = false,
                    Request::Orders(q) => self.orders.list.give_up(q.page.unwrap_or(1)),
                    Request::Esims(q) => self.esims.list.give_up(q.page.unwrap_or(1)),
                    Request::EsimScan { .. } => self.esims.scan.failed = true,
                    _ => {}
                }
            }
        }
    }

    /// A purchase request failed: the form says so. `false` leaves the error to the general
    /// handling (a 401, or a read that waits for a countdown or for `r`).
    fn purchase_failed(&mut self, request: &Request, error: &ApiError) -> bool {
        if error.status() == Some(402) {
            // The balance the header shows was wrong: read it again.
            self.account.stale = true;
        }
        let Some(Overlay::Purchase(form)) = &mut self.overlay else {
            return false;
        };
        if error.is_auth() {
            return false;
        }
        match request {
            Request::Topup(_) | Request::PlaceOrder(_) if error.outcome_unknown() => {
                form.stage = Stage::Unknown {
                    error: error.to_string(),
                    lookup: Lookup::Checking,
                };
            }
            Request::Topup(_) | Request::PlaceOrder(_) => {
                form.stage = Stage::Failed(crate::purchase::explain(error, &form.what));
            }
            Request::FindNewOrder { .. } => {
                if let Stage::Unknown { lookup, .. } = &mut form.stage {
                    *lookup = Lookup::Failed(error.to_string());
                }
            }
            Request::TopupPlans { .. } | Request::OrdersOfPlan { .. } => {
                if matches!(
                    error,
                    ApiError::RateLimited { .. } | ApiError::Network { .. } | ApiError::Timeout { .. }
                ) {
                    return false;
                }
                form.stage = Stage::Failed(crate::purchase::explain(error, &form.what));
            }
            _ => return false,
        }
        true
    }

    /// `r`: the header and the current view, fetched again.
    fn refresh(&mut self) {
        if matches!(self.halt, Some(Halt::Unauthorized { .. })) {
            return;
        }
        self.halt = None;
        self.account.stale = true;
        match self.tab {
            Tab::Catalog => self.catalog.stale = true,
            Tab::Orders => self.orders.list.reload(),
            Tab::Esims => {
                self.esims.list.reload();
                self.esims.restart_scan();
            }
            Tab::Profile => {}
        }
    }
}
