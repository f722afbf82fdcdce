//! The app draws its own state: the header (the reseller, the balance, the seat, the money's
//! sparkline), the tab bar and the status line (a message, a wait, or the keys that work here).
//! The tab shown and the window open draw themselves (`TabState::draw`, `view::overlays`),
//! from the frame's context the app makes for them (`look`).

use super::{App, ExportState, Halt, Mode, Overlay, Remote, Tone};
use crate::forms::Window;
use crate::keymap::{Action, Context};
use crate::view::overlays::WindowFacts;
use crate::view::theme::Theme;
use crate::view::widgets::{centered, safe};
use crate::view::{Look, MIN_HEIGHT, MIN_WIDTH};
use esimdash_domain::money::format_amount;
use esimdash_front::format::money::money;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Wrap};
use std::time::Instant;

impl App {
    /// The frame: the app's own header, tab bar and status line; the tab shown and the window
    /// open each draw themselves from their state and the frame's context (`look`).
    pub fn draw(&self, frame: &mut Frame, theme: &Theme, now: Instant) {
        let look = self.look(theme, now);
        let area = frame.area();
        // The code alone needs only its own size, less than the dashboard's minimum.
        if matches!(self.mode(), Mode::Zoom { .. }) && self.halt().is_none() {
            crate::tabs::esims::view::draw_zoom(frame, self.esims(), &look);
            return;
        }
        if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
            let text = format!(
                "Terminal too small: {}×{}. esimdash needs at least {MIN_WIDTH}×{MIN_HEIGHT}.",
                area.width, area.height
            );
            frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), area);
            return;
        }
        let status = status_text(self, &look, area.width);
        // A long message takes more rows rather than being cut; keys always fit in one.
        let status_rows = status.line_count(area.width).clamp(1, MESSAGE_ROWS);
        let [header, tabs, body, status_area] = Layout::vertical([
            Constraint::Length(1),
            Constraint::Length(1),
            Constraint::Min(1),
            Constraint::Length(status_rows as u16),
        ])
        .areas(area);
        draw_header(frame, header, self, &look);
        draw_tabs(frame, tabs, self, theme);
        if let Some(Halt::Unauthorized { revoked, message }) = self.halt() {
            draw_unauthorized(frame, body, (*revoked, self.seat().is_some()), message, theme);
        } else {
            self.tab_state().draw(frame, body, &look);
            if let Some(overlay) = self.overlay() {
                overlay.draw(frame, body, &self.window_facts(), &look);
            }
        }
        frame.render_widget(status, status_area);
    }

    /// What the window open shows that is the app's (`WindowFacts`).
    fn window_facts(&self) -> WindowFacts<'_> {
        let mut facts = WindowFacts {
            help: Vec::new(),
            notices: self.notices(),
            order_esims: None,
        };
        // Only what the window open shows is worked out, once a frame.
        match self.overlay() {
            Some(Overlay::Help { .. }) => {
                let tab = self.tab_state();
                facts.help = Mode::Browse.contexts(tab.browse_contexts());
                facts.help.push(Context::Typing);
                facts.help.extend(tab.views());
            }
            Some(Overlay::OrderDetail(order)) if order.iccid.is_empty() => {
                let refresh = self.keymap().first_key(Context::OrderDetail, Action::Refresh);
                let at_hand = self.esims().at_hand(self.index());
                let esims = self.index().order_esims(order, at_hand.into_iter());
                facts.order_esims = Some(esims.words(&refresh));
            }
            _ => {}
        }
        facts
    }

    /// The frame's context, for the views.
    pub fn look<'a>(&'a self, theme: &'a Theme, now: Instant) -> Look<'a> {
        Look {
            theme,
            now,
            keymap: self.keymap(),
            focus: self.mode().focus(),
            session: self.session(),
            profile: self.account(),
            money: self.money(),
            index: self.index(),
            halt: self.halt(),
            rate_limited: self.rate_limited_until().is_some(),
            closing: self.should_quit(),
            saving: self.is_saving(),
            spinner: self.spinner(),
            notice: notice(self, theme, now),
        }
    }
}

/// Rows the bottom line may grow to for a long message.
const MESSAGE_ROWS: usize = 3;

fn draw_header(frame: &mut Frame, area: Rect, app: &App, look: &Look<'_>) {
    let theme = look.theme;
    let account = app.account();
    let (who, balance) = match (account.value(), account) {
        (Some(p), _) => (safe(p.display_name()), money(p.balance_usd, "USD")),
        (None, Remote::Failed { .. }) => ("profile not loaded".to_string(), "unknown".to_string()),
        (None, _) => ("…".to_string(), "…".to_string()),
    };
    let session = app.session();
    let wide = area.width >= 110;
    // At a team gateway on a narrow terminal, the agent's seat takes the program's name's place.
    let mut spans = vec![Span::raw(if wide || app.seat().is_none() {
        " esimdash │ "
    } else {
        " "
    })];
    if session.cleartext {
        // First, so that no width hides it: the secret travels in clear on this connection.
        spans.push(Span::styled("NOT ENCRYPTED (http)", theme.warning()));
        spans.push(Span::raw(" │ "));
    }
    if !session.profile.is_empty() {
        spans.push(Span::raw(format!("{} │ ", safe(&session.profile))));
    }
    spans.extend([
        Span::styled(who, theme.title()),
        Span::raw(" │ Balance "),
        Span::styled(balance, theme.title()),
    ]);
    let after_balance = spans.len();
    if let Some(seat) = app.seat() {
        spans.push(Span::raw(format!(" │ {}", seat_words(seat, wide))));
    }
    if account.error().is_some() {
        let note = if account.value().is_some() {
            "not refreshed"
        } else {
            "could not load"
        };
        spans.push(Span::raw(format!(" ({note}: {})", look.refresh_key())));
    }
    if let Some(b) = account.value().and_then(|p| p.balance_usd)
        && b < app.low_balance()
    {
        spans.push(Span::styled(
            format!(" ▲ low balance (under {} USD)", format_amount(app.low_balance())),
            theme.warning(),
        ));
    }
    if session.read_only.is_some() {
        spans.push(Span::styled(" │ read-only", theme.title()));
    }
    if app.demo() {
        spans.push(Span::raw(" │ DEMO"));
    }
    if let Some(name) = app.switching() {
        spans.push(Span::raw(format!(" │ opening {}…", safe(name))));
    }
    if app.is_loading() {
        spans.push(Span::raw(format!(" {}", look.spinner())));
    }
    let spark = app
        .money()
        .value()
        .and_then(|_| sparkline_room(&mut spans, after_balance, area.width));
    frame.render_widget(
        Paragraph::new(Line::from(spans)).style(theme.header_in(session.color)),
        area,
    );
    if let (Some(x), Some(overview)) = (spark, app.money().value()) {
        let width = crate::tabs::profile::SPARK_DAYS as u16;
        let at = Rect {
            x: area.x + x,
            width,
            ..area
        };
        frame.render_widget(crate::tabs::profile::sparkline(overview, theme), at);
    }
}

/// Room for the last 14 days' sparkline after the balance, where the header has it to spare:
/// a gap is made there, and its column is given.
fn sparkline_room(spans: &mut Vec<Span<'_>>, after_balance: usize, width: u16) -> Option<u16> {
    let days = crate::tabs::profile::SPARK_DAYS;
    let used: usize = spans.iter().map(Span::width).sum();
    if used + days + 2 > usize::from(width) {
        return None;
    }
    let before: usize = spans[..after_balance].iter().map(Span::width).sum();
    spans.insert(after_balance, Span::raw(" ".repeat(days + 1)));
    u16::try_from(before + 1).ok()
}

/// An agent's seat at a team gateway, as the header says it: in words where the width allows,
/// else short enough for 80 columns ("ana·support 5.80/10.00 left").
fn seat_words(seat: &esimdash_api::relay::Seat, wide: bool) -> String {
    let (name, role) = (safe(&seat.name), safe(&seat.role));
    // A viewer pays for nothing: no money of its own to show.
    let (cap, left) = if seat.pays() {
        (seat.cap, seat.left)
    } else {
        (None, None)
    };
    match (cap, left, wide) {
        (Some(cap), Some(left), true) => format!(
            "agent {name} ({role}), {} of {} USD left today",
            format_amount(left),
            format_amount(cap)
        ),
        (Some(cap), Some(left), false) => format!("{name}·{role} {}/{} left", format_amount(left), format_amount(cap)),
        (_, _, true) => format!("agent {name} ({role})"),
        (_, _, false) => format!("{name}·{role}"),
    }
}

fn draw_tabs(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let mut spans = Vec::new();
    for (tab, label) in app.tab_labels() {
        let style = if tab == app.tab() {
            theme.tab_active()
        } else {
            theme.muted()
        };
        spans.push(Span::styled(label, style));
        spans.push(Span::raw(" "));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The credentials refused: by the API (`revoked`: as such), or, for an agent's seat (`at_gateway`),
/// by the team gateway, whose admin gives tokens, not the reseller portal.
fn draw_unauthorized(frame: &mut Frame, area: Rect, (revoked, at_gateway): (bool, bool), message: &str, theme: &Theme) {
    let rect = centered(area, 76, area.height.min(16));
    let (title, what) = if at_gateway {
        (
            "Token not accepted by the team gateway",
            "The gateway no longer accepts this agent's token (revoked, or mistyped). Ask the team's admin for a new one.",
        )
    } else if revoked {
        (
            "API key revoked or expired",
            "This key can no longer be used. Create a new key pair in the reseller portal (API keys).",
        )
    } else {
        (
            "Credentials not accepted",
            "The access code or secret key is wrong. Check them in the reseller portal (API keys).",
        )
    };
    let lines = vec![
        Line::styled(title, theme.error()),
        Line::raw(""),
        Line::raw(what),
        Line::raw(
            "Then set ESIMDASH_ACCESS_CODE and ESIMDASH_SECRET_KEY, or the profile in the config file, and start esimdash again.",
        ),
        Line::raw(""),
        Line::styled(safe(message), theme.muted()),
        Line::raw(""),
        Line::raw("No more requests are sent. q to quit."),
    ];
    let block = Block::default().borders(Borders::ALL);
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: true }).block(block), rect);
}

/// The keys of what has the focus, for the status line: from the keymap, so they cannot drift.
/// However narrow the line, it ends in quit and help (which lists the rest) wherever they
/// work; the other hints go first, most used first, as many as fit.
fn key_hints(app: &App, width: usize) -> String {
    use unicode_width::UnicodeWidthStr;
    let (contexts, typing) = if matches!(app.halt(), Some(Halt::Unauthorized { .. })) {
        (vec![Context::Banner], "")
    } else {
        let contexts = app.mode().contexts(app.tab_state().browse_contexts());
        if contexts.is_empty() {
            return "sending: no key can send it again".to_string();
        }
        let typing = match app.mode() {
            Mode::Typing => app.tab_state().typing_hint(),
            _ => "",
        };
        (contexts, typing)
    };
    let parts = app.keymap().hint_parts(&contexts, app.mode().takes_text());
    let parts = parts.into_iter().filter(|(action, _)| !app.withholds(*action));
    let (mut last, first): (Vec<_>, Vec<_>) = parts
        .into_iter()
        .partition(|(action, _)| matches!(action, Action::Help | Action::Quit));
    // Quit, then help: the line ends with the key that tells every other.
    last.sort_by_key(|(action, _)| *action == Action::Help);
    let last: Vec<String> = last.into_iter().map(|(_, p)| p).collect();
    let tail = last.join("  ");
    let mut line = esimdash_domain::text::safe_fit(typing, width.saturating_sub(tail.width())).into_owned();
    for (_, part) in first {
        let room = width.saturating_sub(line.width() + 2 + tail.width());
        if part.width() > room {
            break;
        }
        line.push_str(&part);
        line.push_str("  ");
    }
    line.push_str(&tail);
    line
}

/// The export running (with its progress and the key that cancels it), or why it failed.
fn export_line(app: &App, theme: &Theme) -> Line<'static> {
    let Some(export) = app.export() else {
        return Line::raw("");
    };
    // On Profile, which exports nothing, the key of My eSIMs is named (it cancels there).
    let tab = app.tab_state();
    let context = if tab.has_list() { tab.context() } else { Context::Esims };
    let key = app.keymap().first_key(context, Action::Export);
    match &export.state {
        ExportState::Running(progress) => Line::styled(
            format!(
                " Exporting {} to CSV: {} · {key} cancels",
                export.what,
                progress.map_or_else(|| "starting…".to_string(), |p| p.describe())
            ),
            theme.muted(),
        ),
        ExportState::Failed(why) => Line::styled(
            format!(
                " Export of {} failed, no file written: {} ({key} tries again)",
                export.what,
                safe(why)
            ),
            theme.error(),
        ),
    }
}

/// The bottom line, wrapped: a long message takes the rows it needs (up to `MESSAGE_ROWS`).
fn status_text(app: &App, look: &Look<'_>, width: u16) -> Paragraph<'static> {
    let line = look.notice.clone().unwrap_or_else(|| {
        Line::styled(
            format!(" {}", key_hints(app, usize::from(width).saturating_sub(1))),
            look.theme.muted(),
        )
    });
    Paragraph::new(line).wrap(Wrap { trim: false })
}

/// What the status line says other than keys: why the dashboard waits, an export's progress,
/// the last message (what a key did); `None`: the keys (each view has its own).
fn notice(app: &App, theme: &Theme, now: Instant) -> Option<Line<'static>> {
    let refresh_key = || app.keymap().first_key(Context::Global, Action::Refresh);
    let line = match (app.halt(), app.rate_limited_until(), app.flash_message()) {
        _ if app.quitting().is_some() => {
            Line::styled(format!(" {}", app.quitting().unwrap_or_default()), theme.warning())
        }
        (Some(Halt::Offline { message }), _, _) => Line::styled(
            format!(" {}  ({} to retry)", safe(message), refresh_key()),
            theme.error(),
        ),
        (_, Some(until), _) => {
            let left = until.saturating_duration_since(now);
            let secs = left.as_secs() + u64::from(left.subsec_nanos() > 0);
            Line::styled(format!(" Rate limited by the API: retrying in {secs} s"), theme.error())
        }
        (_, _, _) if app.pacing_countdown().is_some_and(|t| t > now) => {
            let left = app.pacing_countdown().unwrap_or(now).saturating_duration_since(now);
            let secs = left.as_secs() + u64::from(left.subsec_nanos() > 0);
            Line::styled(format!(" Waiting for the API's rate limit: {secs} s"), theme.muted())
        }
        _ if app.export().is_some() => export_line(app, theme),
        (_, _, Some(flash)) => Line::styled(
            format!(" {}", safe(&flash.text)),
            match flash.tone {
                Tone::Error => theme.error(),
                Tone::Success => theme.ok(),
                Tone::Info => theme.muted(),
            },
        ),
        _ => return None,
    };
    Some(line)
}
