//! Every view rendered into a TestBackend at 120×40 and 60×20, with the sandbox's seeded data
//! (pinned clock), reviewed like code in tests/tui/snapshots/.

use crate::common::*;
use crossterm::event::KeyCode;
use esimdash_api::{ApiError, Endpoint};

/// At a large terminal, the default 80×24, and a small one.
async fn at_both_sizes(name: &str, h: &Harness) {
    insta::assert_snapshot!(format!("{name}_120x40"), h.screen(120, 40));
    insta::assert_snapshot!(format!("{name}_80x24"), h.screen(80, 24));
    insta::assert_snapshot!(format!("{name}_60x20"), h.screen(60, 20));
}

#[tokio::test]
async fn catalog() {
    let h = Harness::acme().await;
    at_both_sizes("catalog", &h).await;
}

#[tokio::test]
async fn catalog_filtered_with_plan_detail() {
    let mut h = Harness::acme().await;
    h.type_search("japan");
    h.send(key('j'));
    h.send_and_settle(code(KeyCode::Enter)).await;
    at_both_sizes("catalog_plan_detail", &h).await;
}

#[tokio::test]
async fn orders_searched_and_filtered() {
    let mut h = Harness::acme_on('2').await;
    at_both_sizes("orders", &h).await;
    h.send(key('f'));
    at_both_sizes("orders_status_picker", &h).await;
    h.send(key('j'));
    h.send(code(KeyCode::Enter));
    h.search("10gb").await;
    at_both_sizes("orders_active_10gb", &h).await;
    h.send(code(KeyCode::Enter));
    at_both_sizes("order_detail", &h).await;
}

#[tokio::test]
async fn esims() {
    let h = Harness::acme_on('3').await;
    at_both_sizes("esims", &h).await;
}

/// The eSIM pane of one eSIM of each state at 80×24 (the demo's newest eSIMs show each):
/// what it is and what to tell the customer, first.
#[tokio::test]
async fn a_verdict_for_each_state() {
    use esimdash_domain::esim_state::Class;
    let mut h = Harness::acme_on('3').await;
    let mut seen = std::collections::HashSet::new();
    for _ in 0..20 {
        let class = h.app.selected_esim().unwrap().facts().classify();
        if seen.insert(class) {
            h.send_and_settle(code(KeyCode::Enter)).await;
            insta::assert_snapshot!(format!("verdict_{}_80x24", class.key()), h.screen(80, 24));
            h.send(code(KeyCode::Esc));
        }
        h.send_and_settle(key('j')).await;
    }
    let missing: Vec<_> = Class::ALL
        .into_iter()
        .filter(|c| !seen.contains(c) && !matches!(c, Class::Pending | Class::Unknown))
        .collect();
    assert!(missing.is_empty(), "no eSIM near the top is {missing:?}");
}

#[tokio::test]
async fn profile_and_its_form() {
    let mut h = Harness::acme().await;
    h.send(key('4'));
    at_both_sizes("profile", &h).await;
    h.send(key('e'));
    h.send(code(KeyCode::Tab));
    h.send(code(KeyCode::Backspace));
    h.keys("1");
    h.send(code(KeyCode::Enter));
    assert!(!h.app.is_saving(), "an invalid country is not sent");
    at_both_sizes("profile_form_error", &h).await;
}

#[tokio::test]
async fn help_and_too_small() {
    let mut h = Harness::acme().await;
    h.send(key('?'));
    at_both_sizes("help", &h).await;
    insta::assert_snapshot!("too_small_30x8", h.screen(30, 8));
    insta::assert_snapshot!("too_small_20x5", h.screen(20, 5));
}

#[tokio::test]
async fn revoked_key_banner() {
    let h = Harness::new("ak_demo_revoked", "sk_demo_revoked").await;
    at_both_sizes("revoked", &h).await;
}

#[tokio::test]
async fn rate_limited_countdown() {
    let mut h = Harness::acme().await;
    h.send(key('2'));
    h.fail_pending(ApiError::RateLimited {
        endpoint: Endpoint::new("GET", "/reseller/orders"),
        retry_after: std::time::Duration::from_secs(12),
    });
    assert!(h.app.rate_limited_until().is_some());
    at_both_sizes("orders_rate_limited", &h).await;
}

/// Every view shows a failed load in place, with the reason and how to retry: never an empty
/// or a loading look, and the title says "loading" only while a request is in flight.
#[tokio::test]
async fn failed_loads_show_in_place() {
    let fire = || ApiError::Api {
        endpoint: Endpoint::new("GET", "/portal/plans"),
        status: 500,
        message: "database on fire".into(),
    };
    let mut h = Harness::unsettled("ak_demo_acme", "sk_demo_acme", std::time::Duration::from_secs(10)).await;
    h.fail_pending(fire());
    let screen = h.screen(120, 40);
    assert!(screen.contains("Could not load the catalog") && !screen.contains("No plans"));
    assert!(!screen.contains("loading"), "nothing is in flight:\n{screen}");
    at_both_sizes("failed_catalog_and_header", &h).await;
    h.send(key('4'));
    at_both_sizes("failed_profile", &h).await;
    h.send(key('2'));
    h.fail_pending(fire());
    at_both_sizes("failed_orders_page", &h).await;
    h.send(key('3'));
    h.fail_pending(fire());
    at_both_sizes("failed_esims_page", &h).await;
    // `r` asks again; this time the sandbox answers.
    h.send_and_settle(key('r')).await;
    let screen = h.screen(120, 40);
    assert!(
        !screen.contains("Could not load") && screen.contains("Balance 250.00 USD"),
        "{screen}"
    );
    h.send(key('/'));
    h.step().await;
    h.fail_pending(fire());
    at_both_sizes("failed_esim_search", &h).await;
}

#[tokio::test]
async fn every_view_renders_at_every_size_without_panicking() {
    let mut h = Harness::acme().await;
    // Each step leaves the app in another view or overlay; each is drawn at many sizes.
    let steps: Vec<Vec<crossterm::event::KeyCode>> = vec![
        vec![],
        vec![KeyCode::Char('?')],
        vec![KeyCode::Esc, KeyCode::Enter],
        vec![KeyCode::Esc, KeyCode::Char('2')],
        vec![KeyCode::Char('f')],
        vec![KeyCode::Esc, KeyCode::Enter],
        vec![KeyCode::Esc, KeyCode::Char('3'), KeyCode::Char('G')],
        vec![KeyCode::Enter],
        vec![KeyCode::Esc, KeyCode::Char('4'), KeyCode::Char('e')],
    ];
    for step in steps {
        for k in step {
            h.send(code(k));
        }
        h.settle().await;
        for width in (1..=130).step_by(7) {
            for height in (1..=45).step_by(4) {
                h.screen(width, height);
            }
        }
    }
}

#[tokio::test]
async fn esims_detail_zoom_and_too_small() {
    let mut h = Harness::acme_on('3').await;
    h.send_and_settle(code(KeyCode::Enter)).await;
    // At 60×20 the pane has no room for the code: it says how large the terminal must be.
    insta::assert_snapshot!("esims_detail_60x20", h.screen(60, 20));
    insta::assert_snapshot!("esims_detail_120x40", h.screen(120, 40));
    h.send(key('z'));
    // Two columns a module where the code and the lines under it fit; half blocks at 80×24.
    insta::assert_snapshot!("esims_zoom_120x40", h.screen(120, 40));
    insta::assert_snapshot!("esims_zoom_80x24", h.screen(80, 24));
    insta::assert_snapshot!("esims_zoom_60x20", h.screen(60, 20));
    insta::assert_snapshot!("esims_zoom_too_small_30x12", h.screen(30, 12));
    h.send(code(KeyCode::Esc));
    h.send(code(KeyCode::Esc));
    assert!(
        matches!(h.app.mode(), esimdash_tui::app::Mode::Browse),
        "Esc leaves the zoom, then the detail"
    );
    h.send(key('/'));
    h.keys("norway");
    h.settle().await;
    at_both_sizes("esims_search_norway", &h).await;
}

/// At 80×24 a long verdict pushed the record (usage, expiry, EID) out of the pane for good:
/// the pane says it holds more, and `J` shows the rest.
#[tokio::test]
async fn the_pane_scrolls_to_the_record_a_long_verdict_pushed_out() {
    let mut h = Harness::acme_on('3').await;
    h.search("8944100000008907826").await;
    let top = h.screen(80, 24);
    assert!(top.contains("J: more below (1/2)"), "{top}");
    assert!(
        !top.contains("EID      "),
        "the record is below the pane's first screen:\n{top}"
    );
    insta::assert_snapshot!("pane_long_verdict_80x24", top);
    h.send(key('J'));
    let below = h.screen(80, 24);
    for shown in [
        "EID      89049032709239852957099317443517",
        "expires 2026-",
        "K: back up (2/2)",
    ] {
        assert!(below.contains(shown), "{shown:?} after J:\n{below}");
    }
    // The install link wraps whole: its end is on the screen, not cut at the pane's edge.
    assert!(below.contains("xample$K1GCKKDJVN36"), "{below}");
    insta::assert_snapshot!("pane_long_verdict_scrolled_80x24", below);
    h.send(key('K'));
    assert_eq!(h.screen(80, 24), top, "K goes back up");
    h.send(key('J'));
    h.send(code(KeyCode::Esc));
    h.send(key('j'));
    h.send(code(KeyCode::Enter));
    assert!(h.screen(80, 24).contains("ICCID    "), "another eSIM opens at its top");
}

/// The bottom line of each list at 80 columns: its most used keys first, and help last.
#[tokio::test]
async fn the_bottom_line_names_the_most_used_keys_and_ends_with_help() {
    let mut h = Harness::acme().await;
    let bottom = |h: &Harness| {
        h.screen(80, 24)
            .lines()
            .last()
            .unwrap_or_default()
            .trim_matches(['"', ' '])
            .to_string()
    };
    for (tab, wanted) in [
        ('3', &["/ search", "Enter detail", "t top up", "r refresh"][..]),
        ('2', &["/ search", "Enter detail", "t top up"]),
        ('1', &["/ search", "Enter detail", "b buy"]),
        ('4', &["e edit", "t top up"]),
    ] {
        h.send_and_settle(key(tab)).await;
        let line = bottom(&h);
        for hint in wanted {
            assert!(line.contains(hint), "{hint:?} on tab {tab}: {line:?}");
        }
        assert!(line.ends_with("? help"), "tab {tab}: {line:?}");
    }
    h.send(key('3'));
    h.send(code(KeyCode::Enter));
    let line = bottom(&h);
    assert!(
        line.starts_with("Esc back  t top up") && line.ends_with("? help"),
        "{line:?}"
    );
}

/// A package name shortened by whole words never ends in a number cut short ("Singapore 50…"
/// read as 50 GB), in any table, at any size.
#[tokio::test]
async fn a_package_name_is_never_cut_inside_a_number() {
    let mut h = Harness::acme().await;
    for tab in ['1', '2', '3'] {
        h.send_and_settle(key(tab)).await;
        for (width, height) in [(120, 40), (100, 30), (80, 24), (60, 20), (50, 12)] {
            let screen = h.screen(width, height);
            let cut = screen.lines().find(|l| {
                l.char_indices()
                    .any(|(i, c)| c == '…' && l[..i].ends_with(|d: char| d.is_ascii_digit()))
            });
            assert!(cut.is_none(), "tab {tab} at {width}×{height}: {cut:?}");
        }
        if tab == '2' {
            let orders = h.screen(80, 24);
            assert!(
                orders.contains("2026-11-18 used up        Singapore 500MB 1d  SG"),
                "CREATED gives up its time first, for the name:\n{orders}"
            );
        }
    }
}

/// The rows inside a window (between its `│`s), joined: what it says, however it wrapped.
fn window_text(screen: &str) -> String {
    let rows: Vec<&str> = screen
        .lines()
        .filter_map(|l| Some(l.get(l.find('│')? + '│'.len_utf8()..l.rfind('│')?)?.trim()))
        .collect();
    rows.join(" ").split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The ICCID prompt's Luhn message, and a long message on the bottom line, are read whole at
/// every size: they wrap onto more rows rather than being cut.
#[tokio::test]
async fn long_messages_wrap_rather_than_being_cut() {
    let mut h = Harness::acme().await;
    h.send(key('4'));
    h.send(key('t'));
    let typed = "89441000000089078277";
    h.keys(typed);
    h.send(code(KeyCode::Enter));
    let why = esimdash_domain::iccid::Iccid::parse(typed).unwrap_err().to_string();
    assert!(why.contains("Luhn"), "{why}");
    for (width, height) in [(80, 24), (60, 20), (50, 12)] {
        let said = window_text(&h.screen(width, height));
        assert!(said.contains(&why), "{width}×{height}: {said:?}");
    }
    insta::assert_snapshot!("iccid_prompt_luhn_60x20", h.screen(60, 20));
    h.send(code(KeyCode::Esc));
    // The same mistake typed as a search on My eSIMs.
    h.send_and_settle(key('3')).await;
    h.type_search(typed);
    for (width, height) in [(80, 24), (60, 20)] {
        let screen = h.screen(width, height);
        let said: Vec<&str> = screen.lines().map(|l| l.trim_matches(['"', ' '])).collect();
        let said = said.join(" ");
        assert!(said.contains(&why), "{width}×{height}:\n{screen}");
    }
    h.send(key('m'));
    let text = h.app.flash_message().unwrap().text.clone();
    let screen = h.screen(60, 20);
    let bottom: Vec<&str> = screen.lines().rev().take(2).collect();
    let said: String = bottom
        .iter()
        .rev()
        .map(|l| l.trim_matches(['"', ' ']))
        .collect::<Vec<_>>()
        .join(" ");
    assert!(said.contains(&text), "{text:?} in {bottom:?}");
}
