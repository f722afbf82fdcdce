//! The Orders tab drawn: one server page of orders, with the page, filter and search in the
//! title line.

use super::Orders;
use crate::view::Look;
use crate::view::lists::{draw_table, short_time, title};
use crate::view::widgets::Column;
use esimdash_api::model::Order;
use esimdash_front::format::money::amount;
use esimdash_front::format::verdict::status_words;
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::widgets::Paragraph;

fn order_cells(o: &Order) -> Vec<String> {
    let r = &o.record;
    vec![
        r.provider_order_no.to_string(),
        short_time(&o.created_at),
        status_words(&r.status).to_string(),
        r.package_name.clone(),
        esimdash_domain::location::short(&r.location_code).to_string(),
        r.quantity.map(|q| q.to_string()).unwrap_or_default(),
        amount(o.total_sell_price),
    ]
}

const ORDER_COLUMNS: [Column; 7] = [
    Column::new("ORDER", 14),
    Column::new("CREATED", 16).optional().narrow(10),
    // The order's own status (the API's word); My eSIMs' STATUS is the eSIM's state in full.
    Column::new("ORDER STATUS", 14).status(),
    Column::new("PACKAGE", 14).flex().package(),
    Column::new("LOC", 4).optional(),
    Column::new("QTY", 3).optional().right(),
    Column::new("TOTAL", 8).right(),
];

pub fn draw(frame: &mut Frame, area: Rect, o: &Orders, look: &Look<'_>) {
    let theme = look.theme;
    let [top, table] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
    let typing = look.typing();
    frame.render_widget(
        Paragraph::new(title(
            look,
            o.list(),
            "Orders",
            o.status(),
            Some((o.search(), typing)),
            theme,
        )),
        top,
    );
    draw_table(frame, table, look, o.list(), &ORDER_COLUMNS, order_cells, theme);
}
