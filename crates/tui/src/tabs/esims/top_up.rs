//! What My eSIMs does for the eSIM of an order or a typed ICCID, wherever the key was pressed:
//! `t` opens its top-up (with where the index saw it), `e` on an order's detail shows it here
//! (once found, while the detail is open). The tab's own `t` tops up the selected eSIM.

use super::Esims;
use crate::forms::mode::{Mode, Overlay};
use crate::forms::purchase::PurchaseForm;
use crate::index::OrderEsims;
use crate::keymap::{Action, Context};
use crate::kit::status::Tone;
use crate::kit::tab::Tab;
use crate::kit::then::{About, Then};
use crate::tabs::ctx::Ctx;
use esimdash_api::model::Order;
use esimdash_domain::iccid::{EsimIccid, Iccid};

impl Esims {
    /// `t`: what it is about (an order, a typed ICCID), else the selected eSIM.
    pub(super) fn top_up(&self, ctx: &mut Ctx<'_>) {
        match &ctx.about {
            About::Order(order) => {
                let order = order.clone();
                self.top_up_order(&order, ctx);
            }
            About::Iccid(iccid) => {
                let iccid = iccid.clone();
                self.open_top_up(iccid, None, ctx);
            }
            About::Selection | About::Plan(_) => match self.selected_iccid(ctx.index) {
                Some(iccid) => {
                    // The row's own state: a search row's as the index read it where its record
                    // is not at hand (an earlier profile of a reissued ICCID).
                    let hint = self.selected_class(ctx.index).and_then(|c| c.cannot_take_data());
                    self.top_up_iccid(&iccid, hint, ctx);
                }
                None => ctx.set_mode(Mode::iccid_prompt()),
            },
        }
    }

    fn top_up_iccid(&self, iccid: &EsimIccid, hint: Option<&'static str>, ctx: &mut Ctx<'_>) {
        match iccid.valid() {
            Ok(iccid) => self.open_top_up(iccid.clone(), hint, ctx),
            Err(e) => ctx.flash(
                format!("This eSIM's ICCID from the API is not valid ({e}); it cannot be topped up here"),
                Tone::Error,
            ),
        }
    }

    /// The top-up window, with where the index saw the eSIM (its record is read there).
    fn open_top_up(&self, iccid: Iccid, hint: Option<&'static str>, ctx: &mut Ctx<'_>) {
        let index = ctx.index.inventory();
        let seen = index.whereabouts(iccid.as_str());
        // The plan a new eSIM of would replace it: the row's, else the index's newest profile's.
        let plan = self
            .selected(ctx.index)
            .filter(|e| e.raw_order_json.iccid.as_str() == iccid.as_str())
            .map(|e| e.record.slug.clone())
            .or_else(|| {
                index
                    .find(iccid.as_str())
                    .and_then(|e| index.row(e))
                    .map(|r| r.package.slug.clone())
            });
        let form = PurchaseForm::topup(iccid, hint, seen).renewing(plan);
        ctx.set_mode(Mode::Overlay(Overlay::Purchase(Box::new(form))));
    }

    /// `t` on an order: the eSIM a top-up order names, or the one the order made when the
    /// dashboard knows it (pages at hand or the index), else the ICCID prompt.
    fn top_up_order(&self, order: &Order, ctx: &mut Ctx<'_>) {
        let Some(iccid) = self.order_esim(order, ctx) else {
            if self.order_esims(order, ctx) == OrderEsims::NotAllocated {
                return ctx.flash(
                    "This order is pending: its eSIM is not allocated yet, so there is nothing to top up",
                    Tone::Info,
                );
            }
            return ctx.set_mode(Mode::iccid_prompt());
        };
        let hint = self
            .list
            .loaded()
            .find(|e| e.raw_order_json.iccid.as_str() == iccid.as_str())
            .and_then(esimdash_front::purchase::no_topup_reason);
        self.top_up_iccid(&iccid, hint, ctx);
    }

    /// The eSIM of an order, when known: a top-up's, or the first the order made.
    fn order_esim(&self, order: &Order, ctx: &Ctx<'_>) -> Option<EsimIccid> {
        if !order.iccid.is_empty() {
            return Some(order.iccid.clone());
        }
        let at_hand = self.at_hand(ctx.index);
        let (found, _) = ctx
            .index
            .iccids_of_order(&order.record.provider_order_no, at_hand.into_iter());
        found.into_iter().next()
    }

    /// Where an order's eSIMs are, in the account's index and the records at hand here.
    fn order_esims(&self, order: &Order, ctx: &Ctx<'_>) -> OrderEsims {
        ctx.index.order_esims(order, self.at_hand(ctx.index).into_iter())
    }

    /// `e` on an order's detail: this tab, searched for that order's eSIM.
    pub(super) fn show_order_esim(&mut self, ctx: &mut Ctx<'_>) {
        let About::Order(order) = &ctx.about else {
            return;
        };
        let order = order.clone();
        if let Some(iccid) = self.order_esim(&order, ctx) {
            return self.go_to_esim(&iccid, ctx);
        }
        let refresh = |context| ctx.keymap.first_key(context, Action::Refresh);
        let (text, tone) = match self.order_esims(&order, ctx) {
            OrderEsims::NotAllocated => (
                format!(
                    "This order is pending: the provider has not allocated its eSIM yet (usually within a minute); {} reads the order again",
                    refresh(Context::Global)
                ),
                Tone::Info,
            ),
            OrderEsims::NotInList => (
                "This order's eSIM is not in this account's eSIM list (read from the top just now)".to_string(),
                Tone::Error,
            ),
            OrderEsims::NotRead { .. } => (
                format!(
                    "This order's eSIM is not in the part of the list read, and nothing reads further now: {} reads again",
                    refresh(Context::OrderDetail)
                ),
                Tone::Error,
            ),
            OrderEsims::Found(_) | OrderEsims::LookingFor { .. } => {
                self.go_to_order = Some(order.record.provider_order_no.clone());
                (
                    "Looking for this order's eSIM in the list: My eSIMs opens on it when found".to_string(),
                    Tone::Info,
                )
            }
        };
        ctx.flash(text, tone);
    }

    fn go_to_esim(&mut self, iccid: &EsimIccid, ctx: &mut Ctx<'_>) {
        self.go_to_order = None;
        self.find(iccid, ctx.now, ctx.index);
        ctx.then.push(Then::Show(Tab::Esims));
    }

    /// After `e` on an order whose eSIM was looked for: here once found, while its detail is
    /// still open (closing it, or moving on, drops the wish).
    pub(super) fn follow_order(&mut self, ctx: &mut Ctx<'_>) {
        let Some(number) = self.go_to_order.clone() else {
            return;
        };
        let order = match ctx.mode.overlay() {
            Some(Overlay::OrderDetail(order)) if order.record.provider_order_no == number => order.clone(),
            _ => {
                self.go_to_order = None;
                return;
            }
        };
        match self.order_esims(&order, ctx) {
            OrderEsims::Found(_) => {
                if let Some(iccid) = self.order_esim(&order, ctx) {
                    self.go_to_esim(&iccid, ctx);
                }
            }
            OrderEsims::LookingFor { .. } => {}
            OrderEsims::NotAllocated | OrderEsims::NotInList | OrderEsims::NotRead { .. } => self.go_to_order = None,
        }
    }
}
