//! My eSIMs' detail pane: the verdict, the record, the reissued profiles, the top-up and the
//! install kit with the activation QR code.

use super::Seen;
use crate::keymap::{Action, Context};
use crate::kit::remote::Remote;
use crate::tabs::esims::Code;
use crate::view::lists::failed_text;
use crate::view::lists::short_time;
use crate::view::theme::Theme;
use crate::view::widgets::{keys_line, paragraph, safe};
use esimdash_api::Found;
use esimdash_api::model::Esim;
use esimdash_domain::esim_state::Class;
use esimdash_domain::lpa::{ActivationCode, apple_install_link};
use esimdash_domain::text::grouped as group;
use esimdash_domain::text::safe_fit;
use esimdash_front::format::verdict::{self, Verdict};
use esimdash_front::format::volume::format_bytes;
use esimdash_qr::QrMatrix;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use unicode_width::UnicodeWidthStr;

/// Black ink on white: the QR's own colours, whatever the theme.
fn qr_style() -> Style {
    Style::new().fg(Color::Black).bg(Color::White)
}

/// The code's QR modules. Encoding takes about 0.4 ms, most of a frame, and the same code is
/// drawn frame after frame: the last one is kept.
pub(super) fn qr_matrix(code: &str) -> Result<QrMatrix, String> {
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
pub(super) fn qr_ink(blocks: Vec<String>) -> Vec<Line<'static>> {
    blocks
        .into_iter()
        .map(|l| Line::from(Span::styled(l, qr_style())))
        .collect()
}

/// The code's QR as lines of half blocks, or why it cannot be drawn.
fn qr_lines(code: &str) -> Result<Vec<Line<'static>>, String> {
    Ok(qr_ink(qr_matrix(code)?.to_half_blocks()))
}

pub(super) fn draw_pane(frame: &mut Frame, area: Rect, v: &Seen<'_>, theme: &Theme) {
    let block = Block::default()
        .borders(Borders::ALL)
        .title(Span::styled(" eSIM ", theme.title()));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let Some(esim) = v.esims().selected(v.index) else {
        paragraph(frame, inner, unfetched_lines(v, theme));
        return;
    };
    let verdict = verdict::of(esim, v.index.now());
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
    let now = v.index.now();
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
    let screen = usize::from(v.esims().pane_scroll(v.index)).min(last);
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
pub(super) fn code_missing(v: &Seen<'_>, code: Option<&Code>, theme: &Theme) -> Line<'static> {
    match code.and_then(Remote::error) {
        Some(error) => Line::styled(failed_text(v, "the activation code", error), theme.error()),
        None => Line::styled("Fetching the activation code…", theme.muted()),
    }
}

/// The pane for a search result whose record is not here yet: what the index knows, and why
/// the rest is missing.
fn unfetched_lines(v: &Seen<'_>, theme: &Theme) -> Vec<Line<'static>> {
    let esims = v.esims();
    // No result, but a whole ICCID searched for: the pane says what became of it.
    let (iccid, no_result) = match (esims.selected_iccid(v.index), esims.whole_iccid()) {
        (Some(selected), _) => (selected.as_str().to_string(), false),
        (None, Some(whole)) => (whole.as_str().to_string(), true),
        (None, None) => return vec![Line::raw("No eSIM selected.")],
    };
    let fresh = esims.fresh().filter(|f| f.iccid.as_str() == iccid);
    let asked = fresh.map(|f| &f.iccid);
    let fresh = fresh.map(|f| &f.record);
    let index = v.index.read();
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
