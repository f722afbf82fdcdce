//! The Profile tab: every field of the profile and the balance, and beside or under them the
//! money of the last 30 days (`money.rs`): in full where the tab has 100 columns and 30 rows
//! or more (a terminal of 100×34), else compact.

use super::money;
use crate::keymap::{Action, Context};
use crate::kit::remote::Remote;
use crate::view::Look;
use crate::view::lists::{failed_text, not_at_hand};
use crate::view::theme::Theme;
use crate::view::widgets::safe;
use crate::view::widgets::{fields, paragraph};
use esimdash_front::format::records;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};

/// From this size on, the money is drawn in full beside the fields.
pub const FULL_WIDTH: u16 = 100;
pub const FULL_HEIGHT: u16 = 30;

/// The fields' column in the full form.
const FIELDS_WIDTH: u16 = 44;

pub fn draw(frame: &mut Frame, area: Rect, look: &Look<'_>) {
    let theme = look.theme;
    if look.profile().is_none() {
        let line = match look.profile {
            Remote::Failed { error, .. } => Line::styled(failed_text(look, "the profile", error), theme.error()),
            other => Line::raw(not_at_hand(look, "the profile", Some(other))),
        };
        paragraph(frame, area, vec![line]);
        return;
    }
    if area.width >= FULL_WIDTH && area.height >= FULL_HEIGHT {
        let [left, _, right] = Layout::horizontal([
            Constraint::Length(FIELDS_WIDTH),
            Constraint::Length(2),
            Constraint::Fill(1),
        ])
        .areas(area);
        paragraph(frame, left, account_lines(look, left.width, theme, true));
        money::draw_full(frame, right, look, theme);
    } else {
        let lines = account_lines(look, area.width, theme, false);
        let rows = (lines.len() as u16).min(area.height);
        let [top, rest] = Layout::vertical([Constraint::Length(rows), Constraint::Fill(1)]).areas(area);
        paragraph(frame, top, lines);
        money::draw_compact(frame, rest, look, theme);
    }
}

/// The account's fields, what failed to refresh, the key to edit, and the values too long for
/// their row in full under them; `full`: with the title.
fn account_lines(look: &Look<'_>, width: u16, theme: &Theme, full: bool) -> Vec<Line<'static>> {
    let Some(p) = look.profile() else {
        return Vec::new();
    };
    let rows = records::profile_fields(p);
    let mut lines = Vec::new();
    if full {
        lines.extend([Line::styled(" Account and company", theme.title()), Line::raw("")]);
    }
    let shown = fields(&rows, width.saturating_sub(1), theme);
    lines.extend(shown.lines.into_iter().map(|l| {
        let mut spans = vec![Span::raw(" ")];
        spans.extend(
            l.spans
                .into_iter()
                .map(|s| Span::styled(s.content.into_owned(), s.style)),
        );
        Line::from(spans)
    }));
    if let Some(error) = look.profile.error() {
        lines.push(Line::styled(
            format!(
                " Not refreshed: {} · {} to try again",
                safe(&error.to_string()),
                look.refresh_key()
            ),
            theme.error(),
        ));
    }
    lines.push(Line::styled(
        format!(
            " {} to edit the company, country and website",
            look.keymap().first_key(Context::Profile, Action::Edit)
        ),
        theme.muted(),
    ));
    if !shown.in_full.is_empty() {
        lines.push(Line::raw(""));
        lines.extend(shown.in_full.into_iter().map(|l| {
            Line::from(
                l.spans
                    .into_iter()
                    .map(|s| Span::styled(s.content.into_owned(), s.style))
                    .collect::<Vec<_>>(),
            )
        }));
    }
    lines.push(Line::raw(""));
    lines
}
