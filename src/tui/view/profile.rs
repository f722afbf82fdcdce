//! The Profile tab: every field of the profile and the balance.

use super::lists::failed_text;
use super::theme::Theme;
use super::widgets::safe;
use super::widgets::{fields, paragraph};
use crate::present;
use crate::tui::app::{App, Remote};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let Some(p) = app.profile() else {
        let line = match app.account() {
            Remote::Failed { error, .. } => Line::styled(failed_text("the profile", error), theme.error()),
            _ => Line::raw(" Loading the profile…"),
        };
        paragraph(frame, area, vec![line]);
        return;
    };
    let rows = present::profile_fields(p);
    let mut lines = vec![Line::styled(" Account and company", theme.title()), Line::raw("")];
    lines.extend(fields(&rows, theme).into_iter().map(|l| {
        let mut spans = vec![ratatui::text::Span::raw(" ")];
        spans.extend(l.spans);
        Line::from(spans)
    }));
    lines.push(Line::raw(""));
    if let Some(error) = app.account().error() {
        lines.push(Line::styled(
            format!(" Not refreshed: {} · r to try again", safe(&error.to_string())),
            theme.error(),
        ));
    }
    lines.push(Line::styled(
        " e to edit the company name, country and website",
        theme.muted(),
    ));
    paragraph(frame, area, lines);
}
