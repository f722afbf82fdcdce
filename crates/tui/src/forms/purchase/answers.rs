//! The answers to the purchase form's requests: the plans offered, the order list before
//! paying, the payment placed, the order a lost answer became; and their failures.

use super::{PurchaseForm, Stage};
use crate::kit::remote::Slot;
use crate::kit::status::Tone;
use crate::kit::then::Event;
use crate::kit::then::Then;
use crate::msg::{JobId, Payload, Request};
use esimdash_api::ApiError;

impl PurchaseForm {
    /// Where the answer to the form's request goes, while the form awaits one.
    pub fn slot(&mut self) -> Option<&mut dyn Slot> {
        self.request_slot().map(|r| r as &mut dyn Slot)
    }

    /// The awaited answer to the form's request, and what the rest of the screen does after.
    pub fn on_answer(&mut self, id: JobId, payload: Payload) -> Vec<Then> {
        match payload {
            Payload::TopupOffer(offer) => self.offered(offer),
            Payload::OrderNumbers(numbers) => self.orders_before(numbers),
            Payload::Paid(paid) => return self.placed(paid),
            Payload::FoundOrder(found) => {
                let placed = found.is_some();
                self.looked_up(Ok(found));
                if placed {
                    return vec![Then::MoneyMoved(None)];
                }
            }
            payload => self.misfit(id, &payload),
        }
        Vec::new()
    }

    /// The payment was placed: the eSIM topped up is watched, money moved, and the status line
    /// says so (and whether another payment was charged meanwhile).
    fn placed(&mut self, paid: esimdash_api::Paid) -> Vec<Then> {
        let number = paid.placed.order.record.provider_order_no.to_string();
        let balance = paid.placed.balance_usd;
        let topped_up = match self.what() {
            esimdash_domain::purchase::Purchase::Topup { iccid } => Some(iccid.clone()),
            esimdash_domain::purchase::Purchase::Order => None,
        };
        let charged_other = paid.charged_other.as_ref().map(|other| other.sentence());
        self.paid(paid);
        let mut then: Vec<Then> = topped_up.map(|i| Then::Tell(Event::ToppedUp(i))).into_iter().collect();
        then.push(Then::MoneyMoved(balance));
        then.push(match charged_other {
            Some(words) => Then::Flash(format!("Placed: order {number}. {words}"), Tone::Error),
            None => Then::Flash(format!("Placed: order {number}"), Tone::Success),
        });
        then
    }

    /// A payment's answer that cannot be read may hide a payment made: it is looked up, never
    /// sent again; a read's is a failure the form shows.
    fn misfit(&mut self, id: JobId, payload: &Payload) {
        tracing::warn!(?payload, "a purchase answer that fits no request");
        let misfit = crate::kit::remote::misfit();
        match self.stage() {
            Stage::Sending { payment, .. } => {
                let unread = ApiError::Decode {
                    endpoint: payment.endpoint(),
                    status: 200,
                    detail: "the answer did not fit the payment".to_string(),
                    excerpt: String::new(),
                };
                self.pay_failed(&unread);
            }
            Stage::Unknown { .. } => self.looked_up(Err(&misfit)),
            _ => self.read_failed(&misfit),
        }
        if let Some(slot) = self.request_slot() {
            slot.abandon(id);
        }
    }

    /// A request of the form's failed: the form says so. `false` leaves the error to the
    /// general handling too (a read that waits for a countdown or for `r`).
    pub fn on_error(&mut self, request: &Request, error: &ApiError) -> bool {
        match request {
            Request::Pay(_) => self.pay_failed(error),
            Request::LookUpPayment { .. } => self.looked_up(Err(error)),
            // A read before paying: the form says so (and that no money moved), in place.
            Request::TopupPlans { .. } | Request::OrdersOfPlan { .. } => {
                self.read_failed(error);
                // Offline or out of budget: the rest of the app hears of it too.
                return !error.is_transient();
            }
            _ => return false,
        }
        true
    }
}
