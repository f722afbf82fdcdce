//! Moving in the lists and typing in their search: what the screen shows after the keys an agent
//! presses, against the seeded sandbox.

use crate::common::*;
use crossterm::event::KeyCode;

/// The table rows of a screen: the lines under the column titles, above the status line.
fn table_rows(screen: &str, header: &str) -> Vec<String> {
    let lines: Vec<&str> = screen.lines().map(|l| l.trim_matches('"')).collect();
    let Some(top) = lines.iter().position(|l| l.contains(header)) else {
        panic!("no {header:?} on the screen:\n{screen}");
    };
    lines[top + 1..lines.len() - 1].iter().map(|l| l.to_string()).collect()
}

/// `G` (and End) on a server-paged list ends the list at the bottom of the view: every row of
/// the view holds an order and the last one is the selected, last order.
#[tokio::test]
async fn the_last_row_of_orders_ends_a_full_view() {
    let cases = [
        (key('G'), (120, 40), false),
        (code(KeyCode::End), (80, 24), false),
        (key('G'), (120, 40), true),
    ];
    for (last, size, short_last_page) in cases {
        let mut h = Harness::acme().await;
        h.send(key('2'));
        h.settle().await;
        if short_last_page {
            // 204 orders: the last page holds 4, the rest of the view comes from the page before.
            h.send(key('/'));
            h.keys("30 Days");
            h.send(code(KeyCode::Enter));
            h.settle().await;
        }
        h.send(last);
        h.settle().await;
        let total = h.app.orders().list().total().unwrap_or(0);
        assert_eq!(h.app.orders().list().cursor() + 1, total, "on the last order");
        let screen = h.screen(size.0, size.1);
        let rows = table_rows(&screen, "CREATED");
        assert!(
            rows.iter().all(|r| !r.trim().is_empty()),
            "{}×{}: no empty line under the list:\n{screen}",
            size.0,
            size.1
        );
        assert!(
            rows.last().is_some_and(|r| r.starts_with('›')),
            "{}×{}: the selected last order is the view's last row:\n{screen}",
            size.0,
            size.1
        );
    }
}

