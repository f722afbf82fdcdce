//! Server-paged lists (Orders, and My eSIMs when not searching): one page at a time, with the
//! page, total, filter and search in the title line.

use super::theme::Theme;
use super::widgets::{Column, cursor_table, safe, search_spans};
use crate::kit::paged::Paged;
use crate::kit::remote::Remote;
use crate::kit::search::SearchBox;
use crate::view::Look;
use esimdash_domain::status::StatusFilter;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

/// A time as the tables show it, safe to draw.
pub fn short_time(time: &esimdash_api::Timestamp) -> String {
    safe(&time.short())
}

/// ` Orders · page 2/8 · 400 total · active · search: fr`; "loading" only while a request is
/// in flight, "could not load" where the page failed.
pub fn title<T>(
    look: &Look<'_>,
    list: &Paged<T>,
    what: &str,
    status: &StatusFilter,
    search: Option<(&SearchBox, bool)>,
    theme: &Theme,
) -> Line<'static> {
    let mut spans = vec![Span::styled(format!(" {what}"), theme.title())];
    if let Some(total) = list.total() {
        spans.push(Span::raw(format!(
            " · page {}/{} · {} total",
            list.current_page(),
            list.page_count().max(1),
            esimdash_domain::text::grouped(total)
        )));
    }
    if list.is_loading() {
        spans.push(Span::raw(" · loading…"));
    } else if list.error().is_some() {
        spans.push(Span::styled(
            format!(" · could not load ({})", look.refresh_key()),
            theme.error(),
        ));
    }
    let status = match status {
        StatusFilter::All => "all statuses".to_string(),
        other => safe(other.label()),
    };
    spans.push(Span::styled(format!(" · {status}"), theme.muted()));
    if let Some((search, typing)) = search {
        // While typing, what is typed; after, the search in effect.
        let text = if typing { search.typed() } else { search.applied() };
        spans.extend(search_spans("search", text, typing, search.is_selected(), theme));
    }
    Line::from(spans)
}

/// A failed load, in place of the data: what failed, why, and how to retry.
pub fn failed_text(look: &Look<'_>, what: &str, error: &impl std::fmt::Display) -> String {
    format!(
        " Could not load {what}: {} · {} to try again",
        safe(&error.to_string()),
        look.refresh_key()
    )
}

/// What a view shows where its data is not at hand: why it failed, or that it is loading only
/// while it is asked for; else why it is not asked (rate limited, the API unreachable, the key
/// refused), so that no view says "loading" with nothing in flight.
pub fn not_at_hand<T>(look: &Look<'_>, what: &str, remote: Option<&Remote<T>>) -> String {
    match remote {
        Some(Remote::Failed { error, .. }) => return failed_text(look, what, error),
        Some(r) if r.is_loading() => return format!(" Loading {what}…"),
        _ => {}
    }
    match look.halt {
        Some(crate::kit::status::Halt::Offline { message }) => {
            format!(" Not loaded: {} · {} to try again", safe(message), look.refresh_key())
        }
        Some(crate::kit::status::Halt::Unauthorized { .. }) => {
            " Not loaded: the API refused the credentials.".to_string()
        }
        None if look.closing => " Not loaded: the dashboard is closing.".to_string(),
        None if look.rate_limited => {
            format!(" Rate limited: {what} loads when the countdown ends.")
        }
        // Asked for at the next step (nothing stops it): loading in all but name.
        None => format!(" Loading {what}…"),
    }
}

pub fn draw_table<T>(
    frame: &mut Frame,
    area: Rect,
    look: &Look<'_>,
    list: &Paged<T>,
    columns: &[Column],
    cells: impl Fn(&T) -> Vec<String>,
    theme: &Theme,
) {
    let page = list.current_page();
    let Some(items) = list.page_items() else {
        let text = match (list.total(), list.current()) {
            (Some(0), _) => " Nothing here.".to_string(),
            // Paging fast: only the page the keys stop on is asked for.
            (_, None | Some(Remote::NotAsked { .. })) if list.hold_until().is_some() && look.halt.is_none() => {
                format!(" Page {page}: asked for when paging pauses.")
            }
            (_, current) => not_at_hand(look, &format!("page {page}"), current),
        };
        let style = if list.error().is_some() {
            theme.error()
        } else {
            theme.muted()
        };
        frame.render_widget(
            Paragraph::new(Line::styled(text, style)).wrap(Wrap { trim: false }),
            area,
        );
        return;
    };
    if items.is_empty() {
        frame.render_widget(Paragraph::new(" Nothing here."), area);
        return;
    }
    // A last page shorter than the view is drawn under the end of the page before it.
    let view_rows = usize::from(area.height.saturating_sub(1));
    let before = list
        .page_before_last()
        .filter(|_| items.len() < view_rows)
        .unwrap_or_default();
    let rows = before.iter().chain(items);
    cursor_table(
        frame,
        area,
        columns,
        rows,
        cells,
        before.len() + list.row_in_page(),
        theme,
    );
}
