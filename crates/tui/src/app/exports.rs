//! Files written in the background: the current view as CSV, with its progress on the status
//! line and a key to cancel it; a tab's own files (My eSIMs' QR codes) told to that tab once
//! written, and the question before one replaces a file of the same name.

use super::{About, App, Job, Outbox, Tone};
use crate::forms::mode::{Mode, Overlay};
use crate::kit::jobs::{Owner, Running};
use crate::msg::{Effect, ExportStep, JobId};
use crate::tabs::JobDone;
use esimdash_api::pages::Progress;
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
    /// A file a tab started writing is written (or not): the tab hears of it.
    pub(super) fn job_done(
        &mut self,
        id: JobId,
        now: Instant,
        effects: &mut Vec<Effect>,
        done: impl FnOnce(Job) -> Option<JobDone>,
    ) {
        let Some(Running {
            job,
            owner: Owner::Tab(tab),
        }) = self.account.jobs.finish(id)
        else {
            return;
        };
        if let Some(done) = done(job) {
            self.dirty = true;
            self.with_tab(tab, About::Selection, now, effects, |state, ctx| {
                state.on_job_done(done, ctx)
            });
        }
    }

    /// The answer to "replace it?".
    pub(super) fn answer_replace(&mut self, replace: bool, now: Instant, effects: &mut Vec<Effect>) {
        let Mode::Overlay(Overlay::Replace {
            iccid,
            code,
            path,
            owner,
        }) = std::mem::take(&mut self.mode)
        else {
            return;
        };
        if replace {
            Outbox::owned(&mut self.account.jobs, effects, owner).save_qr(iccid, code, true);
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
        let job = match self.tab_state().export(&self.account.index) {
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
