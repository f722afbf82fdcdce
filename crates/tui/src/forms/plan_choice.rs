//! Choosing one of the plans offered and a quantity: what the top-up form and the top-up of
//! the marked eSIMs share (their keys, the cursor kept inside the list, the quantity kept
//! within what one payment may buy).

use crate::keymap::{Action, Chord};
use esimdash_api::model::Plan;

/// The most one payment may buy (as `--qty` and a bulk file's rows take it).
pub use esimdash_front::bulk::rows::MAX_QTY;

#[derive(Debug, Clone, PartialEq)]
pub struct PlanChoice {
    plans: Vec<Plan>,
    cursor: usize,
    qty: u32,
}

impl PlanChoice {
    pub fn new(plans: Vec<Plan>) -> Self {
        Self {
            plans,
            cursor: 0,
            qty: 1,
        }
    }

    pub fn plans(&self) -> &[Plan] {
        &self.plans
    }

    /// Starts on `slug` (if offered) and `qty`: what was chosen last for the same eSIMs.
    pub fn starting_at(mut self, slug: &str, qty: u32) -> Self {
        if let Some(at) = self.plans.iter().position(|p| p.slug == slug) {
            self.cursor = at;
            self.set_qty(i64::from(qty));
        }
        self
    }

    pub fn cursor(&self) -> usize {
        self.cursor
    }

    pub fn qty(&self) -> u32 {
        self.qty
    }

    pub fn plan(&self) -> Option<&Plan> {
        self.plans.get(self.cursor)
    }

    /// A key of the choice: the next or previous plan, one more or less, a digit for the
    /// quantity (0 for 10). `false` when `action` is none of them.
    pub fn act(&mut self, action: Action, chord: Chord) -> bool {
        match action {
            Action::Down => self.cursor = (self.cursor + 1).min(self.plans.len().saturating_sub(1)),
            Action::Up => self.cursor = self.cursor.saturating_sub(1),
            Action::More => self.set_qty(i64::from(self.qty) + 1),
            Action::Less => self.set_qty(i64::from(self.qty) - 1),
            Action::Quantity => match chord.digit() {
                Some(0) => self.set_qty(i64::from(MAX_QTY)),
                Some(d) => self.set_qty(i64::from(d)),
                None => {}
            },
            _ => return false,
        }
        true
    }

    fn set_qty(&mut self, qty: i64) {
        self.qty = qty.clamp(1, i64::from(MAX_QTY)) as u32;
    }
}

/// A form that chooses a plan and pays for it (the top-up form, the marked eSIMs' top-up):
/// each method acts only in the stage that allows it.
pub trait PaymentForm {
    /// A key of the choice, while choosing; `false` if it is none.
    fn choose(&mut self, action: Action, chord: Chord) -> bool;
    /// From the choice to the confirmation.
    fn confirm(&mut self);
    /// From the confirmation back to the choice.
    fn back(&mut self);
    /// Pays from the confirmation, once.
    fn pay(&mut self, balance: Option<rust_decimal::Decimal>, out: &mut crate::kit::jobs::Outbox<'_>);

    /// The keys the payment forms share: the choice (plan, quantity), on to the confirmation,
    /// pay from it, back to the choice. `false` when `action` is none of them (closing is each
    /// form's).
    fn act(
        &mut self,
        action: Action,
        chord: Chord,
        balance: Option<rust_decimal::Decimal>,
        out: &mut crate::kit::jobs::Outbox<'_>,
    ) -> bool {
        if self.choose(action, chord) {
            return true;
        }
        match action {
            Action::Accept => self.confirm(),
            // From the confirmation (the purchase form: also from its second question).
            Action::Pay => self.pay(balance, out),
            Action::Back => self.back(),
            _ => return false,
        }
        true
    }
}
