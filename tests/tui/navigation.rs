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
        let mut h = Harness::acme_on('2').await;
        if short_last_page {
            // 204 orders: the last page holds 4, the rest of the view comes from the page before.
            h.search("30 Days").await;
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

/// Whether the screen shows `text` in reverse video (selected), at 120×40 without colours.
fn shown_selected(h: &Harness, text: &str) -> bool {
    use esimdash_tui::view::theme::Theme;
    let mut terminal = ratatui::Terminal::new(ratatui::backend::TestBackend::new(120, 40)).unwrap();
    terminal.draw(|f| h.app.draw(f, &Theme::dark(false), h.now)).unwrap();
    let buffer = terminal.backend().buffer();
    let reversed = ratatui::style::Modifier::REVERSED;
    (0..buffer.area.height).any(|y| {
        let row: Vec<_> = (0..buffer.area.width).map(|x| &buffer[(x, y)]).collect();
        let line: String = row.iter().map(|c| c.symbol()).collect();
        line.find(text).is_some_and(|byte| {
            let at = line[..byte].chars().count();
            row[at..at + text.chars().count()]
                .iter()
                .all(|c| c.modifier.contains(reversed))
        })
    })
}

/// `/` on a list whose search holds text shows that text selected: a typed key replaces it, an
/// editing key (Backspace, an arrow) keeps it to edit, and Enter keeps it as it is.
#[tokio::test]
async fn a_search_opened_again_shows_its_text_selected_and_typing_replaces_it() {
    let mut h = Harness::acme_on('2').await;
    h.search("japan").await;
    h.send(key('/'));
    assert!(shown_selected(&h, "japan"), "{}", h.screen(120, 40));
    h.keys("fr");
    assert_eq!(h.app.orders().search().typed(), "fr", "typing replaced the old text");
    assert!(!shown_selected(&h, "fr"));
    h.send_and_settle(code(KeyCode::Enter)).await;
    assert_eq!(h.app.orders().search().applied(), "fr");

    h.send(key('/'));
    h.send(code(KeyCode::Backspace));
    assert_eq!(h.app.orders().search().typed(), "f", "Backspace edits the old text");
    h.send(code(KeyCode::Enter));
    h.send(key('/'));
    h.send(code(KeyCode::Left));
    h.keys("x");
    assert_eq!(h.app.orders().search().typed(), "xf", "after an arrow, typing inserts");
    h.send(code(KeyCode::Enter));
    h.send(key('/'));
    h.send_and_settle(code(KeyCode::Enter)).await;
    assert_eq!(h.app.orders().search().applied(), "xf", "Enter keeps the text");

    // The catalog's filter and the eSIM search are the same box.
    h.send(key('1'));
    h.type_search("japan");
    h.send(key('/'));
    assert!(shown_selected(&h, "japan"));
    h.keys("norway");
    assert_eq!(h.app.catalog().filter().typed(), "norway");
}

/// The help scrolls to its last line at 80×24 and 60×20, however its lines wrap: scrolling
/// counts the lines as drawn, not as written.
#[tokio::test]
async fn the_help_scrolls_to_its_last_line_at_small_sizes() {
    let mut h = Harness::acme().await;
    for tab in ['1', '2', '3'] {
        h.send_and_settle(key(tab)).await;
        h.send(key('?'));
        for _ in 0..120 {
            h.send(key('j'));
        }
        for (width, height) in [(80, 24), (60, 20)] {
            let screen = h.screen(width, height);
            assert!(
                screen.contains("docs/keys.md."),
                "tab {tab} at {width}×{height}: the last line is in view:\n{screen}"
            );
        }
        h.send(code(KeyCode::Esc));
    }
}
