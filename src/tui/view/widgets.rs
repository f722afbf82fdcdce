//! Pieces every view uses: a centred popup, label/value rows, a list window that scrolls a
//! screen at a time, and text made safe for the terminal.

use super::theme::Theme;
use crate::esim::text::sanitize;
use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph, Wrap};

/// Server or user text, safe to draw.
pub fn safe(text: &str) -> String {
    sanitize(text).into_owned()
}

/// A rectangle of at most `width`×`height` in the middle of `area`.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// Clears a centred popup and draws its frame; returns the inside.
pub fn popup(frame: &mut Frame, area: Rect, title: &str, width: u16, height: u16, theme: &Theme) -> Rect {
    let rect = centered(area, width, height);
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(format!(" {title} "), theme.title()));
    let inner = block.inner(rect);
    frame.render_widget(block, rect);
    inner
}

/// `Label  value` lines, labels padded to one width.
pub fn fields<'a>(rows: &[(&'a str, String)], theme: &Theme) -> Vec<Line<'a>> {
    let width = rows.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0);
    rows.iter()
        .map(|(k, v)| {
            Line::from(vec![
                Span::styled(format!("{k:<width$}  "), theme.muted()),
                Span::raw(safe(v)),
            ])
        })
        .collect()
}

pub fn paragraph(frame: &mut Frame, area: Rect, lines: Vec<Line<'_>>) {
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), area);
}

/// The first row shown when `cursor` is selected in a window of `height` rows: the window moves
/// a screen at a time, so rows stay put while the cursor moves within it.
pub fn window_start(cursor: usize, height: usize) -> usize {
    cursor.checked_div(height).map_or(0, |screens| screens * height)
}

/// Column widths that fit: drops the columns marked optional (from the last) until the rest fit.
pub fn fit_columns(width: u16, columns: &[(u16, bool)]) -> Vec<bool> {
    let mut keep: Vec<bool> = columns.iter().map(|_| true).collect();
    let needed = |keep: &[bool]| -> u16 {
        columns
            .iter()
            .zip(keep)
            .filter(|(_, k)| **k)
            .map(|((w, _), _)| w + 1)
            .sum()
    };
    for i in (0..columns.len()).rev() {
        if needed(&keep) <= width {
            break;
        }
        if columns[i].1 {
            keep[i] = false;
        }
    }
    keep
}

/// Constraints for the kept columns; the first column takes what is left.
pub fn constraints(columns: &[(u16, bool)], keep: &[bool]) -> Vec<Constraint> {
    columns
        .iter()
        .zip(keep)
        .enumerate()
        .filter(|(_, (_, k))| **k)
        .map(|(i, ((w, _), _))| {
            if i == 0 {
                Constraint::Min(*w)
            } else {
                Constraint::Length(*w)
            }
        })
        .collect()
}
