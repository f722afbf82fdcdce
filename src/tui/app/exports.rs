//! What the dashboard hands over as files or links: the selected eSIM's iPhone install link (to
//! the clipboard), its QR code as a PNG in the export directory (asking before a file of that
//! name is replaced), and the current view as CSV, written in the background with its progress
//! on the status line and a key to cancel it.

use super::mode::{Mode, Overlay};
use super::{App, Job, Outbox, Tone};
use crate::api::pages::Progress;
use crate::tui::msg::{Effect, ExportStep, JobId, SaveError};
use std::path::PathBuf;
use std::time::Instant;

/// The export in progress, or the last one that failed (shown until the next key).
#[derive(Debug, Clone, PartialEq)]
pub struct Export {
    pub id: JobId,
    pub what: &'static str,
    pub state: ExportState,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExportState {
    Running(Option<Progress>),
    Failed(String),
}

impl App {
    pub(super) fn on_qr_folder_saved(
        &mut self,
        id: JobId,
        result: Result<crate::export::qr_folder::Written, String>,
        now: Instant,
    ) {
        if self.account.jobs.finish(id).is_none() {
            return;
        }
        match result {
            Ok(w) if w.failed.is_empty() => {
                self.tell(&crate::tui::tabs::Event::MarkedWritten);
                self.flash(
                    format!(
                        "Marks cleared: {} QR code(s) written to {}",
                        w.written,
                        w.folder.display()
                    ),
                    Tone::Success,
                    now,
                );
            }
            Ok(w) => self.flash(
                format!(
                    "{} failed (errors.txt; marks kept, w tries again), {} QR code(s) written to {}",
                    w.failed.len(),
                    w.written,
                    w.folder.display()
                ),
                Tone::Error,
                now,
            ),
            Err(why) => self.flash(format!("QR codes not written: {why}"), Tone::Error, now),
        }
        self.dirty = true;
    }

    pub(super) fn on_qr_saved(&mut self, id: JobId, result: Result<PathBuf, SaveError>, now: Instant) {
        let Some(Job::SaveQr { iccid, code }) = self.account.jobs.finish(id) else {
            return;
        };
        match result {
            Ok(path) => self.flash(format!("QR code saved: {}", path.display()), Tone::Success, now),
            Err(SaveError::Exists(path)) => {
                // Asked only if nothing else took the keyboard meanwhile.
                if matches!(self.mode, Mode::Browse | Mode::Detail | Mode::Zoom) {
                    // A message of an earlier save would stand under the question as if the
                    // file were written; the bottom line gives the question's keys instead.
                    self.flash = None;
                    self.mode = Mode::Overlay(Overlay::Replace { iccid, code, path });
                } else {
                    self.flash(
                        format!("{} exists already; not replaced", path.display()),
                        Tone::Error,
                        now,
                    );
                }
            }
            Err(SaveError::Failed(why)) => self.flash(format!("QR code not saved: {why}"), Tone::Error, now),
        }
        self.dirty = true;
    }

    /// The answer to "replace it?".
    pub(super) fn answer_replace(&mut self, replace: bool, now: Instant, effects: &mut Vec<Effect>) {
        let Mode::Overlay(Overlay::Replace { iccid, code, path }) = std::mem::take(&mut self.mode) else {
            return;
        };
        if replace {
            Outbox::new(&mut self.account.jobs, effects).save_qr(iccid, code, true);
        } else {
            self.flash(format!("Kept {}", path.display()), Tone::Info, now);
        }
    }

    /// Exports the view (the export key), or cancels the export running (the same key again).
    pub(super) fn export_or_cancel(&mut self, now: Instant, effects: &mut Vec<Effect>) {
        if let Some(Export {
            id,
            what,
            state: ExportState::Running(_),
        }) = &self.account.export
        {
            self.account.jobs.cancel(*id, effects);
            self.flash(format!("Export of {what} cancelled: no file written"), Tone::Info, now);
            self.account.export = None;
            return;
        }
        let job = match self.tab_state().export() {
            None => return,
            Some(Err(why)) => return self.flash(why, Tone::Error, now),
            Some(Ok(job)) => job,
        };
        let what = job.what();
        let id = Outbox::new(&mut self.account.jobs, effects).export(job);
        self.account.export = Some(Export {
            id,
            what,
            state: ExportState::Running(None),
        });
    }

    pub(super) fn on_export(&mut self, id: JobId, step: ExportStep, now: Instant) {
        let Some(export) = self.account.export.as_mut().filter(|e| e.id == id) else {
            return;
        };
        if matches!(step, ExportStep::Done(_)) {
            self.account.jobs.finish(id);
        }
        match step {
            ExportStep::Progress(p) => export.state = ExportState::Running(Some(p)),
            ExportStep::Done(Ok((path, rows))) => {
                let what = export.what;
                self.account.export = None;
                self.flash(
                    format!("Exported {rows} {what} to {}", path.display()),
                    Tone::Success,
                    now,
                );
            }
            ExportStep::Done(Err(why)) => {
                tracing::warn!(%why, "export failed");
                export.state = ExportState::Failed(why);
            }
        }
        self.dirty = true;
    }

    pub fn export(&self) -> Option<&Export> {
        self.account.export.as_ref()
    }

    /// A failed export stays on the status line until the next key.
    pub(super) fn forget_failed_export(&mut self) {
        if matches!(&self.account.export, Some(e) if matches!(e.state, ExportState::Failed(_))) {
            self.account.export = None;
        }
    }
}
