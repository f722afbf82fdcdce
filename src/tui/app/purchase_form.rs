//! The top-up and purchase form: money moves exactly once, only for a plan the API offered.
//!
//! Stages: Loading (which top-ups are offered) → Empty, or Choosing (plan, quantity) →
//! Confirming (totals, balance after; the order list is read for what exists) → Sending (one
//! request; keys cannot send another) → Done, Failed (the server's words, nothing retried), or
//! Unknown (no answer: nothing is resent; the order list is read for the order instead).

use crate::api::model::{Order, OrderRequest, Plan, TopupRequest};
use crate::api::{Payment, Spend};
use crate::esim::iccid::Iccid;
use crate::purchase::Purchase;
use crate::tui::msg::{Request, RequestId};
use rust_decimal::Decimal;
use std::collections::HashSet;

pub const MAX_QTY: u32 = 10;

#[derive(Debug, Clone, PartialEq)]
pub enum Lookup {
    Checking,
    Found(Box<Order>),
    NotFound,
    /// Several new orders could each be this payment: none is claimed.
    Ambiguous(Vec<String>),
    Failed(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Stage {
    Loading,
    /// Nothing is offered; why, when the eSIM's status tells.
    Empty(String),
    Choosing,
    Confirming,
    /// The same payment was placed minutes ago (or may have been): not sent; a second
    /// confirmation sends it again.
    Again(String),
    Sending,
    Done {
        order: Box<Order>,
        balance: Option<Decimal>,
        delivery: crate::api::Delivery,
    },
    Failed(String),
    Unknown {
        error: String,
        lookup: Lookup,
    },
}

#[derive(Debug, Clone)]
pub struct PurchaseForm {
    pub what: Purchase,
    pub plans: Vec<Plan>,
    pub cursor: usize,
    pub qty: u32,
    pub stage: Stage,
    /// Why an eSIM would be offered nothing, from its status (shown if nothing is offered).
    pub hint: Option<&'static str>,
    /// Order numbers of the chosen plan that existed before sending; `None` until read.
    pub before: Option<HashSet<String>>,
    /// The one request of this form in flight.
    pub request: Option<RequestId>,
    /// The payment once sent: its key and what it was, for the lookup after a lost answer.
    pub sent: Option<Payment>,
}

impl PurchaseForm {
    pub fn topup(iccid: Iccid, hint: Option<&'static str>) -> Self {
        Self {
            what: Purchase::Topup { iccid },
            plans: Vec::new(),
            cursor: 0,
            qty: 1,
            stage: Stage::Loading,
            hint,
            before: None,
            request: None,
            sent: None,
        }
    }

    pub fn order(plan: Plan) -> Self {
        Self {
            what: Purchase::Order,
            plans: vec![plan],
            cursor: 0,
            qty: 1,
            stage: Stage::Choosing,
            hint: None,
            before: None,
            request: None,
            sent: None,
        }
    }

    pub fn plan(&self) -> Option<&Plan> {
        self.plans.get(self.cursor)
    }

    pub fn unit_price(&self) -> Option<Decimal> {
        self.plan().and_then(Plan::sell_price)
    }

    /// The total, when it can be computed exactly (see `amount_problem`).
    pub fn total(&self) -> Option<Decimal> {
        self.unit_price()
            .and_then(|u| crate::purchase::line_total(u, self.qty).ok())
    }

    /// Why the amounts of this choice cannot be paid (a negative price, a total or a balance
    /// after out of range), in words; nothing is sent then.
    pub fn amount_problem(&self, balance: Option<Decimal>) -> Option<String> {
        let total = crate::purchase::line_total(self.unit_price()?, self.qty);
        let after = total.and_then(|t| balance.map_or(Ok(t), |b| crate::purchase::balance_after(b, t)));
        after.err()
    }

    pub fn set_qty(&mut self, qty: i64) {
        self.qty = qty.clamp(1, i64::from(MAX_QTY)) as u32;
    }

    /// The offered plans arrived.
    pub fn offered(&mut self, plans: Vec<Plan>) {
        if plans.is_empty() {
            let why = self.hint.unwrap_or("the API offers no top-up for it");
            self.stage = Stage::Empty(format!("This eSIM cannot be topped up now: {why}."));
        } else {
            self.plans = plans;
            self.cursor = 0;
            self.stage = Stage::Choosing;
        }
    }

    /// The ICCID when topping up (for the request and the lookup).
    pub fn iccid(&self) -> Option<&Iccid> {
        match &self.what {
            Purchase::Topup { iccid } => Some(iccid),
            Purchase::Order => None,
        }
    }

    /// What the form needs read now: the offered top-ups, the order list before paying, or,
    /// after an unknown outcome, the order list again. Never the payment itself: only `pay` on
    /// the confirmation sends that.
    pub fn next_read(&self) -> Option<Request> {
        if self.request.is_some() {
            return None;
        }
        let slug = self.plan().map(|p| p.slug.clone());
        match (&self.stage, &self.before, &self.sent) {
            (Stage::Loading, _, _) => self.iccid().map(|iccid| Request::TopupPlans { iccid: iccid.clone() }),
            (Stage::Confirming, None, _) => slug.map(|slug| Request::OrdersOfPlan {
                slug,
                iccid: self.iccid().cloned(),
            }),
            (
                Stage::Unknown {
                    lookup: Lookup::Checking,
                    ..
                },
                Some(before),
                Some(payment),
            ) => Some(Request::LookUpPayment {
                payment: payment.clone(),
                before: before.clone(),
            }),
            _ => None,
        }
    }

    /// The payment for the confirmed choice, with a fresh idempotency key.
    pub fn payment(&self) -> Option<Payment> {
        let plan = self.plan()?;
        let spend = match self.iccid() {
            Some(iccid) => Spend::Topup(TopupRequest {
                iccid: iccid.to_string(),
                slug: plan.slug.clone(),
                qty: self.qty,
            }),
            None => Spend::Order(OrderRequest {
                slug: plan.slug.clone(),
                qty: self.qty,
            }),
        };
        Some(Payment::new(spend, self.total()))
    }
}
