//! The Catalog tab: plans with location, data, validity, cost, sell price and margin.

use super::theme::Theme;
use super::widgets::{Column, cursor_table, safe};
use crate::api::model::Plan;
use crate::esim::location::location_name;
use crate::esim::money::format_amount;
use crate::esim::volume::format_bytes;
use crate::tui::app::App;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

const COLUMNS: [Column; 7] = [
    Column::new("PLAN", 24).flex(),
    Column::new("LOCATION", 16).optional(),
    Column::new("DATA", 7).right(),
    Column::new("VALIDITY", 8).optional().right(),
    Column::new("COST", 8).optional().right(),
    Column::new("SELL", 8).right(),
    Column::new("MARGIN", 7).optional().right(),
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

fn cells(plan: &Plan) -> Vec<String> {
    let pricing = plan.pricing.as_ref();
    vec![
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
    let rows = catalog.visible.iter().map(|&i| &catalog.plans[i]);
    cursor_table(frame, table_area, &COLUMNS, rows, cells, catalog.cursor, theme);
}
