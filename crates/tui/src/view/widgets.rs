//! Pieces every view uses: a centred popup, label/value rows, a list window that scrolls a
//! screen at a time, and text made safe for the terminal.

use super::theme::Theme;
use esimdash_domain::text::{fit_package, safe_fit, sanitize};
use esimdash_front::format::verdict::cell_tone;
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

/// A popup as tall as its `lines` need, wrapped at its width (at most `area`'s), drawn with
/// them: a long message is never cut. Returns the inside.
pub fn text_popup(frame: &mut Frame, area: Rect, title: &str, width: u16, lines: Vec<Line<'_>>, theme: &Theme) -> Rect {
    let text = Paragraph::new(lines).wrap(Wrap { trim: false });
    let rows = text.line_count(width.min(area.width).saturating_sub(2));
    let inner = popup(
        frame,
        area,
        title,
        width,
        u16::try_from(rows).unwrap_or(u16::MAX).saturating_add(2),
        theme,
    );
    frame.render_widget(text, inner);
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
    /// Holds package names, shortened by whole words (`text::fit_package`).
    pub package: bool,
    /// The width it gives up first when the flex column's text would be cut, keeping the start
    /// of each value whole (a time's date).
    pub narrow: Option<u16>,
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
            package: false,
            narrow: None,
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
    pub const fn package(self) -> Self {
        Self { package: true, ..self }
    }
    pub const fn narrow(self, width: u16) -> Self {
        Self {
            narrow: Some(width),
            ..self
        }
    }
}

/// The narrowest a flex (text) column is made before an optional column is dropped.
const FLEX_MIN: u16 = 8;

/// The width of each column kept (`None`: dropped). Optional ones are dropped, from the last,
/// until the rest fit with every fixed column at its full width (numbers and dates are never
/// cut) or its narrow one, and the flex (text) column narrowed to `FLEX_MIN` at the least. A
/// column with a narrow width keeps its full one only while the flex column still has room
/// for `flex_wants` (its widest value in view).
fn fit(width: u16, columns: &[Column], flex_wants: u16) -> Vec<Option<u16>> {
    let mut keep = vec![true; columns.len()];
    let cells = |keep: &[bool], fixed: &dyn Fn(&Column) -> u16| -> u16 {
        let cells: u16 = columns
            .iter()
            .zip(keep)
            .filter(|(_, k)| **k)
            .map(|(c, _)| if c.flex { 0 } else { fixed(c) } + 1)
            .sum();
        cells + MARKER_WIDTH
    };
    let narrowest = |c: &Column| c.narrow.unwrap_or(c.width);
    let flexes = |keep: &[bool]| -> u16 {
        columns
            .iter()
            .zip(keep)
            .filter(|(c, k)| **k && c.flex)
            .map(|(c, _)| c.width.min(FLEX_MIN))
            .sum()
    };
    for i in (0..columns.len()).rev() {
        if cells(&keep, &narrowest) + flexes(&keep) <= width {
            break;
        }
        if columns[i].optional {
            keep[i] = false;
        }
    }
    let full = cells(&keep, &|c: &Column| c.width);
    let wide = full.saturating_add(flex_wants) <= width;
    columns
        .iter()
        .zip(keep)
        .map(|(c, k)| k.then_some(if wide { c.width } else { narrowest(c) }))
        .collect()
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
    cursor_table_from(frame, area, columns, |from| items.skip(from), cells, cursor, theme);
}

/// `cursor_table` over items that can start anywhere at once (`items_from(k)`: from the `k`th).
pub fn cursor_table_from<T, I: Iterator<Item = T>>(
    frame: &mut Frame,
    area: Rect,
    columns: &[Column],
    items_from: impl FnOnce(usize) -> I,
    cells: impl Fn(T) -> Vec<String>,
    cursor: usize,
    theme: &Theme,
) {
    let height = area.height.saturating_sub(1) as usize;
    let (start, rows) = last_screen_full(items_from, cursor, height);
    let rows = rows.into_iter().map(cells).collect();
    table(frame, area, columns, rows, cursor.saturating_sub(start), theme);
}

/// The items in view with the first one's index. The window moves a screen at a time, but the
/// screen that reaches the end of the list is drawn full (the rows above filling it), so `G`
/// shows a whole view ending on the last row rather than a few rows over empty lines. The screen
/// before is read along to fill it: the list's length is never counted.
fn last_screen_full<T, I: Iterator<Item = T>>(
    items_from: impl FnOnce(usize) -> I,
    cursor: usize,
    height: usize,
) -> (usize, Vec<T>) {
    let natural = window_start(cursor, height);
    let from = natural.saturating_sub(height);
    let mut near: Vec<T> = items_from(from).take(natural - from + height).collect();
    let start = natural.min((from + near.len()).saturating_sub(height)).max(from);
    near.drain(..start - from);
    near.truncate(height);
    (start, near)
}

/// Columns a value takes, looking at no more of it than a terminal could show (a name may be
/// thousands of characters, and every row is measured every frame).
fn text_width(text: &str) -> u16 {
    use unicode_width::UnicodeWidthStr;
    let head: String = text.chars().take(1024).collect();
    u16::try_from(head.width()).unwrap_or(u16::MAX)
}

/// Drawn before the selected row; every row keeps its width free.
const MARKER: &str = "› ";
const MARKER_WIDTH: u16 = 2;

/// Draws the rows in view (already cut to the window) with `selected` highlighted.
fn table(frame: &mut Frame, area: Rect, columns: &[Column], rows: Vec<Vec<String>>, selected: usize, theme: &Theme) {
    let flex_wants = columns
        .iter()
        .position(|c| c.flex)
        .and_then(|i| rows.iter().filter_map(|r| r.get(i)).map(|v| text_width(v)).max())
        .unwrap_or(0);
    let laid = fit(area.width, columns, flex_wants);
    let kept = |i: usize| laid.get(i).copied().flatten().is_some();
    let widths: Vec<Constraint> = columns
        .iter()
        .zip(&laid)
        .filter_map(|(c, w)| Some((c, (*w)?)))
        .map(|(c, w)| {
            if c.flex {
                Constraint::Min(c.width.min(FLEX_MIN))
            } else {
                Constraint::Length(w)
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
        let text = if column.package {
            fit_package(&text, room).into_owned()
        } else if column.narrow.is_some() && usize::from(text_width(&text)) > room {
            // The start of the value, whole: the date of a time.
            safe_fit(&text, room + 1).trim_end_matches('…').trim_end().to_string()
        } else {
            safe_fit(&text, room).into_owned()
        };
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

/// ` · search: text▏`, where a search has text or is being typed (`typing`, with the cursor).
/// The text is drawn selected while the next key typed would replace it (the search opened
/// again), so that the agent sees the old text will go.
pub fn search_spans(label: &str, text: &str, typing: bool, selected: bool, theme: &Theme) -> Vec<Span<'static>> {
    if !typing && text.is_empty() {
        return Vec::new();
    }
    let style = if typing && selected {
        theme.selected()
    } else {
        theme.key()
    };
    let mut spans = vec![Span::raw(format!(" · {label}: ")), Span::styled(safe(text), style)];
    if typing {
        spans.push(Span::raw("▏"));
    }
    spans
}

/// A line naming keys of the keymap in force, where `template`'s `{}` stand (`Keymap::say`).
pub fn keys_line(
    look: &crate::view::Look<'_>,
    context: crate::keymap::Context,
    template: &str,
    actions: &[crate::keymap::Action],
    style: ratatui::style::Style,
) -> Line<'static> {
    Line::styled(look.keymap().say(context, template, actions), style)
}

#[cfg(test)]
mod tests {
    use super::last_screen_full;

    #[test]
    fn the_screen_reaching_the_end_of_the_list_is_full() {
        let window = |len: usize, cursor: usize| {
            let (start, rows) = last_screen_full(|from| (0..len).skip(from), cursor, 35);
            (start, rows.len())
        };
        assert_eq!(window(50, 49), (15, 35), "the last 35 of 50, not 15 over empty lines");
        assert_eq!(window(50, 34), (0, 35), "the first screen stays put");
        assert_eq!(window(50, 35), (15, 35));
        assert_eq!(
            window(20, 19),
            (0, 20),
            "a list shorter than the view starts at its top"
        );
        assert_eq!(window(200, 80), (70, 35), "away from the end: a screen at a time");
        assert_eq!(window(0, 0), (0, 0));
        assert_eq!(
            last_screen_full(|from| (0..10).skip(from), 3, 0),
            (0, Vec::new()),
            "no room"
        );
    }
}
