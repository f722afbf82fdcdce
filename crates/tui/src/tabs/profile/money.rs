//! Profile's money: how long the balance lasts, spend and margin per day over the last 30 days
//! as bar charts, and what sold most. The figures are the ledger's overview (made once a read,
//! off the event loop); this only lays them out. Bars carry the meaning by their height, and
//! each chart is named by its title, so a terminal without colour reads the same.

use crate::kit::remote::Remote;
use crate::view::Look;
use crate::view::lists::not_at_hand;
use crate::view::theme::Theme;
use esimdash_domain::money::format_amount;
use esimdash_domain::text::safe_fit;
use esimdash_front::format::money::{day, runway};
use esimdash_ledger::overview::Overview;
use esimdash_ledger::sums::{Row, Runway};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Bar, BarChart, BarGroup, Block, Padding, Paragraph, Sparkline, Wrap};
use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;

/// The overview and the runway at the balance shown, when both are at hand.
fn at_hand<'a>(look: &Look<'a>) -> Option<(&'a Overview, Option<Runway>)> {
    let overview = look.money.value()?;
    let runway = look
        .profile()
        .and_then(|p| p.balance_usd)
        .map(|b| Runway::of(b, overview.per_day, overview.read_at, &overview.offset));
    Some((overview, runway))
}

/// What the money part says while it has nothing to show: reading, failed (why, and the key to
/// try again) or why it is not asked.
fn missing(look: &Look<'_>) -> Line<'static> {
    let what = "the orders of the last 30 days";
    match look.money {
        Remote::Failed { .. } => Line::raw(not_at_hand(look, what, Some(look.money))),
        Remote::Loading { .. } => Line::raw(format!(
            " Reading {what} (the first time reads back 30 days; then only what is new)…"
        )),
        other => Line::raw(not_at_hand(look, what, Some(other))),
    }
}

/// A line that says the figures shown are not the latest: being read again, or the read failed.
fn staleness(look: &Look<'_>, theme: &Theme) -> Option<Line<'static>> {
    match look.money {
        Remote::Loading { previous: Some(_), .. } => Some(Line::styled("Reading what is new…", theme.muted())),
        Remote::Failed {
            error,
            previous: Some(_),
            ..
        } => Some(Line::styled(
            format!(
                "Not refreshed: {} · {} to try again",
                crate::view::widgets::safe(&error.to_string()),
                look.refresh_key()
            ),
            theme.error(),
        )),
        _ => None,
    }
}

/// Lines one column in from the edge, wrapped lines too, and the rows they take at `width`.
fn indented(lines: Vec<Line<'static>>, width: u16) -> (Paragraph<'static>, u16) {
    let rows = Paragraph::new(lines.clone())
        .wrap(Wrap { trim: false })
        .line_count(width.saturating_sub(1));
    let paragraph = Paragraph::new(lines)
        .block(Block::new().padding(Padding::left(1)))
        .wrap(Wrap { trim: false });
    (paragraph, u16::try_from(rows).unwrap_or(u16::MAX))
}

/// The runway as a sentence, in the warning style when under a week.
fn runway_line(overview: &Overview, runway_at: Option<Runway>, theme: &Theme) -> Line<'static> {
    let today = overview.read_local().date_naive();
    let Some(r) = runway_at else {
        return Line::styled("Runway: the balance is not known yet", theme.muted());
    };
    let short = r.days.is_some_and(|d| d < Decimal::from(RUNWAY_SHORT_DAYS));
    let text = runway(&r, today);
    Line::from(vec![
        Span::styled("Runway: ", theme.title()),
        Span::styled(text, if short { theme.error() } else { Style::new() }),
    ])
}

/// A runway shorter than this many days is said in the warning style.
pub const RUNWAY_SHORT_DAYS: i64 = 7;

/// The period's totals on one line, with when the orders were read (a dashboard left open
/// shows figures of the time it last read them).
fn totals_line(overview: &Overview) -> Line<'static> {
    let t = &overview.total;
    Line::raw(format!(
        "30 days: {} orders · spend {} · margin {} USD · read {}",
        t.orders,
        format_amount(t.spend),
        format_amount(t.margin()),
        overview.read_local().format("%H:%M")
    ))
}

/// An amount as a bar's height: whole cents (a loss, which no bar can show, is nothing).
fn cents(amount: Decimal) -> u64 {
    (amount * Decimal::ONE_HUNDRED).trunc().to_u64().unwrap_or(0)
}

/// A day's row key (`2026-11-26`) as the axis names it.
fn short_day(key: &str, today: chrono::NaiveDate) -> String {
    chrono::NaiveDate::parse_from_str(key, "%Y-%m-%d").map_or_else(|_| key.to_string(), |d| day(d, today))
}

/// One bar a day, as wide as `area` allows (the newest days when it is narrower than the
/// period), with the columns its bars take and how many days it shows.
fn bar_chart<'a>(rows: &[Row], value: fn(&Row) -> Decimal, area: Rect, style: Style) -> (BarChart<'a>, u16, usize) {
    let n = rows.len().max(1) as u16;
    let (width, gap) = if area.width >= 2 * n - 1 {
        let gap = 1;
        (((area.width + gap) / n).saturating_sub(gap).max(1), gap)
    } else {
        (1, 0)
    };
    // The last bar needs no gap after it.
    let shown = usize::from((area.width + gap) / (width + gap).max(1)).min(rows.len());
    let bars: Vec<Bar> = rows[rows.len() - shown..]
        .iter()
        .map(|r| Bar::new(cents(value(r))).text_value(String::new()))
        .collect();
    let span = (shown as u16 * (width + gap)).saturating_sub(gap);
    let chart = BarChart::default()
        .data(BarGroup::default().bars(&bars))
        .bar_width(width)
        .bar_gap(gap)
        .bar_style(style);
    (chart, span, shown)
}

/// A chart with its title (what it shows, and its tallest day) and, under it, its first and
/// last days.
fn chart(
    frame: &mut Frame,
    area: Rect,
    title: &str,
    overview: &Overview,
    value: fn(&Row) -> Decimal,
    style: Style,
    theme: &Theme,
) {
    let [head, bars, axis] =
        Layout::vertical([Constraint::Length(1), Constraint::Min(1), Constraint::Length(1)]).areas(area);
    let most = overview.days.iter().map(value).max().unwrap_or_default();
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            Span::styled(format!(" {title}"), theme.title()),
            Span::styled(format!("  (highest {} USD)", format_amount(most)), theme.muted()),
        ])),
        head,
    );
    let inner = Rect {
        x: bars.x + 1,
        width: bars.width.saturating_sub(1),
        ..bars
    };
    let (widget, span, shown) = bar_chart(&overview.days, value, inner, style);
    frame.render_widget(widget, inner);
    let today = overview.period.last;
    let first_shown = overview.days.len().saturating_sub(shown);
    let first = overview
        .days
        .get(first_shown)
        .map_or_else(String::new, |r| short_day(&r.key, today));
    let last = day(overview.period.last, today);
    let room = usize::from(span).saturating_sub(first.len() + last.len());
    frame.render_widget(
        Paragraph::new(Line::styled(
            format!(" {first}{}{last}", " ".repeat(room)),
            theme.muted(),
        )),
        axis,
    );
}

fn spend(r: &Row) -> Decimal {
    r.totals.spend
}

fn margin(r: &Row) -> Decimal {
    r.totals.margin()
}

/// The top rows of a group as lines: rank, name, spend.
fn top_lines(title: &str, rows: &[Row], width: u16, count: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = vec![Line::styled(format!(" {title}"), theme.title())];
    if rows.is_empty() {
        lines.push(Line::styled("  none sold in 30 days", theme.muted()));
    }
    for (i, r) in rows.iter().take(count).enumerate() {
        let amount = format_amount(r.totals.spend);
        let room = usize::from(width).saturating_sub(amount.len() + 7);
        let name = if r.name.is_empty() { &r.key } else { &r.name };
        let name = safe_fit(name, room).into_owned();
        let pad = room.saturating_sub(unicode_width(&name));
        lines.push(Line::raw(format!("  {}. {name}{} {amount}", i + 1, " ".repeat(pad))));
    }
    lines
}

fn unicode_width(text: &str) -> usize {
    ratatui::text::Span::raw(text).width()
}

/// The full form (120×40 and larger): the runway and totals, spend and margin charts, and the
/// top plans and countries, in `area` (the part of the tab beside the account's fields).
pub fn draw_full(frame: &mut Frame, area: Rect, look: &Look<'_>, theme: &Theme) {
    let Some((overview, runway_at)) = at_hand(look) else {
        frame.render_widget(Paragraph::new(missing(look)).wrap(Wrap { trim: false }), area);
        return;
    };
    let mut head = vec![runway_line(overview, runway_at, theme), totals_line(overview)];
    head.extend(staleness(look, theme));
    let (head, head_rows) = indented(head, area.width);
    let tops = 2 + TOP_ROWS as u16;
    let [head_area, spend_area, margin_area, tops_area] = Layout::vertical([
        Constraint::Length(head_rows + 1),
        Constraint::Fill(3),
        Constraint::Fill(2),
        Constraint::Length(tops),
    ])
    .areas(area);
    frame.render_widget(head, head_area);
    chart(
        frame,
        spend_area,
        "Spend per day",
        overview,
        spend,
        theme.spend(),
        theme,
    );
    chart(
        frame,
        margin_area,
        "Margin per day",
        overview,
        margin,
        theme.margin(),
        theme,
    );
    let [plans, countries] = Layout::horizontal([Constraint::Fill(1), Constraint::Fill(1)]).areas(tops_area);
    let plans_lines = top_lines("Top plans, 30 days", &overview.plans, plans.width, TOP_ROWS, theme);
    let country_lines = top_lines(
        "Top countries, 30 days",
        &overview.countries,
        countries.width,
        TOP_ROWS,
        theme,
    );
    frame.render_widget(Paragraph::new(plans_lines), plans);
    frame.render_widget(Paragraph::new(country_lines), countries);
}

/// Rows of the top plans and countries in the full form.
const TOP_ROWS: usize = 5;

/// The compact form (80×24): the runway, the totals, spend per day, and the best plan and
/// country on one line.
pub fn draw_compact(frame: &mut Frame, area: Rect, look: &Look<'_>, theme: &Theme) {
    let Some((overview, runway_at)) = at_hand(look) else {
        frame.render_widget(Paragraph::new(missing(look)).wrap(Wrap { trim: false }), area);
        return;
    };
    let mut head = vec![runway_line(overview, runway_at, theme)];
    head.extend(staleness(look, theme));
    let (head, head_rows) = indented(head, area.width);
    let [head_area, chart_area, foot] =
        Layout::vertical([Constraint::Length(head_rows), Constraint::Min(3), Constraint::Length(2)]).areas(area);
    frame.render_widget(head, head_area);
    chart(
        frame,
        chart_area,
        "Spend per day, 30 days",
        overview,
        spend,
        theme.spend(),
        theme,
    );
    let best = |rows: &[Row]| {
        rows.first().map_or_else(
            || "none".to_string(),
            |r| format!("{} {}", r.name, format_amount(r.totals.spend)),
        )
    };
    let foot_lines = vec![
        totals_line(overview),
        Line::raw(
            safe_fit(
                &format!(
                    "Top plan: {} · top country: {}",
                    best(&overview.plans),
                    best(&overview.countries)
                ),
                usize::from(area.width.saturating_sub(1)),
            )
            .into_owned(),
        ),
    ];
    frame.render_widget(indented(foot_lines, area.width).0, foot);
}

/// The last 14 days' spend as a one-row sparkline in `area` (the header's).
pub fn sparkline<'a>(overview: &Overview, theme: &Theme) -> Sparkline<'a> {
    let days = &overview.days[overview.days.len().saturating_sub(SPARK_DAYS)..];
    let data: Vec<u64> = days.iter().map(|r| cents(r.totals.spend)).collect();
    Sparkline::default().data(data).style(theme.spark())
}

/// The days the header's sparkline shows.
pub const SPARK_DAYS: usize = 14;
