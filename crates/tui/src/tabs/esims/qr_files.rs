//! What became of the QR codes My eSIMs wrote: one eSIM's PNG (asking before a file of that
//! name is replaced), or the marked eSIMs' folder (the marks done with once all are written).

use super::Esims;
use crate::forms::mode::{Mode, Overlay};
use crate::kit::status::Tone;
use crate::kit::then::Then;
use crate::msg::SaveError;
use crate::tabs::JobDone;
use crate::tabs::ctx::Ctx;

impl Esims {
    pub(super) fn qr_written(&mut self, done: JobDone, ctx: &mut Ctx<'_>) {
        match done {
            JobDone::QrSaved { iccid, code, result } => match result {
                Ok(path) => ctx.flash(format!("QR code saved: {}", path.display()), Tone::Success),
                // Asked only if nothing else took the keyboard meanwhile.
                Err(SaveError::Exists(path)) if matches!(ctx.mode, Mode::Browse | Mode::Detail | Mode::Zoom { .. }) => {
                    // A message of an earlier save would stand under the question as if the
                    // file were written; the bottom line gives the question's keys instead.
                    ctx.then.push(Then::Quiet);
                    let owner = ctx.out.owner();
                    ctx.set_mode(Mode::Overlay(Overlay::Replace {
                        iccid,
                        code,
                        path,
                        owner,
                    }));
                }
                Err(SaveError::Exists(path)) => {
                    ctx.flash(format!("{} exists already; not replaced", path.display()), Tone::Error);
                }
                Err(SaveError::Failed(why)) => ctx.flash(format!("QR code not saved: {why}"), Tone::Error),
            },
            JobDone::QrFolderSaved(result) => match result {
                Ok(w) if w.failed.is_empty() => {
                    self.marks_mut().clear();
                    ctx.flash(
                        format!(
                            "Marks cleared: {} QR code(s) written to {}",
                            w.written,
                            w.folder.display()
                        ),
                        Tone::Success,
                    );
                }
                Ok(w) => ctx.flash(
                    format!(
                        "{} failed (errors.txt; marks kept, w tries again), {} QR code(s) written to {}",
                        w.failed.len(),
                        w.written,
                        w.folder.display()
                    ),
                    Tone::Error,
                ),
                Err(why) => ctx.flash(format!("QR codes not written: {why}"), Tone::Error),
            },
        }
    }
}
