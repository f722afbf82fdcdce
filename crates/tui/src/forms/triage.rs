//! An eSIM's triage (`T` on My eSIMs): the first-line checks before escalating, each passed,
//! failed or needing the customer with what to say, read now by `esimdash_front::triage` as
//! `esimdash triage` reads them; `c` copies the escalation pack, `r` reads it all again.

use crate::keymap::{Action, Context};
use crate::kit::jobs::Outbox;
use crate::kit::remote::{Remote, Slot};
use crate::kit::then::Then;
use crate::msg::{JobId, Payload, Request};
use crate::view::Look;
use crate::view::theme::Theme;
use crate::view::widgets::{keys_line, paragraph, popup, safe};
use esimdash_domain::iccid::Iccid;
use esimdash_front::triage::{Outcome, Triage};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use std::time::Instant;

/// The triage, or why the eSIM was not found.
type Read = Box<Result<Triage, String>>;

#[derive(Debug, Clone)]
pub struct TriageWindow {
    pub iccid: Iccid,
    /// Where the index saw it, for a server without the lookup.
    seen: Option<esimdash_api::model::Whereabouts>,
    pub(crate) triage: Remote<Read>,
}

impl TriageWindow {
    pub fn new(iccid: Iccid, seen: Option<esimdash_api::model::Whereabouts>) -> Self {
        Self {
            iccid,
            seen,
            triage: Remote::default(),
        }
    }

    /// The triage as read, if it was.
    fn read(&self) -> Option<&Triage> {
        self.triage.value().and_then(|t| t.as_ref().as_ref().ok())
    }

    /// The triage as read (or being read, or failed).
    pub fn triage(&self) -> &Remote<Read> {
        &self.triage
    }

    pub fn fetch(&mut self, out: &mut Outbox<'_>) {
        if self.triage.wanted() {
            let id = out.send(Request::Triage {
                iccid: self.iccid.clone(),
                seen: self.seen,
            });
            self.triage.start(id);
        }
    }

    pub fn on_action(&mut self, action: Action) -> Vec<Then> {
        match action {
            Action::CopyPack => match self.read() {
                Some(triage) => vec![Then::Copy {
                    what: "Escalation pack",
                    checked: Ok(esimdash_front::triage::pack(triage)),
                }],
                None => vec![Then::Flash(
                    "The triage is not read yet: nothing to copy".to_string(),
                    crate::kit::status::Tone::Info,
                )],
            },
            Action::Refresh => {
                self.triage.invalidate();
                Vec::new()
            }
            Action::Close => vec![Then::Close],
            _ => Vec::new(),
        }
    }

    pub fn slot(&mut self, request: &Request) -> Option<&mut dyn Slot> {
        matches!(request, Request::Triage { iccid, .. } if *iccid == self.iccid)
            .then_some(&mut self.triage as &mut dyn Slot)
    }

    pub fn on_answer(&mut self, id: JobId, payload: Payload, now: Instant) -> Option<Vec<Then>> {
        match payload {
            Payload::Triaged(triage) => {
                self.triage.resolve(id, triage, now);
                Some(Vec::new())
            }
            _ => None,
        }
    }
}

pub(crate) fn draw(frame: &mut Frame, area: Rect, window: &TriageWindow, look: &Look<'_>, theme: &Theme) {
    const WIDTH: u16 = 78;
    let rows = |lines: &[Line<'_>]| -> usize {
        lines
            .iter()
            .map(|l| l.width().div_ceil(usize::from(WIDTH - 2)).max(1))
            .sum()
    };
    // What to say under each check, from the first, as far as the screen has room: every
    // check's own line is always shown.
    let room = usize::from(area.height).saturating_sub(2);
    let mut says = window.read().map_or(0, |t| t.checks.len());
    let mut lines = body(window, says, look, theme);
    while says > 0 && rows(&lines) > room {
        says -= 1;
        lines = body(window, says, look, theme);
    }
    let height = u16::try_from(rows(&lines) + 2).unwrap_or(u16::MAX).min(area.height);
    let title = format!("Triage of {}", window.iccid);
    let inner = popup(frame, area, &title, WIDTH, height, theme);
    paragraph(frame, inner, lines);
}

/// The window's lines, with what to say under the first `says` checks that have it.
fn body(window: &TriageWindow, says: usize, look: &Look<'_>, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    match window.triage.value().map(|t| t.as_ref().as_ref()) {
        Some(Err(missing)) => lines.push(Line::styled(safe(missing), theme.error())),
        Some(Ok(triage)) => {
            for (i, check) in triage.checks.iter().enumerate() {
                let (mark, style) = match check.outcome {
                    Outcome::Passed => ("ok  ", theme.ok()),
                    Outcome::Failed => ("FAIL", theme.error()),
                    Outcome::NeedsCustomer => ("ASK ", theme.warning()),
                };
                lines.push(Line::from(vec![
                    Span::styled(mark, style),
                    Span::raw(safe(&format!(" {}: {}", check.title, check.found))),
                ]));
                if let Some(say) = check.say.as_ref().filter(|_| i < says) {
                    lines.push(Line::styled(safe(&format!("     say: {say}")), theme.muted()));
                }
            }
        }
        None if window.triage.is_loading() => lines.push(Line::styled(
            format!("{} reading the eSIM…", look.spinner()),
            theme.muted(),
        )),
        None => match window.triage.error() {
            Some(error) => lines.push(Line::styled(
                safe(&format!("The triage failed: {error}. r: try again")),
                theme.error(),
            )),
            None => lines.push(Line::styled("not read yet", theme.muted())),
        },
    }
    lines.push(keys_line(
        look,
        Context::Triage,
        "{} copy the escalation pack · {} read again · {} close",
        &[Action::CopyPack, Action::Refresh, Action::Close],
        theme.muted(),
    ));
    lines
}
