//! What a bulk top-up's run tells the app as it goes: its window shows it, and at its end the
//! marks, the balance and the lists follow.

use super::{App, Event, Job, Tone};
use crate::tui::forms::bulk::one_line;
use crate::tui::msg::{BulkStep, JobId};
use std::time::Instant;

impl App {
    /// A step of a bulk run: the window shows it; at the end the eSIMs placed are unmarked
    /// (what is left marked is what was not topped up), and the balance, Orders and My eSIMs
    /// are read again.
    pub(super) fn on_bulk(&mut self, id: JobId, step: BulkStep, now: Instant) {
        self.dirty = true;
        let ours = matches!(self.account.jobs.running_job(id), Some(Job::BulkTopup));
        let result = match step {
            BulkStep::Ended(result) => result,
            BulkStep::Repeats(repeats) => {
                self.account.jobs.finish(id);
                match self.mode.bulk_mut().filter(|f| f.run() == Some(id)) {
                    Some(form) => form.repeated(repeats),
                    None => self.flash(
                        format!(
                            "Bulk top-up: nothing was paid; {} were topped up with the same minutes ago",
                            repeats.len()
                        ),
                        Tone::Error,
                        now,
                    ),
                }
                return;
            }
            step => {
                if let Some(form) = self.mode.bulk_mut().filter(|f| f.run() == Some(id)) {
                    match step {
                        BulkStep::Paying => form.paying(),
                        BulkStep::Row { iccid, state } => form.row_done(&iccid, &state),
                        BulkStep::Ended(_) | BulkStep::Repeats(_) => {}
                    }
                }
                return;
            }
        };
        self.account.jobs.finish(id);
        if let (true, Ok(ended)) = (ours, &result) {
            // Those of unknown outcome too: `t` again must not pay what may have been paid.
            let unknown = ended.unknown.iter().map(|(iccid, _)| iccid);
            let done = ended.placed.iter().chain(unknown).cloned().collect();
            self.tell(&Event::Unmark(done));
            if !ended.placed.is_empty() {
                self.money_moved(None);
                self.tell(&Event::ToppedUpMany(ended.placed.clone()));
            }
        }
        match (self.mode.bulk_mut().filter(|f| f.run() == Some(id)), result) {
            (Some(form), result) => {
                let chosen = form.chosen();
                form.ended(result);
                if let Some((slug, qty)) = chosen {
                    self.tell(&Event::BulkChoice(slug, qty));
                }
                // "Stopping…" is over: the window tells how it ended.
                self.flash = None;
            }
            // The window was closed under it (credentials refused): said on the status line.
            (None, Ok(ended)) => {
                let clean = ended.failed.is_empty() && ended.unknown.is_empty() && ended.not_paid == 0;
                let tone = if clean { Tone::Success } else { Tone::Error };
                self.flash(one_line(&ended), tone, now);
            }
            (None, Err(why)) => self.flash(format!("Bulk top-up: {why}"), Tone::Error, now),
        }
    }
}
