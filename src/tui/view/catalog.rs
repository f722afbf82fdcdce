//! The Catalog tab: plans with location, data, validity, cost, sell price and margin.

use super::theme::Theme;
use super::widgets::{constraints, fit_columns, safe, window_start};
use crate::api::model::Plan;
use crate::esim::location::location_name;
use crate::esim::money::format_amount;
use crate::esim::volume::format_bytes;
use crate::tui::app::App;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Cell, Paragraph, Row, Table, TableState};

const COLUMNS: [(&str, u16, bool); 7] = [
    ("PLAN", 24, false),
    ("LOCATION", 16, true),
    ("DATA", 7, false),
    ("VALIDITY", 8, true),
    ("COST", 8, true),
    ("SELL", 8, false),
    ("MARGIN", 7, true),
];

fn money(value: Option<rust_decimal::Decimal>) -> String {
    value.map(format_amount).unwrap_or_else(|| "-".to_string())
}

pub fn validity(plan: &Plan) -> String {
    match (plan.duration, plan.duration_unit.as_str()) {
        (Some(1), "DAY") => "1 day".to_string(),
        (Some(d), "DAY" | "") => format!("{d} days"),
        (Some(d), unit) => format!("{d} {}", safe(unit)),
        (None, _) => "-".to_string(),
    }
}

pub fn location(code: &str) -> String {
    location_name(code).map_or_else(|| safe(code), |n| n.to_string())
}

fn cells(plan: &Plan) -> [String; 7] {
    let pricing = plan.pricing.as_ref();
    [
        safe(&plan.name),
        location(&plan.location_code),
        plan.volume.map(format_bytes).unwrap_or_default(),
        validity(plan),
        money(pricing.and_then(|p| p.cost_price)),
        money(plan.sell_price()),
        pricing
            .and_then(|p| p.margin_pct)
            .map(|m| format!("{}%", format_amount(m)))
            .unwrap_or_default(),
    ]
}

pub fn draw(frame: &mut Frame, area: Rect, app: &App, theme: &Theme) {
    let catalog = &app.catalog;
    let [title, table_area] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
    let mut spans = vec![
        Span::styled(
            format!(" {} of {} plans", catalog.visible.len(), catalog.plans.len()),
            theme.title(),
        ),
        Span::styled(format!(" · sorted by {}", catalog.sort.label()), theme.muted()),
    ];
    if catalog.filtering || !catalog.filter.value.is_empty() {
        spans.push(Span::raw(" · filter: "));
        spans.push(Span::styled(safe(&catalog.filter.value), theme.key()));
        if catalog.filtering {
            spans.push(Span::raw("▏"));
        }
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), title);
    if catalog.plans.is_empty() {
        let text = if catalog.request.is_some() {
            " Loading the catalog…"
        } else {
            " No plans."
        };
        frame.render_widget(Paragraph::new(text), table_area);
        return;
    }
    let columns: Vec<(u16, bool)> = COLUMNS.iter().map(|(_, w, o)| (*w, *o)).collect();
    let keep = fit_columns(table_area.width, &columns);
    let header = Row::new(
        COLUMNS
            .iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|((h, _, _), _)| Cell::from(*h)),
    )
    .style(theme.muted());
    let height = table_area.height.saturating_sub(1) as usize;
    let start = window_start(catalog.cursor, height);
    let rows = catalog.visible.iter().skip(start).take(height).map(|&i| {
        let cells = cells(&catalog.plans[i]);
        Row::new(
            cells
                .into_iter()
                .zip(&keep)
                .filter(|(_, k)| **k)
                .map(|(c, _)| Cell::from(c)),
        )
    });
    let table = Table::new(rows, constraints(&columns, &keep))
        .header(header)
        .row_highlight_style(theme.selected());
    let mut state = TableState::default().with_selected(Some(catalog.cursor - start));
    frame.render_stateful_widget(table, table_area, &mut state);
}
