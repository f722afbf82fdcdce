//! The saved views of the tab shown (`V`): their names, the one the tab shows now marked, and
//! what is wrong with the config's entries that are not views (each with its line). Enter
//! switches to the one chosen; `s` saves the tab's search and filter as a new one.

use crate::keymap::{Action, Context};
use crate::view::Look;
use crate::view::theme::Theme;
use crate::view::widgets::{keys_line, paragraph, popup, safe};
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;

/// The window as opened on a tab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ViewsWindow {
    pub tab_title: &'static str,
    pub names: Vec<String>,
    /// The view the tab shows now, if its filters are one's.
    pub shown: Option<String>,
    pub problems: Vec<String>,
    pub cursor: usize,
}

pub(crate) fn draw(frame: &mut Frame, area: Rect, window: &ViewsWindow, look: &Look<'_>, theme: &Theme) {
    const WIDTH: u16 = 70;
    let mut lines = Vec::new();
    if window.names.is_empty() {
        lines.push(Line::raw(format!(
            "No saved view of {}: s saves the search and filter shown now.",
            window.tab_title
        )));
    }
    for (i, name) in window.names.iter().enumerate() {
        let here = if window.shown.as_ref() == Some(name) {
            " (shown)"
        } else {
            ""
        };
        let text = format!("{} {}{here}", if i == window.cursor { "›" } else { " " }, safe(name));
        let style = if i == window.cursor {
            theme.selected()
        } else {
            Style::default()
        };
        lines.push(Line::styled(text, style));
    }
    for problem in &window.problems {
        lines.push(Line::styled(safe(problem), theme.error()));
    }
    lines.push(keys_line(
        look,
        Context::Views,
        "{} show it · {} save the search and filter shown as a view · {} close",
        &[Action::Accept, Action::SaveView, Action::Close],
        theme.muted(),
    ));
    let rows: usize = lines
        .iter()
        .map(|l| l.width().div_ceil(usize::from(WIDTH - 2)).max(1))
        .sum();
    let height = u16::try_from(rows + 2).unwrap_or(u16::MAX).min(area.height);
    let title = format!("Saved views: {}", window.tab_title);
    let inner = popup(frame, area, &title, WIDTH, height, theme);
    paragraph(frame, inner, lines);
}
