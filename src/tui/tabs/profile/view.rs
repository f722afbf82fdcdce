//! The Profile tab: every field of the profile and the balance.

use crate::format::records;
use crate::tui::app::{App, Remote};
use crate::tui::keymap::{Action, Context};
use crate::tui::view::lists::{failed_text, not_at_hand};
use crate::tui::view::refresh_key;
use crate::tui::view::theme::Theme;
use crate::tui::view::widgets::safe;
use crate::tui::view::widgets::{fields, paragraph};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let Some(p) = app.profile() else {
        let line = match app.account() {
            Remote::Failed { error, .. } => Line::styled(failed_text(app, "the profile", error), theme.error()),
            other => Line::raw(not_at_hand(app, "the profile", Some(other))),
        };
        paragraph(frame, area, vec![line]);
        return;
    };
    let rows = records::profile_fields(p);
    let mut lines = vec![Line::styled(" Account and company", theme.title()), Line::raw("")];
    let shown = fields(&rows, area.width.saturating_sub(1), theme);
    lines.extend(shown.lines.into_iter().map(|l| {
        let mut spans = vec![ratatui::text::Span::raw(" ")];
        spans.extend(l.spans);
        Line::from(spans)
    }));
    lines.push(Line::raw(""));
    if let Some(error) = app.account().error() {
        lines.push(Line::styled(
            format!(
                " Not refreshed: {} · {} to try again",
                safe(&error.to_string()),
                refresh_key(app)
            ),
            theme.error(),
        ));
    }
    lines.push(Line::styled(
        format!(
            " {} to edit the company name, country and website",
            app.keymap().first_key(Context::Profile, Action::Edit)
        ),
        theme.muted(),
    ));
    if !shown.in_full.is_empty() {
        lines.push(Line::raw(""));
        lines.extend(shown.in_full);
    }
    paragraph(frame, area, lines);
}
