//! How the windows over the tab are drawn that are not forms (help, plan and order detail, the
//! pickers, the notices) and the profile form; each from its own state and the frame's context
//! (`forms::Window::draw` chooses).

use super::theme::Theme;
use super::widgets::{Fields, fields, keys_line, paragraph, popup, safe};
use crate::keymap::{Action, Context};
use crate::kit::remote::Remote;
use crate::view::Look;
use esimdash_api::model::Plan;
use esimdash_domain::text::wrap_words;
use esimdash_front::format::records;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

/// The plan and order windows' width.
const DETAIL_WIDTH: u16 = 64;

/// A detail window of `rows`: its inside and the fields laid out for it. It is `usual` rows
/// tall, or all the screen has when a value must also show in full.
fn detail_window<'a>(
    frame: &mut Frame,
    area: Rect,
    title: &str,
    usual: u16,
    rows: &[(&'a str, String)],
    theme: &Theme,
) -> (Rect, Fields<'a>) {
    let shown = fields(rows, DETAIL_WIDTH.min(area.width).saturating_sub(2), theme);
    let height = if shown.in_full.is_empty() {
        usual
    } else {
        area.height.max(usual)
    };
    (popup(frame, area, title, DETAIL_WIDTH, height, theme), shown)
}

/// Earlier payments their sessions left unsettled, and what became of each: until closed.
pub(crate) fn draw_notices(frame: &mut Frame, area: Rect, notices: &[String], look: &Look<'_>, theme: &Theme) {
    let height = (notices.len() as u16)
        .saturating_mul(4)
        .saturating_add(4)
        .min(area.height);
    let inner = popup(frame, area, "Earlier payments, settled now", 76, height, theme);
    let mut lines = Vec::new();
    for notice in notices {
        lines.push(Line::raw(safe(notice)));
        lines.push(Line::raw(""));
    }
    let close = look.keymap().first_key(Context::Popup, Action::Close);
    lines.push(Line::styled(
        format!("Each is in the audit trail (esimdash audit). {close}: close"),
        theme.muted(),
    ));
    paragraph(frame, inner, lines);
}

/// What a window shows that is the app's, not the window's own: the contexts of the tab the
/// help was opened from, the settled payments' notices, the eSIMs of the order shown (as the
/// account's index knows them, in words).
pub struct WindowFacts<'a> {
    pub help: Vec<Context>,
    pub notices: &'a [String],
    pub order_esims: Option<String>,
}

/// An order's fields, and its eSIMs as the account's index knows them.
pub(crate) fn draw_order(
    frame: &mut Frame,
    area: Rect,
    o: &esimdash_api::model::Order,
    facts: &WindowFacts<'_>,
    theme: &Theme,
) {
    let mut fields = records::order_fields(o);
    if let Some(esims) = &facts.order_esims {
        fields.push(("eSIM", esims.clone()));
    }
    let (inner, shown) = detail_window(frame, area, "Order", 16, &fields, theme);
    let mut lines = shown.lines;
    if !shown.in_full.is_empty() {
        lines.push(Line::raw(""));
        lines.extend(shown.in_full);
    }
    paragraph(frame, inner, lines);
}

/// The status filter's choices, the one under the cursor marked.
pub(crate) fn draw_status_picker(
    frame: &mut Frame,
    area: Rect,
    choices: &[esimdash_domain::status::StatusFilter],
    cursor: usize,
    theme: &Theme,
) {
    let inner = popup(frame, area, "Status filter", 30, choices.len() as u16 + 2, theme);
    paragraph(
        frame,
        inner,
        choice_lines(choices.iter().map(|c| c.label()), cursor, theme),
    );
}

/// "Replace the file?" for a QR image whose file exists.
pub(crate) fn draw_replace(frame: &mut Frame, area: Rect, path: &std::path::Path, look: &Look<'_>, theme: &Theme) {
    let inner = popup(frame, area, "Replace the file?", 64, 6, theme);
    let keys = look.keymap().say(
        Context::Replace,
        "{}: replace it · {}: keep it",
        &[Action::Accept, Action::Close],
    );
    let lines = vec![
        Line::raw(safe(&path.display().to_string())),
        Line::raw("exists already."),
        Line::styled(keys, theme.muted()),
    ];
    paragraph(frame, inner, lines);
}

/// A plan of the catalog, with the reseller's own pricing once it is fetched.
pub(crate) fn draw_plan(
    frame: &mut Frame,
    area: Rect,
    summary: &Plan,
    fetched: &Remote<Box<Plan>>,
    look: &Look<'_>,
    theme: &Theme,
) {
    let plan = fetched.value().map_or(summary, |p| p.as_ref());
    let (inner, shown) = detail_window(frame, area, "Plan", 16, &records::plan_fields(plan), theme);
    let mut lines = shown.lines;
    lines.push(Line::raw(""));
    match fetched {
        Remote::Failed { error, .. } => lines.push(Line::styled(
            format!(
                "Could not fetch your pricing for this plan: {} (these are the catalog's figures)",
                safe(&error.server_message().map_or_else(|| error.to_string(), str::to_string))
            ),
            theme.error(),
        )),
        Remote::Loading { .. } => lines.push(Line::styled(
            format!("{} fetching your pricing…", look.spinner()),
            theme.muted(),
        )),
        _ => {}
    }
    lines.extend(shown.in_full);
    paragraph(frame, inner, lines);
}

/// The profile picker (`choice`: the names and the cursor), and why the last choice could not
/// be opened.
pub(crate) fn draw_account_picker(
    frame: &mut Frame,
    area: Rect,
    choice: (&[String], usize),
    error: Option<&str>,
    look: &Look<'_>,
    theme: &Theme,
) {
    let (names, cursor) = choice;
    let current = &look.session.profile;
    let labels: Vec<String> = names
        .iter()
        .map(|n| {
            if n == current {
                format!("{n} (in use)")
            } else {
                n.clone()
            }
        })
        .collect();
    let mut lines = choice_lines(labels.iter().map(String::as_str), cursor, theme);
    lines.push(Line::raw(""));
    lines.push(keys_line(
        look,
        Context::Picker,
        "{}: switch (everything reloads) · {}: stay",
        &[Action::Accept, Action::Close],
        theme.muted(),
    ));
    if let Some(error) = error {
        lines.push(Line::styled(safe(error), theme.error()));
    }
    let height = lines.len() as u16 + 2 + u16::from(error.is_some()) * 2;
    let inner = popup(frame, area, "Switch profile", 60, height, theme);
    paragraph(frame, inner, lines);
}

/// `?`: the keys of the screen the help was opened from (its tab, the lists, everywhere, and
/// its modes), from the keymap in force, so a rebound key shows as rebound.
pub(crate) fn draw_help(
    frame: &mut Frame,
    area: Rect,
    contexts: &[Context],
    look: &Look<'_>,
    scroll: u16,
    theme: &Theme,
) {
    const WIDTH: u16 = 96;
    // Inside the border, with a column kept free before it: text never touches the frame.
    let width = usize::from(WIDTH.min(area.width).saturating_sub(3));
    let mut lines = Vec::new();
    for &context in contexts {
        let rows: Vec<_> = look
            .keymap()
            .rows()
            .iter()
            .filter(|r| r.binding.context == context)
            .collect();
        if rows.is_empty() {
            continue;
        }
        lines.extend(wrapped(context.title(), width, theme.title()));
        for row in rows {
            lines.extend(help_row(&row.keys_text(), row.binding.about, width, theme));
        }
    }
    let last = "Windows and forms show their keys on the bottom line; every key: docs/keys.md.";
    lines.extend(wrapped(last, width, theme.muted()));
    let height = lines.len() as u16 + 2;
    let inner = popup(frame, area, "Keys", WIDTH, height, theme);
    // Every line is laid out to fit: their count is what is drawn, and the last can be reached.
    let scroll = scroll.min((lines.len() as u16).saturating_sub(inner.height));
    frame.render_widget(ratatui::widgets::Paragraph::new(lines).scroll((scroll, 0)), inner);
}

/// A text in lines of `width`, in one style.
fn wrapped(text: &str, width: usize, style: ratatui::style::Style) -> Vec<Line<'static>> {
    wrap_words(text, width)
        .into_iter()
        .map(|l| Line::styled(l, style))
        .collect()
}

/// A key's line in the help: its keys, then what it does, continued under itself when it wraps
/// (under the keys, indented, when they leave it too little room).
fn help_row(keys: &str, about: &str, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let keys = format!("  {keys:<18} ");
    let indent = keys.width();
    if indent + 20 > width {
        let mut lines = wrapped(keys.trim_end(), width, theme.key());
        let about = wrap_words(about, width.saturating_sub(4));
        lines.extend(about.into_iter().map(|l| Line::raw(format!("    {l}"))));
        return lines;
    }
    let about = wrap_words(about, width - indent);
    let mut lines = Vec::new();
    for (i, part) in about.into_iter().enumerate() {
        let lead = if i == 0 { keys.clone() } else { " ".repeat(indent) };
        lines.push(Line::from(vec![Span::styled(lead, theme.key()), Span::raw(part)]));
    }
    lines
}

/// A list of choices, the one under the cursor marked.
fn choice_lines<'a>(labels: impl Iterator<Item = &'a str>, cursor: usize, theme: &Theme) -> Vec<Line<'static>> {
    labels
        .enumerate()
        .map(|(i, label)| {
            let name = safe(label);
            if i == cursor {
                Line::styled(format!("› {name}"), theme.selected())
            } else {
                Line::raw(format!("  {name}"))
            }
        })
        .collect()
}
