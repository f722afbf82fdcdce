//! The Catalog tab: plans with location, data, validity, cost, sell price and margin.

use super::Catalog;
use crate::kit::remote::Remote;
use crate::view::Look;
use crate::view::lists::{failed_text, not_at_hand};
use crate::view::widgets::{Column, cursor_table, search_spans};
use esimdash_api::model::Plan;
use esimdash_domain::money::format_amount;
use esimdash_front::format::money::amount;
use esimdash_front::format::records;
use esimdash_front::format::volume::format_bytes;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

const COLUMNS: [Column; 7] = [
    Column::new("PLAN", 24).flex().package(),
    Column::new("LOCATION", 16).optional(),
    Column::new("DATA", 7).right(),
    Column::new("VALIDITY", 8).optional().right(),
    Column::new("COST", 8).optional().right(),
    Column::new("SELL", 8).right(),
    Column::new("MARGIN", 7).optional().right(),
];

fn cells(plan: &Plan) -> Vec<String> {
    let pricing = plan.pricing.as_ref();
    vec![
        plan.name.clone(),
        esimdash_domain::location::area(&plan.location_code, &plan.name),
        plan.volume.map(format_bytes).unwrap_or_default(),
        records::validity(plan),
        amount(pricing.and_then(|p| p.cost_price)),
        amount(plan.sell_price()),
        pricing
            .and_then(|p| p.margin_pct)
            .map(|m| format!("{}%", format_amount(m)))
            .unwrap_or_default(),
    ]
}

pub fn draw(frame: &mut Frame, area: Rect, catalog: &Catalog, look: &Look<'_>) {
    let theme = look.theme;
    let [title, table_area] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
    let typing = look.typing();
    let count = match catalog.plans().value() {
        Some(_) => format!(" {} of {} plans", catalog.visible().len(), catalog.all().len()),
        None => " Catalog".to_string(),
    };
    let mut spans = vec![Span::styled(count, theme.title())];
    match (catalog.plans(), catalog.plans().value()) {
        (Remote::Loading { .. }, _) => spans.push(Span::raw(" · loading…")),
        (Remote::Failed { .. }, value) => {
            let what = if value.is_some() {
                "could not refresh"
            } else {
                "could not load"
            };
            spans.push(Span::styled(
                format!(" · {what} ({})", look.refresh_key()),
                theme.error(),
            ));
        }
        _ => {}
    }
    spans.push(Span::styled(
        format!(" · sorted by {}", catalog.sort().label()),
        theme.muted(),
    ));
    let filter = catalog.filter();
    spans.extend(search_spans(
        "filter",
        filter.typed(),
        typing,
        filter.is_selected(),
        theme,
    ));
    frame.render_widget(Paragraph::new(Line::from(spans)), title);
    if catalog.plans().value().is_none() {
        let line = match catalog.plans() {
            Remote::Failed { error, .. } => Line::styled(failed_text(look, "the catalog", error), theme.error()),
            other => Line::raw(not_at_hand(look, "the catalog", Some(other))),
        };
        frame.render_widget(Paragraph::new(line).wrap(Wrap { trim: false }), table_area);
        return;
    }
    if catalog.all().is_empty() {
        frame.render_widget(
            Paragraph::new(" No plans: the API lists none for this account."),
            table_area,
        );
        return;
    }
    let plans = catalog.all();
    let rows = catalog.visible().iter().map(|&i| &plans[i]);
    cursor_table(frame, table_area, &COLUMNS, rows, cells, catalog.cursor(), theme);
}
