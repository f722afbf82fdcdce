//! Pieces every view uses: a centred popup, label/value rows, a list window that scrolls a
//! screen at a time, and text made safe for the terminal.

use super::theme::Theme;
use crate::format::verdict::cell_tone;
use crate::text::{safe_fit, sanitize};
use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Cell, Clear, Paragraph, Row, Table, TableState, Wrap};

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

/// Label/value rows laid out for a window `width` columns wide: every field on one line, so a
/// long value never pushes the others out of view, and each value that had to be cut again in
/// full, to go after whatever else the window shows.
pub struct Fields<'a> {
    pub lines: Vec<Line<'a>>,
    pub in_full: Vec<Line<'a>>,
}

/// `Label  value` lines, labels padded to one width, values cut with `…` to fit `width`.
pub fn fields<'a>(rows: &[(&'a str, String)], width: u16, theme: &Theme) -> Fields<'a> {
    let label_width = rows.iter().map(|(k, _)| k.chars().count()).max().unwrap_or(0);
    let room = usize::from(width).saturating_sub(label_width + 2);
    let mut in_full = Vec::new();
    let lines = rows
        .iter()
        .map(|(k, v)| {
            let value = safe(v);
            let shown = safe_fit(&value, room);
            if shown != value {
                in_full.push(Line::styled(format!("{k} in full:"), theme.muted()));
                in_full.push(Line::raw(value.clone()));
            }
            Line::from(vec![
                Span::styled(format!("{k:<label_width$}  "), theme.muted()),
                Span::raw(shown.into_owned()),
            ])
        })
        .collect();
    Fields { lines, in_full }
}

pub fn paragraph(frame: &mut Frame, area: Rect, lines: Vec<Line<'_>>) {
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), area);
}

/// The first row shown when `cursor` is selected in a window of `height` rows: the window moves
/// a screen at a time, so rows stay put while the cursor moves within it.
pub fn window_start(cursor: usize, height: usize) -> usize {
    cursor.checked_div(height).map_or(0, |screens| screens * height)
}

/// A table column: its title, its width, whether it may be dropped when space is short,
/// whether it takes the width left over, and whether its values are numbers (right-aligned).
#[derive(Debug, Clone, Copy)]
pub struct Column {
    pub title: &'static str,
    pub width: u16,
    pub optional: bool,
    pub flex: bool,
    pub right: bool,
    /// Holds a status, coloured by it.
    pub status: bool,
}

impl Column {
    pub const fn new(title: &'static str, width: u16) -> Self {
        Self {
            title,
            width,
            optional: false,
            flex: false,
            right: false,
            status: false,
        }
    }
    pub const fn status(self) -> Self {
        Self { status: true, ..self }
    }
    pub const fn optional(self) -> Self {
        Self { optional: true, ..self }
    }
    pub const fn flex(self) -> Self {
        Self { flex: true, ..self }
    }
    pub const fn right(self) -> Self {
        Self { right: true, ..self }
    }
}

/// The narrowest a flex (text) column is made before an optional column is dropped.
const FLEX_MIN: u16 = 8;

/// Which columns fit: optional ones are dropped, from the last, until the rest fit with every
/// fixed column at its full width (numbers and dates are never cut) and the flex (text) column
/// narrowed to `FLEX_MIN` at the least.
fn fit(width: u16, columns: &[Column]) -> Vec<bool> {
    let mut keep = vec![true; columns.len()];
    let needed = |keep: &[bool]| -> u16 {
        let cells: u16 = columns
            .iter()
            .zip(keep)
            .filter(|(_, k)| **k)
            .map(|(c, _)| if c.flex { c.width.min(FLEX_MIN) } else { c.width } + 1)
            .sum();
        cells + MARKER_WIDTH
    };
    for i in (0..columns.len()).rev() {
        if needed(&keep) <= width {
            break;
        }
        if columns[i].optional {
            keep[i] = false;
        }
    }
    keep
}

/// A table of `items` with the one at `cursor` selected: only the screenful holding the cursor
/// is turned into cells and drawn (a list may hold thousands).
pub fn cursor_table<T>(
    frame: &mut Frame,
    area: Rect,
    columns: &[Column],
    items: impl Iterator<Item = T>,
    cells: impl Fn(T) -> Vec<String>,
    cursor: usize,
    theme: &Theme,
) {
    let height = area.height.saturating_sub(1) as usize;
    let start = window_start(cursor, height);
    let rows = items.skip(start).take(height).map(cells).collect();
    table(frame, area, columns, rows, cursor - start, theme);
}

/// Drawn before the selected row; every row keeps its width free.
const MARKER: &str = "› ";
const MARKER_WIDTH: u16 = 2;

/// Draws the rows in view (already cut to the window) with `selected` highlighted.
fn table(frame: &mut Frame, area: Rect, columns: &[Column], rows: Vec<Vec<String>>, selected: usize, theme: &Theme) {
    let keep = fit(area.width, columns);
    let kept = |i: usize| keep.get(i).copied().unwrap_or(false);
    let widths: Vec<Constraint> = columns
        .iter()
        .enumerate()
        .filter(|(i, _)| kept(*i))
        .map(|(_, c)| {
            if c.flex {
                Constraint::Min(c.width.min(FLEX_MIN))
            } else {
                Constraint::Length(c.width)
            }
        })
        .collect();
    // The columns as the table will lay them out (after the marker and one space between), so a
    // value too long for its column ends in `…` rather than stopping mid-word unmarked.
    let room: Vec<usize> = Layout::horizontal(widths.clone())
        .flex(Flex::Start)
        .spacing(1)
        .split(Rect::new(0, 0, area.width.saturating_sub(MARKER_WIDTH), 1))
        .iter()
        .map(|r| usize::from(r.width))
        .collect();
    // Every cell is made safe here, in one place, and only as far as its column shows.
    let cell = |column: &Column, text: String, room: usize| {
        let text = safe_fit(&text, room).into_owned();
        let style = if column.status {
            theme.status(cell_tone(&text))
        } else {
            ratatui::style::Style::new()
        };
        let line = Line::styled(text, style);
        Cell::from(if column.right { line.right_aligned() } else { line })
    };
    let header = Row::new(
        columns
            .iter()
            .enumerate()
            .filter(|(i, _)| kept(*i))
            .zip(&room)
            .map(|((_, c), &room)| cell(c, c.title.to_string(), room)),
    )
    .style(theme.muted());
    let rows = rows.into_iter().map(|values| {
        Row::new(
            values
                .into_iter()
                .zip(columns)
                .enumerate()
                .filter(|(i, _)| kept(*i))
                .zip(&room)
                .map(|((_, (v, c)), &room)| cell(c, v, room)),
        )
    });
    // The marker shows the cursor even where colours and reverse video do not.
    let table = Table::new(rows, widths)
        .header(header)
        .row_highlight_style(theme.selected())
        .highlight_symbol(MARKER);
    let mut state = TableState::default().with_selected(Some(selected));
    frame.render_stateful_widget(table, area, &mut state);
}

/// A line naming keys of the keymap in force, where `template`'s `{}` stand (`Keymap::say`).
pub fn keys_line(
    app: &crate::tui::app::App,
    context: crate::tui::keymap::Context,
    template: &str,
    actions: &[crate::tui::keymap::Action],
    style: ratatui::style::Style,
) -> Line<'static> {
    Line::styled(app.keymap().say(context, template, actions), style)
}
