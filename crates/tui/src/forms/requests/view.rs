//! The requests window drawn: the list, the selected request's detail, the last decision's
//! outcome and the keys in force; as tall as what it shows.

use super::{RequestsWindow, Stage};
use crate::keymap::{Action, Context};
use crate::view::Look;
use crate::view::theme::Theme;
use crate::view::widgets::{keys_line, paragraph, popup, safe, window_start};
use esimdash_domain::money::format_amount;
use esimdash_front::requests::Standing;
use esimdash_front::requests::approval::Listed;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;

/// The window's width.
const WIDTH: u16 = 78;

pub(crate) fn draw(frame: &mut Frame, area: Rect, window: &RequestsWindow, look: &Look<'_>, theme: &Theme) {
    // The detail, the outcome and the keys below the list take about ten rows (more where
    // the reason wraps); the list has the rest.
    let room = usize::from(area.height).saturating_sub(14).max(1);
    let mut lines = listed_lines(window, room, look, theme);
    lines.push(Line::raw(""));
    if let Some(told) = &window.told {
        let style = if !told.ok { theme.error() } else { theme.ok() };
        lines.push(Line::styled(safe(&told.text), style));
    }
    lines.push(stage_line(&window.stage, look, theme));
    let wrapped: usize = lines
        .iter()
        .map(|l| l.width().div_ceil(usize::from(WIDTH - 2)).max(1))
        .sum();
    let height = u16::try_from(wrapped + 2).unwrap_or(u16::MAX).min(area.height);
    let inner = popup(frame, area, "Requests an assistant proposed", WIDTH, height, theme);
    paragraph(frame, inner, lines);
}

/// The requests (at most `room` rows, the cursor's among them) and the selected one's detail;
/// or why there are none to show.
fn listed_lines(window: &RequestsWindow, room: usize, look: &Look<'_>, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    match window.list.value() {
        Some(rows) if rows.is_empty() => {
            lines.push(Line::raw(
                "No request: an assistant's proposals (esimdash mcp) appear here.",
            ));
        }
        Some(rows) => {
            let start = window_start(window.cursor, room);
            for (i, row) in rows.iter().enumerate().skip(start).take(room) {
                let request = &row.request;
                let text = format!(
                    "{} {:<10} {} × {} · {} · {} USD",
                    if i == window.cursor { "›" } else { " " },
                    row.standing.key(),
                    request.quantity,
                    safe(&request.slug),
                    request.iccid.as_deref().unwrap_or("new eSIM"),
                    format_amount(request.total)
                );
                let style = if i == window.cursor {
                    theme.selected()
                } else {
                    Style::default()
                };
                lines.push(Line::styled(text, style));
            }
            lines.push(Line::raw(""));
            if let Some(row) = window.selected() {
                lines.extend(detail(row, theme));
            }
        }
        None if window.list.is_loading() => {
            lines.push(Line::styled(
                format!("{} reading the requests…", look.spinner()),
                theme.muted(),
            ));
        }
        None => {
            let why = window
                .list
                .error()
                .map_or_else(|| "not read".to_string(), ToString::to_string);
            lines.push(Line::styled(
                format!("The requests could not be read: {}", safe(&why)),
                theme.error(),
            ));
        }
    }
    lines
}

/// What the keys do now, or what is being done.
fn stage_line(stage: &Stage, look: &Look<'_>, theme: &Theme) -> Line<'static> {
    match stage {
        Stage::Browsing => keys_line(
            look,
            Context::Requests,
            "{} approve · {} refuse · {} read again · {} close",
            &[Action::Approve, Action::Refuse, Action::Refresh, Action::Close],
            theme.muted(),
        ),
        Stage::Asking { approve, .. } => keys_line(
            look,
            Context::Decide,
            if *approve {
                "Approve and pay it (checked again at this moment's price, sent once)? {} yes · {} no"
            } else {
                "Refuse it (nothing is paid; the assistant reads why)? {} yes · {} no"
            },
            &[Action::Accept, Action::Back],
            theme.key(),
        ),
        Stage::Deciding { approve } => Line::styled(
            format!(
                "{} {}…",
                look.spinner(),
                if *approve { "approving and paying" } else { "refusing" }
            ),
            theme.muted(),
        ),
    }
}

/// The selected request: what would be paid, why, by whom, the eSIM's state, what became of it.
fn detail(row: &Listed, theme: &Theme) -> Vec<Line<'static>> {
    let request = &row.request;
    let mut lines = vec![
        Line::styled(safe(&format!("{} · {}", request.id, request.plan_name)), theme.title()),
        Line::raw(format!(
            "{} USD each, {} USD in all · until {}",
            format_amount(request.unit_price),
            format_amount(request.total),
            request.expires_at.with_timezone(&chrono::Local).format("%H:%M")
        )),
    ];
    if let Some(esim) = &row.esim {
        lines.push(Line::raw(safe(&format!("The eSIM: {esim}"))));
    }
    match &row.standing {
        Standing::Paid { order_no } => lines.push(Line::styled(safe(&format!("Paid: order {order_no}")), theme.ok())),
        Standing::Refused { why } | Standing::Unknown { why } => {
            lines.push(Line::styled(
                safe(&format!("{}: {why}", row.standing.key())),
                theme.warning(),
            ));
        }
        _ => {}
    }
    lines.push(Line::raw(safe(&format!("Why: {}", request.reason))));
    if let Some(unsure) = &request.unsure {
        lines.push(Line::styled(
            safe(&format!("Not confirmed when proposed: {unsure}")),
            theme.warning(),
        ));
    }
    lines.push(Line::styled(
        safe(&format!("Proposed by {}", request.proposed_by)),
        theme.muted(),
    ));
    lines
}
