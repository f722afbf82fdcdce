//! The top-up and purchase form: money moves exactly once, only for a plan the API offered.
//!
//! Stages, each holding what it needs: Loading (which top-ups are offered) → Empty, or Choosing
//! (plan, quantity) → Confirming (totals, balance after; the order list is read for what exists)
//! → Sending (one payment; keys cannot send another) → Done, Failed (the server's words, nothing
//! retried), Again (placed minutes ago: a second confirmation sends it again), or Unknown (no
//! answer: nothing is resent; the order list is read for the order instead).
//!
//! The fields are private: a stage changes only through the methods below, and each refuses
//! what its stage does not allow (a payment is sent only from a confirmation whose order list
//! was read, with nothing in flight).

mod answers;
pub mod view;

use crate::forms::plan_choice::{PaymentForm, PlanChoice};
use crate::keymap::{Action, Chord};
use crate::kit::jobs::Outbox;
use crate::msg::{JobId, Request};
use esimdash_api::model::{Order, Plan};
use esimdash_api::{ApiError, Delivery, Payment};
use esimdash_domain::iccid::Iccid;
use esimdash_domain::order_no::OrderNo;
use esimdash_domain::purchase::Purchase;
use esimdash_domain::purchase::Spend;
use esimdash_front::purchase::TopupOffer;
use rust_decimal::Decimal;
use std::collections::HashSet;

#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    Checking,
    Found(Box<Order>),
    NotFound,
    /// Several new orders could each be this payment: none is claimed.
    Ambiguous(Vec<String>),
    Failed(String),
}

/// Order numbers of the chosen plan that existed before paying.
pub type Before = HashSet<OrderNo>;

/// The order numbers a payment recorded as there before it.
fn recorded_before(payment: &Payment) -> Before {
    payment
        .orders_before
        .iter()
        .flatten()
        .map(|n| OrderNo::from(n.as_str()))
        .collect()
}

#[derive(Debug, Clone, PartialEq)]
pub enum Stage {
    /// Asking which top-ups are offered.
    Loading {
        request: Option<JobId>,
    },
    /// Nothing is offered; why, when the eSIM's status tells.
    Empty(String),
    Choosing,
    /// The totals shown; the order list read (`before`) before paying is allowed.
    Confirming {
        before: Option<Before>,
        request: Option<JobId>,
    },
    /// The same payment was placed minutes ago (or may have been): not sent; a second
    /// confirmation sends it again.
    Again {
        earlier: String,
        before: Before,
    },
    Sending {
        payment: Payment,
        request: Option<JobId>,
    },
    Done {
        order: Box<Order>,
        balance: Option<Decimal>,
        delivery: Delivery,
        /// Placed for another total than the one confirmed: the window says so first.
        charged_other: Option<esimdash_domain::purchase::ChargedOther>,
    },
    Failed(String),
    /// No answer came: the payment is looked up in the order list, never sent again.
    Unknown {
        error: String,
        payment: Payment,
        lookup: Lookup,
        request: Option<JobId>,
    },
}

#[derive(Debug, Clone)]
pub struct PurchaseForm {
    what: Purchase,
    choice: PlanChoice,
    stage: Stage,
    /// Why an eSIM would be offered nothing, from its class (shown if nothing is offered).
    hint: Option<&'static str>,
    /// Where the index saw the eSIM: its record is read there when the server has no lookup.
    seen: Option<esimdash_inventory::Whereabouts>,
    /// The caveat said on every stage before paying, so the confirmation asks knowing it: the
    /// eSIM's state could not be confirmed, or the row chosen is an earlier profile.
    unsure: Option<String>,
    /// What is left today of the cap of this session's seat at a team gateway, where it has one
    /// (`Seat::left_today`): a total past it is told at review and never sent (the gateway
    /// stays the final guard).
    pub seat_left: Option<Decimal>,
    /// The plan of the eSIM being topped up, and whether the window says it needs a new eSIM
    /// (it can never take data): `b` then buys one of that plan, as the pane's `b` does.
    renew: Option<String>,
    renews: bool,
}

impl PurchaseForm {
    pub fn topup(iccid: Iccid, hint: Option<&'static str>, seen: Option<esimdash_inventory::Whereabouts>) -> Self {
        Self {
            what: Purchase::Topup { iccid },
            choice: PlanChoice::new(Vec::new()),
            stage: Stage::Loading { request: None },
            hint,
            seen,
            unsure: None,
            seat_left: None,
            renew: None,
            renews: false,
        }
    }

    pub fn order(plan: Plan) -> Self {
        Self {
            what: Purchase::Order,
            choice: PlanChoice::new(vec![plan]),
            stage: Stage::Choosing,
            hint: None,
            seen: None,
            unsure: None,
            seat_left: None,
            renew: None,
            renews: false,
        }
    }

    /// The caveat of this top-up, if any (see the field).
    pub fn unsure(&self) -> Option<&str> {
        self.unsure.as_deref()
    }

    pub fn what(&self) -> &Purchase {
        &self.what
    }

    pub fn stage(&self) -> &Stage {
        &self.stage
    }

    /// The plans offered, the one chosen and the quantity.
    pub fn choice(&self) -> &PlanChoice {
        &self.choice
    }

    pub fn plans(&self) -> &[Plan] {
        self.choice.plans()
    }

    pub fn cursor(&self) -> usize {
        self.choice.cursor()
    }

    pub fn qty(&self) -> u32 {
        self.choice.qty()
    }

    pub fn plan(&self) -> Option<&Plan> {
        self.choice.plan()
    }

    pub fn unit_price(&self) -> Option<Decimal> {
        self.plan().and_then(Plan::sell_price)
    }

    /// The total, when it can be computed exactly (see `amount_problem`).
    pub fn total(&self) -> Option<Decimal> {
        self.unit_price()
            .and_then(|u| esimdash_front::purchase::line_total(u, self.qty()).ok())
    }

    /// Why the amounts of this choice cannot be paid (a negative price, a total or a balance
    /// after out of range), in words; nothing is sent then.
    pub fn amount_problem(&self, balance: Option<Decimal>) -> Option<String> {
        let total = esimdash_front::purchase::line_total(self.unit_price()?, self.qty());
        let after = total
            .clone()
            .and_then(|t| balance.map_or(Ok(t), |b| esimdash_front::purchase::balance_after(b, t)));
        if let Err(why) = after {
            return Some(why);
        }
        let (total, left) = (total.ok()?, self.seat_left?);
        (total > left).then(|| {
            format!(
                "{} USD is more than the {} USD left of this seat's daily cap today (the team gateway refuses it)",
                esimdash_domain::money::format_amount(total),
                esimdash_domain::money::format_amount(left)
            )
        })
    }

    /// The plan a new eSIM of would replace the one topped up (`b` where it can take no data).
    pub fn renewing(mut self, slug: Option<String>) -> Self {
        self.renew = slug.filter(|s| !s.is_empty());
        self
    }

    /// `b` on "cannot be topped up": the plan to buy a new eSIM of, where the window offers it.
    pub fn renew_plan(&self) -> Option<&str> {
        (matches!(self.stage, Stage::Empty(_)) && self.renews)
            .then_some(self.renew.as_deref())
            .flatten()
    }

    /// The ICCID when topping up (for the request and the lookup).
    pub fn iccid(&self) -> Option<&Iccid> {
        self.what.iccid()
    }

    /// Whether the order list was read, so that paying is allowed.
    pub fn ready_to_pay(&self) -> bool {
        matches!(
            self.stage,
            Stage::Confirming {
                before: Some(_),
                request: None
            } | Stage::Again { .. }
        )
    }

    /// The one request of this form in flight, as its slot (its answer is awaited there).
    pub fn request_slot(&mut self) -> Option<&mut Option<JobId>> {
        match &mut self.stage {
            Stage::Loading { request }
            | Stage::Confirming { request, .. }
            | Stage::Sending { request, .. }
            | Stage::Unknown { request, .. } => Some(request),
            _ => None,
        }
    }

    /// Reads what the stage needs: the offered top-ups, the order list before paying, or, after
    /// an unknown outcome, the order list again. Never the payment itself: only `pay` sends it.
    pub fn fetch(&mut self, out: &mut Outbox<'_>) {
        let slug = self.plan().map(|p| p.slug.clone());
        let iccid = self.iccid().cloned();
        let seen = self.seen;
        match &mut self.stage {
            Stage::Loading {
                request: request @ None,
            } => {
                if let Some(iccid) = iccid {
                    *request = Some(out.send(Request::TopupPlans { iccid, seen }));
                }
            }
            Stage::Confirming {
                before: None,
                request: request @ None,
            } => {
                if let Some(slug) = slug {
                    *request = Some(out.send(Request::OrdersOfPlan { slug, iccid }));
                }
            }
            Stage::Unknown {
                payment,
                lookup: Lookup::Checking,
                request: request @ None,
                ..
            } => {
                let before = recorded_before(payment);
                let payment = Box::new(payment.clone());
                *request = Some(out.send(Request::LookUpPayment { payment, before }));
            }
            _ => {}
        }
    }

    /// What may be paid arrived: the plans, or why nothing may be (`purchase::judge_topup`).
    pub fn offered(&mut self, offer: TopupOffer) {
        if !matches!(self.stage, Stage::Loading { .. }) {
            return;
        }
        let dead = offer.cannot_take_data();
        // Never data again (not merely pending): a new eSIM of the plan is what helps.
        self.renews =
            (dead.is_some() || self.hint.is_some()) && dead != Some(esimdash_domain::esim_state::Class::Pending);
        match offer {
            TopupOffer::Refused { why, .. } if dead.is_some() => {
                self.stage = Stage::Empty(format!("No top-up: {why}."));
            }
            // The row chosen cannot take data and its ICCID's record could not be read to say
            // otherwise: the server's offer alone pays nothing.
            TopupOffer::Plans { unsure: Some(_), .. } if self.hint.is_some() => {
                let hint = self.hint.unwrap_or_default();
                self.stage = Stage::Empty(format!(
                    "No top-up: {hint}, as last read (its current record could not be read to say otherwise)."
                ));
            }
            TopupOffer::Refused { .. } => {
                let why = self.hint.unwrap_or("the API offers no top-up for it");
                self.stage = Stage::Empty(format!("This eSIM cannot be topped up now: {why}."));
            }
            TopupOffer::Plans { plans, unsure } => {
                // The row chosen could not take data, yet its ICCID's current record can: a
                // reissued ICCID, whose earlier profile was the row.
                let earlier = self.hint.map(|hint| {
                    format!("the row chosen cannot take data ({hint}), but this ICCID's current profile can: the top-up goes to the current profile")
                });
                self.choice = PlanChoice::new(plans);
                self.unsure = match (earlier, unsure) {
                    (Some(a), Some(b)) => Some(format!("{a}; {b}")),
                    (a, b) => a.or(b),
                };
                self.stage = Stage::Choosing;
            }
        }
    }

    /// The order list before paying was read.
    pub fn orders_before(&mut self, numbers: Before) {
        if let Stage::Confirming { before, request } = &mut self.stage {
            *before = Some(numbers);
            *request = None;
        }
    }

    /// The payment for the confirmed choice, with a fresh idempotency key.
    fn payment(&self) -> Option<Payment> {
        let spend = Spend {
            what: self.what.clone(),
            slug: self.plan()?.slug.clone(),
            qty: self.qty(),
        };
        Some(Payment::new(spend, self.total()))
    }

    /// The payment was placed.
    pub fn paid(&mut self, paid: esimdash_api::Paid) {
        if matches!(self.stage, Stage::Sending { .. }) {
            self.stage = Stage::Done {
                balance: paid.placed.balance_usd,
                order: Box::new(paid.placed.order),
                delivery: paid.delivery,
                charged_other: paid.charged_other,
            };
        }
    }

    /// The payment failed: refused (nothing moved), a repeat (asked again), or without an
    /// answer (looked up, not resent).
    pub fn pay_failed(&mut self, error: &ApiError) {
        let Stage::Sending { payment, .. } = &self.stage else {
            return;
        };
        let before = recorded_before(payment);
        self.stage = match error {
            e if e.outcome_unknown() => Stage::Unknown {
                error: e.to_string(),
                payment: payment.clone(),
                lookup: Lookup::Checking,
                request: None,
            },
            ApiError::Repeat { earlier, .. } => Stage::Again {
                earlier: earlier.clone(),
                before,
            },
            _ => Stage::Failed(esimdash_front::purchase::explain(error, &self.what)),
        };
    }

    /// What the order list said of a payment whose answer was lost.
    pub fn looked_up(&mut self, result: Result<Option<Order>, &ApiError>) {
        if let Stage::Unknown { lookup, request, .. } = &mut self.stage {
            *request = None;
            *lookup = match result {
                Ok(Some(order)) => Lookup::Found(Box::new(order)),
                Ok(None) => Lookup::NotFound,
                Err(ApiError::Ambiguous { orders, .. }) => Lookup::Ambiguous(orders.clone()),
                Err(e) => Lookup::Failed(e.to_string()),
            };
        }
    }

    /// A read before paying failed: the form says so (and that no money moved), in place.
    pub fn read_failed(&mut self, error: &ApiError) {
        if matches!(self.stage, Stage::Loading { .. } | Stage::Confirming { .. }) {
            self.stage = Stage::Failed(esimdash_front::purchase::explain(error, &self.what));
        }
    }
}

impl PurchaseForm {
    /// Its keys. Only `pay` on the confirmation sends, and only once: the form leaves
    /// `Confirming` as it sends, and no key does anything while the answer is awaited.
    pub fn on_action(
        &mut self,
        action: Action,
        chord: Chord,
        balance: Option<Decimal>,
        out: &mut Outbox<'_>,
    ) -> Vec<crate::kit::then::Then> {
        if action == Action::Buy {
            return self.renew_plan().map_or_else(Vec::new, |slug| {
                vec![crate::kit::then::Then::Hand {
                    tab: crate::kit::tab::Tab::Catalog,
                    action,
                    about: crate::kit::then::About::Plan(slug.to_string()),
                }]
            });
        }
        if !self.act(action, chord, balance, out) && action == Action::Close {
            return vec![crate::kit::then::Then::Close];
        }
        Vec::new()
    }

    /// Where its keys go at each stage.
    pub fn contexts(&self) -> Vec<crate::keymap::Context> {
        use crate::keymap::Context;
        match self.stage() {
            Stage::Choosing => vec![Context::Purchase],
            Stage::Confirming { .. } | Stage::Again { .. } => vec![Context::Confirm],
            // Nothing may interrupt a payment or its lookup.
            Stage::Sending { .. }
            | Stage::Unknown {
                lookup: Lookup::Checking,
                ..
            } => vec![],
            _ => vec![Context::Outcome],
        }
    }
}

impl PaymentForm for PurchaseForm {
    /// A key of the choice (plan, quantity), only while choosing; `false` if it is none.
    fn choose(&mut self, action: Action, chord: Chord) -> bool {
        self.stage == Stage::Choosing && self.choice.act(action, chord)
    }

    /// The choice is reviewed: the order list is read before paying is allowed.
    fn confirm(&mut self) {
        if self.stage == Stage::Choosing && self.plan().is_some() {
            self.stage = Stage::Confirming {
                before: None,
                request: None,
            };
        }
    }

    /// Back from the confirmation (or the second question) to the choice.
    fn back(&mut self) {
        if matches!(self.stage, Stage::Confirming { .. } | Stage::Again { .. }) {
            self.stage = Stage::Choosing;
        }
    }

    /// Sends the payment, once: only from a confirmation whose order list was read (so a lost
    /// answer can be looked up), never when the balance is short or the amounts out of range.
    /// From the second question, it is a payment of its own with a fresh key.
    fn pay(&mut self, balance: Option<Decimal>, out: &mut Outbox<'_>) {
        let short = match (balance, self.total()) {
            (Some(b), Some(t)) => esimdash_front::purchase::shortfall(b, t).is_some(),
            (_, None) => true,
            (None, Some(_)) => false,
        };
        if !self.ready_to_pay() || short || self.amount_problem(balance).is_some() {
            return;
        }
        let (before, again) = match &self.stage {
            Stage::Confirming { before: Some(b), .. } => (b.clone(), false),
            Stage::Again { before, .. } => (before.clone(), true),
            _ => return,
        };
        let Some(payment) = self.payment() else { return };
        let mut payment = payment.with_orders_before(&before);
        payment.balance_before = balance;
        let payment = if again { payment.again() } else { payment };
        let request = Some(out.send(Request::Pay(Box::new(payment.clone()))));
        self.stage = Stage::Sending { payment, request };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> Plan {
        serde_json::from_value(serde_json::json!({"slug": "topup-jo-1gb-7d", "price": 3.36})).unwrap()
    }

    #[test]
    fn a_row_that_cannot_take_data_is_not_paid_on_the_servers_word_alone() {
        let iccid = Iccid::parse("8944100000000000018").unwrap();
        let dead = Some("it was deleted from the phone");
        // Its current record unread: nothing offered.
        let mut form = PurchaseForm::topup(iccid.clone(), dead, None);
        form.offered(TopupOffer::Plans {
            plans: vec![plan()],
            unsure: Some("its record could not be read now".to_string()),
        });
        assert!(
            matches!(form.stage(), Stage::Empty(why) if why.contains("deleted")),
            "{:?}",
            form.stage()
        );
        // Read, and the ICCID's current profile can take data (a reissued ICCID): offered, saying
        // where the top-up goes.
        let mut form = PurchaseForm::topup(iccid, dead, None);
        form.offered(TopupOffer::Plans {
            plans: vec![plan()],
            unsure: None,
        });
        assert_eq!(*form.stage(), Stage::Choosing);
        assert!(form.unsure().is_some_and(|u| u.contains("current profile")));
    }
}
