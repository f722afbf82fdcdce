//! The My eSIMs tab: the inventory table (or search results), and the detail pane with the
//! activation QR code: dark modules as black ink on a white ground whatever the terminal's
//! colours (kept even with NO_COLOR: a camera needs them), with the 4-module quiet zone.

use crate::app::Remote;
use crate::keymap::{Action, Context};
use crate::tabs::esims::Esims;
use crate::tabs::esims::{Code, ResultRow};
use crate::view::lists::failed_text;
use crate::view::lists::{draw_table, short_time, title};
use crate::view::theme::Theme;
use crate::view::widgets::{Column, cursor_table, cursor_table_from, keys_line, paragraph, safe, search_spans};
use crate::view::{Focus, Look};
use esimdash_api::Found;
use esimdash_api::model::Esim;
use esimdash_domain::attention::Judged;
use esimdash_domain::esim_state::Class;
use esimdash_domain::lpa::{ActivationCode, apple_install_link};
use esimdash_domain::qr::QrMatrix;
use esimdash_domain::text::grouped as group;
use esimdash_domain::text::safe_fit;
use esimdash_front::format::verdict::{self, Verdict};
use esimdash_front::format::volume::format_bytes;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use unicode_width::UnicodeWidthStr;

/// What My eSIMs is drawn from: its own state and the frame's context.
struct Seen<'a> {
    esims: &'a Esims,
    look: &'a Look<'a>,
}

impl<'a> Seen<'a> {
    fn esims(&self) -> &'a Esims {
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
fn marked_cells(v: &Seen<'_>, iccid: &str, mut cells: Vec<String>) -> Vec<String> {
    let marks = v.esims().marks();
    if !marks.is_empty() {
        cells.insert(0, if marks.contains(iccid) { "✓" } else { " " }.to_string());
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
        let cells = |e: &Esim| marked_cells(v, e.raw_order_json.iccid.as_str(), cells(e));
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
    if let Some(rule) = esims.attention() {
        let (pct, days) = (rule.used_pct, rule.days);
        let wordings = [
            format!(" · needs attention, most urgent first (≥ {pct}% used or ≤ {days} d left)"),
            format!(" · needs attention (≥ {pct}% used or ≤ {days} d left)"),
            format!(" · attention (≥ {pct}% or ≤ {days} d)"),
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

/// ` · index 12 400 of 100 956 · 9 min to go`, ` · all 100 956 in the index`: how much of the
/// inventory the search sees. "reading" only while a page is asked for.
fn index_progress(v: &Seen<'_>) -> String {
    let index = v.esims().index();
    let covered = group(index.covered());
    let progress = match (index.total(), index.is_complete(), index.error()) {
        (Some(total), true, _) => format!("all {} in the index", group(total)),
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
    let index = esims.index();
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
fn result_cells(esims: &crate::tabs::esims::Esims, row: ResultRow<'_>) -> Vec<String> {
    match row {
        ResultRow::Fetched(e) => cells(e),
        ResultRow::Indexed(r) => vec![
            r.iccid.to_string(),
            indexed_status(esims, &r),
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
fn indexed_status(esims: &crate::tabs::esims::Esims, row: &esimdash_inventory::Row<'_>) -> String {
    let words = verdict::state_words(row.class, row.status);
    match esims.stale_age(row) {
        Some(age) if age.num_days() > 0 => format!("{words} ({} d old)", age.num_days()),
        Some(age) => format!("{words} ({} h old)", age.num_hours()),
        None => words.to_string(),
    }
}

fn attention_cells(esims: &crate::tabs::esims::Esims, row: ResultRow<'_>) -> Vec<String> {
    let now = esims.now();
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
            indexed_status(esims, &r),
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
    if esims.attention().is_some() {
        let cells = move |row: ResultRow<'_>| marked_cells(v, row.iccid(), attention_cells(esims, row));
        cursor_table_from(
            frame,
            area,
            &marked_columns(v, &ATTENTION_COLUMNS),
            |from| esims.result_rows_from(from),
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
        |from| esims.result_rows_from(from),
        |row| marked_cells(v, row.iccid(), result_cells(esims, row)),
        esims.result_cursor(),
        theme,
    );
}

/// The pane for a search result whose record is not here yet: what the index knows, and why
/// the rest is missing.
fn unfetched_lines(v: &Seen<'_>, theme: &Theme) -> Vec<Line<'static>> {
    let esims = v.esims();
    // No result, but a whole ICCID searched for: the pane says what became of it.
    let (iccid, no_result) = match (esims.selected_iccid(), esims.whole_iccid()) {
        (Some(selected), _) => (selected.as_str().to_string(), false),
        (None, Some(whole)) => (whole.as_str().to_string(), true),
        (None, None) => return vec![Line::raw("No eSIM selected.")],
    };
    let fresh = esims.fresh().filter(|f| f.iccid.as_str() == iccid);
    let asked = fresh.map(|f| &f.iccid);
    let fresh = fresh.map(|f| &f.record);
    let index = esims.index();
    let state = match (fresh, fresh.and_then(Remote::value)) {
        (_, Some(Found::Absent)) if no_result => "This account has no eSIM with this ICCID.".to_string(),
        // The whole list is in the index, and this ICCID is not.
        _ if no_result && index.is_complete() => format!(
            "No eSIM with this ICCID among this account's {} eSIMs: the whole list is in the index. {} reads it again from the top.",
            group(index.covered()),
            v.refresh_key()
        ),
        (_, Some(Found::Absent)) => "This account has no eSIM with this ICCID any more.".to_string(),
        (_, Some(Found::Unknown(searched))) => format!(
            "{}. r reads the inventory again.",
            asked.map(|i| searched.describe(i)).unwrap_or_default()
        ),
        (Some(r), _) if r.is_loading() => "Fetching its current record…".to_string(),
        (Some(r), _) if r.error().is_some() => r.error().map(|e| failed_text(v, "its record", e)).unwrap_or_default(),
        // Asked for once typing is done: each key would otherwise fetch a record nobody reads.
        _ if v.typing() => format!(
            "Its record is fetched once the search is done ({}).",
            v.keymap().first_key(Context::Typing, Action::Accept)
        ),
        _ => crate::view::lists::not_at_hand::<()>(v, "its record", None)
            .trim()
            .to_string(),
    };
    vec![
        Line::from(vec![
            Span::styled("ICCID    ", theme.muted()),
            Span::styled(safe(&iccid), theme.title()),
        ]),
        Line::styled(state, theme.muted()),
    ]
}

/// Black ink on white: the QR's own colours, whatever the theme.
fn qr_style() -> Style {
    Style::new().fg(Color::Black).bg(Color::White)
}

/// The code's QR modules. Encoding takes about 0.4 ms, most of a frame, and the same code is
/// drawn frame after frame: the last one is kept.
fn qr_matrix(code: &str) -> Result<QrMatrix, String> {
    thread_local! {
        static LAST: std::cell::RefCell<Option<(String, QrMatrix)>> = const { std::cell::RefCell::new(None) };
    }
    LAST.with_borrow_mut(|last| match last {
        Some((done, matrix)) if done == code => Ok(matrix.clone()),
        _ => {
            let matrix = QrMatrix::encode(code)?;
            *last = Some((code.to_string(), matrix.clone()));
            Ok(matrix)
        }
    })
}

/// Drawn lines of a QR code, black ink on white.
fn qr_ink(blocks: Vec<String>) -> Vec<Line<'static>> {
    blocks
        .into_iter()
        .map(|l| Line::from(Span::styled(l, qr_style())))
        .collect()
}

/// The code's QR as lines of half blocks, or why it cannot be drawn.
fn qr_lines(code: &str) -> Result<Vec<Line<'static>>, String> {
    Ok(qr_ink(qr_matrix(code)?.to_half_blocks()))
}

fn draw_pane(frame: &mut Frame, area: Rect, v: &Seen<'_>, theme: &Theme) {
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(" eSIM ", theme.title()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(esim) = v.esims().selected() else {
        paragraph(frame, inner, unfetched_lines(v, theme));
        return;
    };
    let verdict = verdict::of(esim, v.esims().now());
    let head = vec![
        Line::from(vec![
            Span::styled("ICCID    ", theme.muted()),
            Span::styled(safe(esim.raw_order_json.iccid.as_str()), theme.title()),
        ]),
        Line::styled(format!("● {}", verdict.label), theme.verdict(verdict.state.tone())),
    ];
    let package = safe(&esim.record.package_name);
    // What is so, then what installs it, then which profile and the record as the API gives it.
    let mut info = top_up_lines(v, esim, theme);
    info.extend(verdict_lines(&verdict));
    info.extend(next_key(v, verdict.state, theme));
    let scannable = verdict.state.installable();
    let qr = code_lines(v, esim, scannable, &mut info, theme);
    info.extend(reissued_lines(v, esim, theme));
    info.push(Line::styled("─ record", theme.muted()));
    info.extend(record_lines(esim, &package, inner.width, theme));
    if package.width() > usize::from(inner.width) {
        // Cut above so the code's lines stay in view; whole here, after them.
        info.push(Line::styled("Plan in full:", theme.muted()));
        info.push(Line::raw(package.clone()));
    }
    // The code is drawn only where scanning it is what to do next: an installed, deleted or
    // ended eSIM's code cannot be installed again, and its verdict needs the room.
    let qr = if scannable {
        qr
    } else {
        let zoom = v.keymap().keys_text(Context::Esims, Action::Zoom);
        info.push(Line::styled(
            format!("QR code not drawn: it cannot be installed now ({zoom} shows it anyway)."),
            theme.muted(),
        ));
        Vec::new()
    };
    draw_qr_and_info(frame, inner, qr, head, info, v, theme);
}

/// Where the provider reissued this ICCID: which profile this is, and which is current (the
/// newest `esimTranNo`), so that an old profile's state is never read as the eSIM's.
fn reissued_lines(v: &Seen<'_>, esim: &Esim, theme: &Theme) -> Vec<Line<'static>> {
    let esims = v.esims();
    let profiles = esims.profiles_of(esim);
    let [current, ..] = profiles.as_slice() else {
        return Vec::new();
    };
    if profiles.len() < 2 {
        return Vec::new();
    }
    let now = esims.now();
    let name = |e: &Esim| {
        format!(
            "{} ({})",
            safe(&e.raw_order_json.esim_tran_no),
            verdict::of(e, now).label
        )
    };
    let others: Vec<String> = profiles
        .iter()
        .filter(|p| p.raw_order_json.esim_tran_no != esim.raw_order_json.esim_tran_no)
        .map(|p| name(p))
        .collect();
    let text = if current.raw_order_json.esim_tran_no == esim.raw_order_json.esim_tran_no {
        format!(
            "This ICCID was issued before; this profile, {}, is the current one. Earlier: {}.",
            safe(&esim.raw_order_json.esim_tran_no),
            others.join(", ")
        )
    } else {
        format!(
            "An earlier profile of this ICCID ({}): the current one is {}.",
            safe(&esim.raw_order_json.esim_tran_no),
            name(current)
        )
    };
    vec![Line::styled(text, theme.warning())]
}

/// After a top-up here: that the record shows it, or that the provider has not updated it yet.
fn top_up_lines(v: &Seen<'_>, esim: &Esim, theme: &Theme) -> Vec<Line<'static>> {
    let raw = &esim.raw_order_json;
    let total = raw.total_volume.map_or("-".to_string(), format_bytes);
    match v.esims().top_up_shown(esim) {
        Some(true) => vec![Line::styled(
            format!(
                "Top-up landed: {total} in all, until {}.",
                short_time(&raw.expired_time)
            ),
            theme.ok(),
        )],
        Some(false) => vec![Line::styled(
            format!(
                "Topped up, but the provider has not updated this eSIM's record yet (still {total}); {} reads it again.",
                v.keymap().keys_text(Context::Esims, Action::Refresh)
            ),
            theme.warning(),
        )],
        None => Vec::new(),
    }
}

/// The one key that does what the verdict says to do next: a new eSIM of the plan for one that
/// cannot be used again, a top-up for one that runs out.
fn next_key(v: &Seen<'_>, class: Class, theme: &Theme) -> Option<Line<'static>> {
    let (action, what) = match class {
        Class::Pending => return None,
        _ if class.cannot_take_data().is_some() => (Action::Buy, "buy a new eSIM of this plan"),
        Class::UsedUp | Class::InUse => (Action::TopUp, "top it up"),
        _ => return None,
    };
    let keys = v.keymap().keys_text(Context::Esims, action);
    // A key unbound in the user's keymap: no hint rather than one that names nothing.
    (!keys.is_empty()).then(|| Line::styled(format!("{keys}: {what}"), theme.key()))
}

/// What is so and what to tell the customer, first in the pane.
fn verdict_lines(v: &Verdict) -> Vec<Line<'static>> {
    let mut lines = vec![Line::raw(v.summary.clone())];
    lines.extend(v.steps.iter().map(|step| Line::raw(format!("· {step}"))));
    lines
}

/// The eSIM's state as the API gives it, plan and usage.
fn record_lines(esim: &Esim, package: &str, width: u16, theme: &Theme) -> Vec<Line<'static>> {
    let raw = &esim.raw_order_json;
    let mut lines = vec![
        Line::raw(format!(
            "{} · {}",
            safe(&verdict::state_in_full(esim)),
            safe(&esimdash_domain::location::area(
                &esim.record.location_code,
                &esim.record.package_name
            )),
        )),
        Line::raw(safe_fit(package, usize::from(width)).into_owned()),
    ];
    let expires = match short_time(&raw.expired_time) {
        t if t.trim().is_empty() => "no expiry given".to_string(),
        t => format!("expires {t}"),
    };
    lines.push(Line::raw(match (raw.order_usage, raw.total_volume) {
        (Some(u), Some(t)) => format!("{} of {} used · {expires}", format_bytes(u), format_bytes(t)),
        _ => expires,
    }));
    if !raw.eid.is_empty() {
        lines.push(Line::from(vec![
            Span::styled("EID      ", theme.muted()),
            Span::raw(safe(&raw.eid)),
        ]));
    }
    lines
}

/// The activation code's lines (added to `info`) and its QR code's, or why there is none.
fn code_lines(
    v: &Seen<'_>,
    esim: &Esim,
    scannable: bool,
    info: &mut Vec<Line<'static>>,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let raw = &esim.raw_order_json;
    let code = v.esims().code(esim);
    let ac = match code.and_then(Remote::value) {
        Some(Ok(ac)) => ac,
        Some(Err(why)) => {
            info.push(Line::styled(format!("No QR code: {}", safe(why)), theme.error()));
            info.push(Line::raw(format!("Image: {}", safe(&raw.qr_code_url))));
            return Vec::new();
        }
        None => {
            info.push(code_missing(v, code, theme));
            return Vec::new();
        }
    };
    match ActivationCode::parse(ac) {
        Some(p) => {
            info.push(Line::raw(format!("SM-DP+   {}", safe(&p.smdp_address))));
            info.push(Line::raw(format!("Matching {}", safe(&p.matching_id))));
        }
        None => info.push(Line::styled("Not an LPA activation code", theme.error())),
    }
    info.push(Line::raw(safe(ac)));
    // An install link for a code that cannot be installed again would only fail on the phone.
    if let Some(link) = apple_install_link(ac).filter(|_| scannable) {
        // Here, where the code is an LPA code: only then can its parts be copied apart.
        let copy = [Action::CopySmdp, Action::CopyMatchingId];
        info.push(keys_line(
            v,
            Context::Esims,
            "{} copies the SM-DP+, {} the matching ID",
            &copy,
            theme.muted(),
        ));
        let (copy, save) = (
            v.keymap().keys_text(Context::Esims, Action::CopyLink),
            v.keymap().keys_text(Context::Esims, Action::SaveQr),
        );
        info.push(Line::styled(
            format!("iPhone install link ({copy} copies it; {save} saves the QR as PNG):"),
            theme.muted(),
        ));
        info.push(Line::raw(safe(&link)));
    }
    qr_lines(ac).unwrap_or_else(|why| {
        info.push(Line::styled(safe(&why), theme.error()));
        Vec::new()
    })
}

/// Rows of text kept under a QR code drawn above it, at the least.
const TEXT_UNDER_QR: u16 = 4;
/// Columns of text beside a QR code drawn at its left, at the least.
const TEXT_BESIDE_QR: u16 = 30;

/// The head (ICCID and state), the QR code and the text: the code under the head with the
/// text below where the pane is tall enough, else at the left with the text beside it (80×24),
/// else the text and how large the terminal must be.
fn draw_qr_and_info(
    frame: &mut Frame,
    inner: Rect,
    qr: Vec<Line<'static>>,
    head: Vec<Line<'static>>,
    mut info: Vec<Line<'static>>,
    v: &Seen<'_>,
    theme: &Theme,
) {
    let qr_width = qr.first().map_or(0, |l| l.width() as u16);
    let qr_height = qr.len() as u16;
    let head_height = head.len() as u16;
    let centred = |area: Rect| Rect {
        x: area.x + area.width.saturating_sub(qr_width) / 2,
        width: qr_width.min(area.width),
        ..area
    };
    if qr.is_empty() {
        scrolled(frame, inner, head.into_iter().chain(info).collect(), v, theme);
    } else if inner.width >= qr_width && inner.height >= head_height + qr_height + TEXT_UNDER_QR {
        let [head_area, qr_area, text_area] = Layout::vertical([
            Constraint::Length(head_height),
            Constraint::Length(qr_height),
            Constraint::Min(0),
        ])
        .areas(inner);
        paragraph(frame, head_area, head);
        frame.render_widget(Paragraph::new(qr), centred(qr_area));
        scrolled(frame, text_area, info, v, theme);
    } else if inner.width >= qr_width + 1 + TEXT_BESIDE_QR && inner.height >= qr_height {
        let [qr_area, _, text_area] =
            Layout::horizontal([Constraint::Length(qr_width), Constraint::Length(1), Constraint::Min(0)]).areas(inner);
        frame.render_widget(Paragraph::new(qr), qr_area);
        scrolled(frame, text_area, head.into_iter().chain(info).collect(), v, theme);
    } else {
        // The pane is inside the frame: this much more terminal makes it big enough.
        let frame_area = frame.area();
        let need_w = frame_area.width + (qr_width + 1 + TEXT_BESIDE_QR).saturating_sub(inner.width);
        let need_h = frame_area.height + qr_height.saturating_sub(inner.height);
        info.push(Line::styled(
            format!(
                "The QR code needs a terminal of at least {need_w}×{need_h} here; {} shows it alone.",
                v.keymap().keys_text(Context::Esims, Action::Zoom)
            ),
            theme.error(),
        ));
        scrolled(frame, inner, head.into_iter().chain(info).collect(), v, theme);
    }
}

/// The pane's text, wrapped (a URL too, where it would not fit), at the screenful the agent
/// scrolled to; where it holds more than `area`, its last row says which keys show the rest.
fn scrolled(frame: &mut Frame, area: Rect, lines: Vec<Line<'static>>, v: &Seen<'_>, theme: &Theme) {
    let text = Paragraph::new(lines).wrap(ratatui::widgets::Wrap { trim: false });
    let total = text.line_count(area.width);
    if total <= usize::from(area.height) || area.height < 2 {
        frame.render_widget(text, area);
        return;
    }
    let [shown, keys] = Layout::vertical([Constraint::Min(1), Constraint::Length(1)]).areas(area);
    let (rows, total) = (usize::from(shown.height), total);
    // A line of the screenful before stays in view, to read on from.
    let step = rows.saturating_sub(1).max(1);
    let last = (total - rows).div_ceil(step);
    let screen = usize::from(v.esims().pane_scroll()).min(last);
    let top = (screen * step).min(total - rows);
    frame.render_widget(text.scroll((u16::try_from(top).unwrap_or(u16::MAX), 0)), shown);
    let keymap = v.keymap();
    let mut hints = Vec::new();
    for (action, what, wanted) in [
        (Action::PaneDown, "more below", screen < last),
        (Action::PaneUp, "back up", screen > 0),
    ] {
        let key = keymap.first_key(Context::Esims, action);
        // An unbound key is not named: the position still says there is more.
        if wanted && !key.is_empty() {
            hints.push(format!("{key}: {what}"));
        }
    }
    let text = format!("{} ({}/{})", hints.join(" · "), screen + 1, last + 1);
    let line = Line::styled(
        safe_fit(text.trim_start(), usize::from(keys.width)).into_owned(),
        theme.key(),
    );
    frame.render_widget(Paragraph::new(line), keys);
}

/// Where there is no code yet: loading, or the fetch failed (with why, and how to retry).
fn code_missing(v: &Seen<'_>, code: Option<&Code>, theme: &Theme) -> Line<'static> {
    match code.and_then(Remote::error) {
        Some(error) => Line::styled(failed_text(v, "the activation code", error), theme.error()),
        None => Line::styled("Fetching the activation code…", theme.muted()),
    }
}

/// Rows the zoom keeps under a code drawn in full blocks: the ICCID, the package and the status
/// line (the agent confirms whose code it is, and sees what a key did).
const ZOOM_TEXT_ROWS: usize = 3;

/// The largest drawing of the code that fits `area`: full blocks with the rows under them, else
/// half blocks (with what rows fit), else none.
fn zoom_drawing(matrix: &QrMatrix, area: Rect) -> Option<Vec<String>> {
    let (width, height) = (usize::from(area.width), usize::from(area.height));
    let (full_w, full_h) = matrix.full_block_size();
    let (half_w, half_h) = matrix.half_block_size();
    if full_w <= width && full_h + ZOOM_TEXT_ROWS <= height {
        Some(matrix.to_full_blocks())
    } else if half_w <= width && half_h <= height {
        Some(matrix.to_half_blocks())
    } else {
        None
    }
}

/// The zoom's keys, as many as fit `width`: `Esc, z: back · copy: y ICCID · Y code · …`.
fn zoom_keys(v: &Seen<'_>, width: usize, theme: &Theme) -> Line<'static> {
    let keymap = v.keymap();
    let mut text = format!("{}: back", keymap.keys_text(Context::Zoom, Action::Close));
    let copies = [
        (Action::CopyIccid, "ICCID"),
        (Action::CopyCode, "code"),
        (Action::CopyLink, "iPhone link"),
        (Action::CopySmdp, "SM-DP+"),
        (Action::CopyMatchingId, "matching ID"),
    ];
    for (i, (action, what)) in copies.into_iter().enumerate() {
        let before = if i == 0 { " · copy: " } else { " · " };
        let part = format!("{before}{} {what}", keymap.keys_text(Context::Esims, action));
        if text.width() + part.width() > width {
            break;
        }
        text.push_str(&part);
    }
    Line::styled(text, theme.muted())
}

/// The lines under the zoomed code, as many as the room's rows allow: whose code it is (ICCID,
/// then the package), the status line (what a key did, or the keys), then the activation code
/// as text.
fn zoom_text(v: &Seen<'_>, esim: &Esim, code: &str, room: Rect, theme: &Theme) -> Vec<Line<'static>> {
    let (width, rows) = (usize::from(room.width), usize::from(room.height));
    let iccid = Line::from(vec![
        Span::styled("ICCID ", theme.muted()),
        Span::styled(safe(esim.raw_order_json.iccid.as_str()), theme.title()),
    ]);
    let package = Line::raw(safe_fit(&safe(&esim.record.package_name), width).into_owned());
    // Drawn on request, but never as if it would install: the verdict in place of the code.
    let warning = esimdash_front::format::verdict::not_installable(esim.facts().classify());
    let code = match &warning {
        Some(why) => Line::styled(
            safe_fit(&format!("Not for installing: {why}"), width).into_owned(),
            theme.error(),
        ),
        None => Line::raw(safe_fit(&safe(code), width).into_owned()),
    };
    let status = v.notice.clone().unwrap_or_else(|| zoom_keys(v, width, theme));
    // In the order shown; kept in the order of need when rows are short.
    let lines = [iccid, package, code, status];
    let need = if warning.is_some() { [0, 2, 3, 1] } else { [0, 3, 1, 2] };
    let kept: Vec<usize> = need.iter().take(rows).copied().collect();
    lines
        .into_iter()
        .enumerate()
        .filter(|(i, _)| kept.contains(i))
        .map(|(_, line)| line.centered())
        .collect()
}

/// `z`: the code alone, as large as the terminal allows, with whose code it is under it and the
/// status line, so that what `y`, `Y` or `l` sent is said here too.
pub fn draw_zoom(frame: &mut Frame, esims: &Esims, look: &Look<'_>) {
    let (v, theme) = (&Seen { esims, look }, look.theme);
    let area = frame.area();
    let esim = esims.selected();
    let code = esim.and_then(|e| esims.code(e));
    let back = format!("{}: back", v.keymap().keys_text(Context::Zoom, Action::Close));
    let found = match (esim, code.and_then(Remote::value)) {
        (Some(esim), Some(Ok(ac))) => qr_matrix(ac)
            .map(|qr| (esim, qr, ac.clone()))
            .map_err(|why| Line::styled(safe(&why), theme.error())),
        (_, Some(Err(why))) => Err(Line::styled(format!("No QR code: {}", safe(why)), theme.error())),
        _ => Err(code_missing(v, code, theme)),
    };
    let (esim, matrix, ac) = match found {
        Ok(found) => found,
        Err(why) => {
            paragraph(frame, area, vec![why, Line::raw(back)]);
            return;
        }
    };
    let Some(drawing) = zoom_drawing(&matrix, area) else {
        let (w, h) = matrix.half_block_size();
        let text = format!(
            "The QR code needs a terminal of at least {w}×{h} (now {}×{}). {back}",
            area.width, area.height
        );
        paragraph(frame, area, vec![Line::styled(text, theme.error())]);
        return;
    };
    let (w, h) = (drawing.first().map_or(0, |l| l.width()) as u16, drawing.len() as u16);
    let room = Rect::new(area.x, area.y, area.width, area.height - h);
    let text = zoom_text(v, esim, &ac, room, theme);
    let rows = h + text.len() as u16;
    let y = area.y + (area.height - rows) / 2;
    let x = area.x + (area.width - w) / 2;
    frame.render_widget(Paragraph::new(qr_ink(drawing)), Rect::new(x, y, w, h));
    frame.render_widget(Paragraph::new(text), Rect::new(area.x, y + h, area.width, rows - h));
}
