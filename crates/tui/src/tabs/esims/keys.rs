//! My eSIMs' own keys: the QR code alone, the pane's scroll, copying what a customer needs,
//! writing QR codes, marks, the attention filter, a new eSIM of the same plan, and `t` on the
//! marked eSIMs.

use super::Esims;
use crate::forms::bulk::BulkForm;
use crate::forms::mode::{Mode, Overlay};
use crate::keymap::Action;
use crate::kit::jobs::Job;
use crate::kit::remote::Remote;
use crate::kit::status::Tone;
use crate::kit::tab::Tab;
use crate::kit::then::{About, Then};
use crate::tabs::ctx::Ctx;
use esimdash_front::clipboard::guard;

impl Esims {
    /// `false` when `action` is not one of the tab's own.
    pub(super) fn act(&mut self, action: Action, ctx: &mut Ctx<'_>) -> bool {
        match action {
            Action::Zoom if matches!(ctx.mode, Mode::Zoom { .. }) => ctx.set_mode(ctx.mode.closed()),
            Action::Zoom if self.selected(ctx.index).is_some() => ctx.set_mode(Mode::Zoom {
                from_detail: matches!(ctx.mode, Mode::Detail),
            }),
            Action::PaneDown => self.scroll_pane(1, ctx.index),
            Action::PaneUp => self.scroll_pane(-1, ctx.index),
            Action::CopyIccid => self.copy_iccid(ctx),
            Action::Triage => self.triage(ctx),
            Action::CopyCode => self.copy_installable("Activation code", guard::activation_code, ctx),
            Action::CopyLink => self.copy_installable("iPhone install link", guard::install_link, ctx),
            Action::CopySmdp => self.copy_installable("SM-DP+ address", guard::smdp_address, ctx),
            Action::CopyMatchingId => self.copy_installable("Matching ID", guard::matching_id, ctx),
            Action::SaveQr if !self.marks().is_empty() => self.save_marked_qr(ctx),
            Action::SaveQr => self.save_qr(ctx),
            Action::Mark => {
                self.toggle_mark(ctx.index);
            }
            Action::MarkAll => {
                let shown = self.toggle_mark_all(ctx.index);
                let all = self.marks().len();
                let text = match shown {
                    0 => format!("Unmarked those shown; {all} marked in all"),
                    n => format!("Marked the {n} shown; {all} marked in all (w: their QR codes)"),
                };
                ctx.flash(text, Tone::Info);
            }
            Action::Attention => self.toggle_attention(ctx.index),
            Action::Buy => match self.selected(ctx.index) {
                Some(e) => ctx.then.push(Then::Hand {
                    tab: Tab::Catalog,
                    action,
                    about: About::Plan(e.record.slug.clone()),
                }),
                None => ctx.flash("No eSIM is selected", Tone::Error),
            },
            // The one eSIM shown alone (its detail at a narrow width) is the one `t` tops up,
            // even with marks elsewhere that the screen does not show.
            Action::TopUp if self.marked_top_up(ctx) => self.top_up_marked(ctx),
            Action::TopUp => self.top_up(ctx),
            Action::ShowEsim => self.show_order_esim(ctx),
            _ => return false,
        }
        true
    }

    /// `T`: the selected eSIM's triage, in a window of its own.
    fn triage(&self, ctx: &mut Ctx<'_>) {
        match self.selected_iccid(ctx.index).map(|i| i.valid().cloned()) {
            Some(Ok(iccid)) => {
                let seen = ctx.index.inventory().whereabouts(iccid.as_str());
                let window = crate::forms::triage::TriageWindow::new(iccid, seen);
                ctx.set_mode(Mode::Overlay(Overlay::Triage(Box::new(window))));
            }
            Some(Err(_)) => ctx.flash("This eSIM's ICCID is not one: no triage", Tone::Error),
            None => ctx.flash("No eSIM is selected", Tone::Error),
        }
    }

    /// `y` copies the selected eSIM's ICCID only when it is one (the clipboard's guard), else
    /// the message says why.
    fn copy_iccid(&self, ctx: &mut Ctx<'_>) {
        match self.selected_iccid(ctx.index) {
            None => ctx.flash("No eSIM is selected", Tone::Error),
            Some(iccid) if iccid.is_empty() => ctx.flash("This eSIM has no ICCID", Tone::Error),
            Some(iccid) => ctx.then.push(Then::Copy {
                what: "ICCID",
                checked: guard::iccid(&iccid),
            }),
        }
    }

    /// Whether the verdict refuses to hand the selected eSIM's code to a customer (said on
    /// the status line): what would only fail on the customer's phone is never copied or written.
    fn refused_by_verdict(&self, what: &str, done: &str, ctx: &mut Ctx<'_>) -> bool {
        let why = self
            .selected(ctx.index)
            .and_then(|e| esimdash_front::format::verdict::not_installable(e.facts().classify()));
        match why {
            Some(why) => {
                ctx.flash(format!("{what} not {done}: {why}"), Tone::Error);
                true
            }
            None => false,
        }
    }

    /// `copy_code_part` where the verdict allows installing the code.
    fn copy_installable(&self, what: &'static str, part: fn(&str) -> Result<String, String>, ctx: &mut Ctx<'_>) {
        if !self.refused_by_verdict(what, "copied", ctx) {
            self.copy_code_part(what, part, ctx);
        }
    }

    /// The selected eSIM's activation code, or why it cannot be had (said on the status line).
    fn code_at_hand(&self, ctx: &mut Ctx<'_>) -> Option<(esimdash_domain::iccid::EsimIccid, String)> {
        let Some(iccid) = self.selected_iccid(ctx.index) else {
            ctx.flash("No eSIM is selected", Tone::Error);
            return None;
        };
        let state = self.selected_code(ctx.index);
        match (state.and_then(Remote::value), state.and_then(Remote::error)) {
            (Some(Ok(code)), _) => return Some((iccid, code.clone())),
            (Some(Err(why)), _) => ctx.flash(format!("No activation code: {why}"), Tone::Error),
            (None, Some(e)) => ctx.flash(format!("No activation code: {e}"), Tone::Error),
            (None, None) => ctx.flash("The activation code is still being fetched", Tone::Info),
        }
        None
    }

    /// Copies what `part` makes of the selected eSIM's activation code (once known): the code,
    /// its iPhone link, its SM-DP+ address or matching ID, each only when the guard passes it.
    fn copy_code_part(&self, what: &'static str, part: fn(&str) -> Result<String, String>, ctx: &mut Ctx<'_>) {
        if let Some((_, code)) = self.code_at_hand(ctx) {
            ctx.then.push(Then::Copy {
                what,
                checked: part(&code),
            });
        }
    }

    /// Writes the selected eSIM's QR code as `<ICCID>.png`: only under a valid ICCID (the API's
    /// text could name any path).
    fn save_qr(&self, ctx: &mut Ctx<'_>) {
        if self.refused_by_verdict("QR code", "written", ctx) {
            return;
        }
        let Some((iccid, code)) = self.code_at_hand(ctx) else {
            return;
        };
        match iccid.valid() {
            Ok(iccid) => ctx.out.save_qr(iccid.clone(), code, false),
            Err(why) => ctx.flash(
                format!("This eSIM's ICCID from the API is not valid ({why}): no file is named after it"),
                Tone::Error,
            ),
        }
    }

    /// Writes every marked eSIM's QR code into one new folder (the marks stay: a failure can be
    /// tried again).
    fn save_marked_qr(&self, ctx: &mut Ctx<'_>) {
        let writing = ctx
            .running(|job| matches!(job, Job::SaveQrFolder(_)))
            .and_then(|job| match job {
                Job::SaveQrFolder(n) => Some(*n),
                _ => None,
            });
        if let Some(n) = writing {
            ctx.flash(format!("Still writing the QR codes of {n} eSIM(s)…"), Tone::Info);
            return;
        }
        let wanted = self.marks().wanted();
        let n = wanted.len();
        ctx.out.save_qr_folder(wanted);
        ctx.flash(format!("Writing the QR codes of {n} marked eSIM(s)…"), Tone::Info);
    }

    /// Whether `t` tops up the marked eSIMs: pressed on this tab, with marks, and no eSIM shown
    /// alone.
    fn marked_top_up(&self, ctx: &Ctx<'_>) -> bool {
        matches!(ctx.about, About::Selection) && !matches!(ctx.mode, Mode::Detail) && !self.marks().is_empty()
    }

    /// `t` with marks: every marked eSIM at once (one run at a time).
    fn top_up_marked(&self, ctx: &mut Ctx<'_>) {
        if ctx.running(|job| matches!(job, Job::BulkTopup)).is_some() {
            return ctx.flash("A top-up of marked eSIMs is still paying", Tone::Info);
        }
        let index = ctx.index.inventory();
        // Why one could not be topped up, from its class as last read: the index's (every read
        // refreshes it), else the record it was marked with.
        let marked = self
            .marks()
            .wanted()
            .into_iter()
            .map(|w| {
                let row = index.find(&w.iccid).and_then(|e| index.row(e));
                let class = row.map(|r| r.class).or_else(|| w.esim.map(|e| e.facts().classify()));
                (w.iccid, class.and_then(|c| c.cannot_take_data()))
            })
            .collect();
        let last = self.marks().last_choice().cloned();
        let form = BulkForm::new(marked).remembering(last);
        ctx.set_mode(Mode::Overlay(Overlay::Bulk(Box::new(form))));
    }
}
