//! The Profile tab: every field of the profile and the balance.

use super::lists::failed_text;
use super::theme::Theme;
use super::widgets::safe;
use super::widgets::{fields, paragraph};
use crate::esim::money::format_amount;
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
    let unset = |v: &str| {
        if v.is_empty() {
            "(not set)".to_string()
        } else {
            v.to_string()
        }
    };
    let rows = [
        ("Name", p.name.clone()),
        ("E-mail", p.email.clone()),
        ("Role", p.role.clone()),
        ("Account status", p.status.clone()),
        ("Company", unset(&p.company_name)),
        ("Country", unset(&p.country)),
        ("Website", unset(&p.website)),
        (
            "Balance",
            p.balance_usd
                .map_or_else(|| "-".to_string(), |b| format!("{} USD", format_amount(b))),
        ),
    ];
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
