//! `z`: the QR code alone, as large as the terminal allows, with whose code it is under it.

use super::Seen;
use super::pane::{code_missing, qr_ink, qr_matrix};
use crate::keymap::{Action, Context};
use crate::kit::remote::Remote;
use crate::tabs::esims::Esims;
use crate::view::Look;
use crate::view::theme::Theme;
use crate::view::widgets::{paragraph, safe};
use esimdash_api::model::Esim;
use esimdash_domain::text::safe_fit;
use esimdash_qr::QrMatrix;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use unicode_width::UnicodeWidthStr;

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
    let esim = esims.selected(look.index);
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
