//! The My eSIMs tab: the inventory table (or search results), and the detail pane with the
//! activation QR code: dark modules as black ink on a white ground whatever the terminal's
//! colours (kept even with NO_COLOR: a camera needs them), with the 4-module quiet zone.

use crate::index::Index;
use crate::kit::remote::Remote;
use crate::tabs::esims::Esims;
use crate::tabs::esims::ResultRow;
use crate::tabs::esims::marks::Marks;
use crate::view::lists::failed_text;
use crate::view::lists::{draw_table, title};
use crate::view::theme::Theme;
use crate::view::widgets::{Column, cursor_table, cursor_table_from, safe, search_spans};
use crate::view::{Focus, Look};
use esimdash_api::Found;
use esimdash_api::model::Esim;
use esimdash_domain::attention::Judged;
use esimdash_domain::text::grouped as group;
use esimdash_front::format::verdict::{self};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr;

mod pane;
mod zoom;

use pane::draw_pane;
pub use zoom::draw_zoom;

/// What My eSIMs is drawn from: its own state and the frame's context.
pub(super) struct Seen<'a> {
    esims: &'a Esims,
    look: &'a Look<'a>,
}

impl<'a> Seen<'a> {
    pub(super) fn esims(&self) -> &'a Esims {
        self.esims
    }
}

impl<'a> std::ops::Deref for Seen<'a> {
    type Target = Look<'a>;
    fn deref(&self) -> &Look<'a> {
        self.look
    }
}

/// Width of the detail pane beside the table; the table needs `TABLE_MIN` next to it.
const PANE_WIDTH: u16 = 46;
const TABLE_MIN: u16 = 64;

/// The raw SM-DP+ status goes last, dropped first: STATUS already says it in words.
const COLUMNS: [Column; 7] = [
    Column::new("ICCID", 20),
    Column::new("STATUS", 16).status(),
    Column::new("PACKAGE", 14).flex().package(),
    Column::new("LOC", 4).optional(),
    Column::new("USED", 10).optional(),
    Column::new("EXPIRES", 10).optional(),
    Column::new("SM-DP+", 12).optional(),
];

/// In front of the columns while any eSIM is marked: `✓` on a marked one (`●` is a status's).
const MARK: Column = Column::new("", 1);

/// The columns, with the marks' in front while there are marks.
fn marked_columns(v: &Seen<'_>, columns: &[Column]) -> Vec<Column> {
    let marks = !v.esims().marks().is_empty();
    marks
        .then_some(MARK)
        .into_iter()
        .chain(columns.iter().copied())
        .collect()
}

/// A row's cells, with its mark in front while there are marks.
fn marked_cells(v: &Seen<'_>, marked: impl Fn(&Marks) -> bool, mut cells: Vec<String>) -> Vec<String> {
    let marks = v.esims().marks();
    if !marks.is_empty() {
        cells.insert(0, if marked(marks) { "✓" } else { " " }.to_string());
    }
    cells
}

/// ` · 3 marked`, while any eSIM is marked.
fn mark_count(v: &Seen<'_>) -> String {
    match v.esims().marks().len() {
        0 => String::new(),
        n => format!(" · {n} marked"),
    }
}

/// The tab's top line, with how many eSIMs are marked.
fn with_mark_count(v: &Seen<'_>, mut line: Line<'static>, theme: &Theme) -> Line<'static> {
    let marks = mark_count(v);
    if !marks.is_empty() {
        line.spans.push(Span::styled(marks, theme.title()));
    }
    line
}

/// `██░░░ 45%` from bytes used (10 columns at 100 %) of the total.
pub fn usage_gauge(used: u64, total: u64) -> String {
    if total == 0 {
        return "-".to_string();
    }
    let pct = (u128::from(used.min(total)) * 100 / u128::from(total)) as u8;
    // Some use reads 1 %, never 0 % beside "in use".
    pct_gauge(if used > 0 { pct.max(1) } else { pct })
}

/// `██░░░ 45%` from a whole percentage (the index keeps no bytes).
fn pct_gauge(pct: u8) -> String {
    let pct = usize::from(pct.min(100));
    let filled = (pct * 5 + 50) / 100;
    format!("{}{} {pct:>2}%", "█".repeat(filled), "░".repeat(5 - filled))
}

fn cells(e: &Esim) -> Vec<String> {
    let raw = &e.raw_order_json;
    vec![
        raw.iccid.to_string(),
        verdict::esim_cell(e),
        e.record.package_name.clone(),
        esimdash_domain::location::short(&e.record.location_code).to_string(),
        match (raw.order_usage, raw.total_volume) {
            (Some(u), Some(t)) => usage_gauge(u, t),
            _ => "-".to_string(),
        },
        safe(&raw.expired_time.date()),
        raw.smdp_status.clone(),
    ]
}

pub fn draw(frame: &mut Frame, area: Rect, esims: &Esims, look: &Look<'_>) {
    let (v, theme) = (&Seen { esims, look }, look.theme);
    let typing = v.typing();
    let side_by_side = area.width >= TABLE_MIN + PANE_WIDTH;
    let (list_area, pane_area) = if side_by_side {
        let [l, p] = Layout::horizontal([Constraint::Min(TABLE_MIN), Constraint::Length(PANE_WIDTH)]).areas(area);
        (Some(l), Some(p))
    } else if v.focus == Focus::Detail {
        (None, Some(area))
    } else {
        (Some(area), None)
    };
    if let Some(list_area) = list_area {
        let [top, rows] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(list_area);
        let columns = marked_columns(v, &COLUMNS);
        let cells = |e: &Esim| marked_cells(v, |m| m.contains(&e.raw_order_json.iccid), cells(e));
        if esims.search_active() || typing {
            let room = usize::from(top.width).saturating_sub(mark_count(v).width());
            let line = with_mark_count(v, search_title(v, typing, room, theme), theme);
            frame.render_widget(Paragraph::new(line), top);
            draw_results(frame, rows, v, theme);
        } else if let Some(pinned) = esims.pinned() {
            let text = " My eSIMs · the eSIM found (its row in the list is not known yet; move for the list)";
            let line = with_mark_count(v, Line::styled(text, theme.title()), theme);
            frame.render_widget(Paragraph::new(line), top);
            cursor_table(frame, rows, &columns, std::iter::once(pinned), cells, 0, theme);
        } else {
            let line = title(v, esims.list(), "My eSIMs", esims.status(), None, theme);
            frame.render_widget(Paragraph::new(with_mark_count(v, line, theme)), top);
            draw_table(frame, rows, v, esims.list(), &columns, cells, theme);
        }
    }
    if let Some(pane) = pane_area {
        draw_pane(frame, pane, v, theme);
    }
}

/// ` My eSIMs · search: 8944▏ · 3 found · loaded 1 400 of 3 112`, or with the saved index
/// ` · in the index of 2 h ago (reading again: 1 400 of 3 112)`. With `!` on, the rule in the
/// most words that leave `width` room for the count and the index's progress.
fn search_title(v: &Seen<'_>, typing: bool, width: usize, theme: &Theme) -> Line<'static> {
    let esims = v.esims();
    let search = esims.search();
    let mut rest = search_spans("search", search.typed(), typing, search.is_selected(), theme);
    rest.push(Span::raw(format!(" · {} found", esims.result_count())));
    let head = Span::styled(" My eSIMs", theme.title());
    let mut spans = vec![head.clone()];
    if let Some(rule) = esims.attention().then(|| v.index.rule()) {
        let (pct, days) = (rule.used_pct, rule.days);
        let wordings = [
            format!(" · needs attention, most urgent first (≥ {pct} % used or ≤ {days} d left)"),
            format!(" · needs attention (≥ {pct} % used or ≤ {days} d left)"),
            format!(" · attention (≥ {pct} % or ≤ {days} d)"),
            " · attention".to_string(),
        ];
        // The count first, then how much of the inventory it is of, then the rule's words.
        let taken = head.width() + rest.iter().map(Span::width).sum::<usize>() + index_progress(v).width();
        let room = width.saturating_sub(taken);
        let [.., shortest] = &wordings;
        let wording = wordings.iter().find(|w| w.width() <= room).unwrap_or(shortest);
        spans.push(Span::styled(wording.clone(), theme.key()));
    }
    spans.extend(rest);
    let status = esims.status().query().map(|status| format!(" · {}", safe(&status)));
    // After the count, only what fits whole: "all 399 in t" reads as nothing.
    for more in [Some(index_progress(v)), status].into_iter().flatten() {
        if spans.iter().map(Span::width).sum::<usize>() + more.width() <= width {
            spans.push(Span::styled(more, theme.muted()));
        }
    }
    Line::from(spans)
}

/// ` · index 12 400 of 100 956 · 9 min to go`, ` · all 100 956 in the index` (under `!`, with
/// how old: `, 12 min old`): how much of the inventory the search sees. "reading" only while a
/// page is asked for.
fn index_progress(v: &Seen<'_>) -> String {
    let index = v.index.read();
    let covered = group(index.covered());
    // Said once it is a minute or more: a count read just now needs no age.
    let age = v.esims().attention().then(|| v.index.attention_age()).flatten();
    let age = age.filter(|a| a.num_seconds() >= 60);
    let progress = match (index.total(), index.is_complete(), index.error()) {
        // Under `!`, how old the count is: its oldest usable eSIM's read.
        (Some(total), true, _) => match age {
            Some(age) => format!(
                "all {} in the index, {} old",
                group(total),
                esimdash_domain::text::age(age)
            ),
            None => format!("all {} in the index", group(total)),
        },
        (Some(total), false, Some(_)) => format!("index stopped at {covered} of {}", group(total)),
        (Some(total), false, None) => match index.time_to_go(v.session.index_pages_per_minute) {
            Some(left) => format!("index {covered} of {} · {} to go", group(total), duration_words(left)),
            None => format!("index {covered} of {}", group(total)),
        },
        (None, _, Some(_)) => "the index could not be read".to_string(),
        (None, _, None) if index.is_reading() => "reading the index…".to_string(),
        (None, _, None) => return String::new(),
    };
    format!(" · {progress}")
}

/// `40 s`, `9 min`, `2 h 5 min`: a time to go, coarsely.
fn duration_words(d: std::time::Duration) -> String {
    match d.as_secs() {
        s if s < 60 => format!("{s} s"),
        s if s < 3_600 => format!("{} min", s.div_ceil(60)),
        s => format!("{} h {} min", s / 3_600, s % 3_600 / 60),
    }
}

fn draw_results(frame: &mut Frame, area: Rect, v: &Seen<'_>, theme: &Theme) {
    let esims = v.esims();
    let index = v.index.read();
    let whole = esims.whole_iccid();
    let lookup = esims
        .fresh()
        .filter(|f| whole.as_ref().is_some_and(|w| *w == f.iccid))
        .map(|f| &f.record);
    if esims.result_count() == 0 {
        let text = match (lookup.and_then(Remote::value), lookup) {
            (Some(Found::Absent), _) => Some(" No eSIM with that ICCID in this account.".to_string()),
            (_, Some(r)) if r.is_loading() => Some(" Looking up that ICCID…".to_string()),
            (_, Some(r)) => r.error().map(|e| failed_text(v, "that ICCID", e)),
            _ => None,
        };
        if let Some(text) = text {
            frame.render_widget(Paragraph::new(text).wrap(ratatui::widgets::Wrap { trim: false }), area);
            return;
        }
    }
    if let Some(error) = index.error() {
        // Shown above any results: what was found is only part of the inventory.
        let [note, rest] = Layout::vertical([Constraint::Length(2), Constraint::Min(0)]).areas(area);
        let text = failed_text(v, "the whole inventory", error);
        frame.render_widget(
            Paragraph::new(Line::styled(text, theme.error())).wrap(ratatui::widgets::Wrap { trim: false }),
            note,
        );
        if esims.result_count() > 0 {
            draw_result_rows(frame, rest, v, theme);
        }
        return;
    }
    if esims.result_count() == 0 {
        let text = if let Some(why) = esims.mistyped_iccid() {
            format!(" No eSIM matches: not a valid ICCID ({why}).")
        } else if index.is_complete() {
            " No eSIM matches.".to_string()
        } else if v.halt.is_some() {
            // Nothing could be asked: "no match" would tell the customer there is no such eSIM.
            format!(
                " Not searched beyond the {} eSIMs in the index:{}",
                group(index.covered()),
                crate::view::lists::not_at_hand::<()>(v, "the inventory", None)
            )
        } else if !index.is_reading() {
            format!(
                " No eSIM matches among the {} in the index so far.",
                group(index.covered())
            )
        } else {
            format!(
                " Nothing found yet: still reading the inventory into the index ({} of {}).",
                group(index.covered()),
                index.total().map_or("…".to_string(), group)
            )
        };
        frame.render_widget(Paragraph::new(text).wrap(ratatui::widgets::Wrap { trim: false }), area);
        return;
    }
    draw_result_rows(frame, area, v, theme);
}

/// A result row: the full record's cells, or what the index knows (ICCID, status, package),
/// the status with its age when it was read long ago.
fn result_cells(index: &Index, row: ResultRow<'_>) -> Vec<String> {
    match row {
        ResultRow::Fetched(e) => cells(e),
        ResultRow::Indexed(r) => vec![
            r.iccid.to_string(),
            indexed_status(index, &r),
            r.package.name.clone(),
            esimdash_domain::location::short(&r.package.location).to_string(),
            r.limits.used_pct.map_or("-".to_string(), pct_gauge),
            r.limits
                .expires
                .and_then(|t| chrono::DateTime::from_timestamp(t, 0))
                .map_or_else(String::new, |t| t.format("%Y-%m-%d").to_string()),
            String::new(),
        ],
    }
}

/// "Needs attention": why (data used, time left) before what, at every width.
const ATTENTION_COLUMNS: [Column; 6] = [
    Column::new("ICCID", 20),
    Column::new("USED", 4).right(),
    Column::new("LEFT", 6).right(),
    Column::new("STATUS", 16).status().optional(),
    Column::new("PACKAGE", 14).flex().package(),
    Column::new("LOC", 4).optional(),
];

/// `12 d`, `5 h`, `ended`: the time an eSIM has left, as its LEFT cell.
fn time_left(expires: Option<i64>, now: chrono::DateTime<chrono::Utc>) -> String {
    let Some(expires) = expires else {
        return "-".to_string();
    };
    match expires.saturating_sub(now.timestamp()) {
        s if s <= 0 => "ended".to_string(),
        s if s < 2 * 86_400 => format!("{} h", s / 3_600),
        s => format!("{} d", s / 86_400),
    }
}

/// `in use`, or `in use (3 d old)` when the index read it longer ago than the configured age.
fn indexed_status(index: &Index, row: &esimdash_inventory::Row<'_>) -> String {
    let words = verdict::state_words(row.class, row.status);
    match index.stale_age(row) {
        Some(age) if age.num_days() > 0 => format!("{words} ({} d old)", age.num_days()),
        Some(age) => format!("{words} ({} h old)", age.num_hours()),
        None => words.to_string(),
    }
}

fn attention_cells(index: &Index, row: ResultRow<'_>) -> Vec<String> {
    let now = index.now();
    let (iccid, status, limits, package, location) = match row {
        ResultRow::Fetched(e) => (
            e.raw_order_json.iccid.to_string(),
            verdict::esim_cell(e),
            e.limits(),
            e.record.package_name.clone(),
            esimdash_domain::location::short(&e.record.location_code).to_string(),
        ),
        ResultRow::Indexed(r) => (
            r.iccid.to_string(),
            indexed_status(index, &r),
            r.limits,
            r.package.name.clone(),
            esimdash_domain::location::short(&r.package.location).to_string(),
        ),
    };
    vec![
        iccid,
        limits.used_pct.map_or("-".to_string(), |p| format!("{p}%")),
        time_left(limits.expires, now),
        status,
        package,
        location,
    ]
}

fn draw_result_rows(frame: &mut Frame, area: Rect, v: &Seen<'_>, theme: &Theme) {
    let esims = v.esims();
    let index = v.index;
    if esims.attention() {
        let cells = move |row: ResultRow<'_>| marked_cells(v, |m| m.contains_row(&row), attention_cells(index, row));
        cursor_table_from(
            frame,
            area,
            &marked_columns(v, &ATTENTION_COLUMNS),
            |from| esims.result_rows_from(index, from),
            cells,
            esims.result_cursor(),
            theme,
        );
        return;
    }
    cursor_table_from(
        frame,
        area,
        &marked_columns(v, &COLUMNS),
        |from| esims.result_rows_from(index, from),
        |row| marked_cells(v, |m| m.contains_row(&row), result_cells(index, row)),
        esims.result_cursor(),
        theme,
    );
}
