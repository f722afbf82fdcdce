//! What the dashboard hands over as files or links: the selected eSIM's iPhone install link (to
//! the clipboard), its QR code as a PNG in the export directory (asking before a file of that
//! name is replaced), and the current view as CSV, written in the background with its progress
//! on the status line and a key to cancel it.

use super::mode::{Mode, Overlay};
use super::remote::Remote;
use super::tab::Tab;
use super::{App, Tone};
use crate::clipboard::guard;
use crate::export::Progress;
use crate::tui::msg::{Effect, ExportJob, ExportStep, RequestId, SaveError};
use std::path::PathBuf;
use std::time::Instant;

/// The export in progress, or the last one that failed (shown until the next key).
#[derive(Debug, Clone, PartialEq)]
pub struct Export {
    pub id: RequestId,
    pub what: &'static str,
    pub state: ExportState,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExportState {
    Running(Option<Progress>),
    Failed(String),
}

impl App {
    /// The selected eSIM's activation code, or why it cannot be had (said on the status line).
    pub(super) fn selected_code(&mut self, now: Instant) -> Option<(String, String)> {
        let Some(iccid) = self.esims.selected_iccid() else {
            self.flash("No eSIM is selected", Tone::Error, now);
            return None;
        };
        let state = self.esims.codes.get(&iccid);
        match (state.and_then(Remote::value), state.and_then(Remote::error)) {
            (Some(Ok(code)), _) => return Some((iccid, code.clone())),
            (Some(Err(why)), _) => self.flash(format!("No activation code: {why}"), Tone::Error, now),
            (None, Some(e)) => self.flash(format!("No activation code: {e}"), Tone::Error, now),
            (None, None) => self.flash("The activation code is still being fetched", Tone::Info, now),
        }
        None
    }

    pub(super) fn copy_install_link(&mut self, now: Instant, effects: &mut Vec<Effect>) {
        let Some((_, code)) = self.selected_code(now) else {
            return;
        };
        self.copy_checked("iPhone install link", guard::install_link(&code), now, effects);
    }

    pub(super) fn save_qr(&mut self, now: Instant, effects: &mut Vec<Effect>) {
        if let Some((iccid, code)) = self.selected_code(now) {
            effects.push(Effect::SaveQr {
                iccid,
                code,
                replace: false,
            });
        }
    }

    pub(super) fn on_qr_saved(
        &mut self,
        iccid: String,
        code: String,
        result: Result<PathBuf, SaveError>,
        now: Instant,
    ) {
        match result {
            Ok(path) => self.flash(format!("QR code saved: {}", path.display()), Tone::Success, now),
            Err(SaveError::Exists(path)) => {
                // Asked only if nothing else took the keyboard meanwhile.
                if matches!(self.mode, Mode::Browse | Mode::Detail | Mode::Zoom) {
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
            effects.push(Effect::SaveQr {
                iccid,
                code,
                replace: true,
            });
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
        }) = &self.export
        {
            effects.push(Effect::CancelExport(*id));
            self.flash(format!("Export of {what} cancelled: no file written"), Tone::Info, now);
            self.export = None;
            return;
        }
        let Some(job) = self.export_job(now) else { return };
        self.export_ids += 1;
        let id = self.export_ids;
        self.export = Some(Export {
            id,
            what: job.what(),
            state: ExportState::Running(None),
        });
        effects.push(Effect::Export { id, job });
    }

    /// The current view as an export: its filter and search included.
    fn export_job(&mut self, now: Instant) -> Option<ExportJob> {
        match self.tab {
            Tab::Catalog => {
                let Some(plans) = self.catalog.plans().value() else {
                    self.flash("The catalog has not loaded yet", Tone::Error, now);
                    return None;
                };
                let shown = self.catalog.visible().iter().filter_map(|&i| plans.get(i)).cloned();
                Some(ExportJob::Plans(shown.collect()))
            }
            Tab::Orders => Some(ExportJob::Orders(self.orders.query(1))),
            Tab::Esims if self.esims.search_active() => {
                if !(self.esims.scan().is_complete() || self.esims.saved().is_some()) {
                    self.flash(
                        "The search is still reading the inventory; export when it is complete",
                        Tone::Error,
                        now,
                    );
                    return None;
                }
                let only = self.esims.result_rows().map(|r| r.iccid().to_string()).collect();
                Some(ExportJob::Esims {
                    query: self.esims.query(1),
                    only: Some(only),
                })
            }
            Tab::Esims => Some(ExportJob::Esims {
                query: self.esims.query(1),
                only: None,
            }),
            Tab::Profile => None,
        }
    }

    pub(super) fn on_export(&mut self, id: RequestId, step: ExportStep, now: Instant) {
        let Some(export) = self.export.as_mut().filter(|e| e.id == id) else {
            return;
        };
        match step {
            ExportStep::Progress(p) => export.state = ExportState::Running(Some(p)),
            ExportStep::Done(Ok((path, rows))) => {
                let what = export.what;
                self.export = None;
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
        self.export.as_ref()
    }

    /// A failed export stays on the status line until the next key.
    pub(super) fn forget_failed_export(&mut self) {
        if matches!(&self.export, Some(e) if matches!(e.state, ExportState::Failed(_))) {
            self.export = None;
        }
    }
}
