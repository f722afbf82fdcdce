//! One story in the support paths: a search row opens the profile it shows; the keys that hand a
//! code to a customer obey the pane's verdict; `b` works wherever the screen offers a new eSIM;
//! `Esc` goes back to where the agent was; and a team seat is known before a form opens.

use crate::common::*;
use crossterm::event::KeyCode;
use esimdash_domain::esim_state::Class;
use esimdash_gateway::agents::Role;
use esimdash_tui::app::{Mode, Overlay, Tone};
use rust_decimal::Decimal;

/// Searched by its ICCID, a reissued eSIM's earlier (cancelled) profile is a row of its own: the
/// pane shows that profile, never the current one's state or code, and `t` there says the top-up
/// goes to the current profile.
#[tokio::test]
async fn a_search_row_of_an_earlier_profile_opens_that_profile() {
    let mut h = Harness::acme_on('3').await;
    let current = h.app.selected_esim().unwrap().clone();
    let iccid = current.raw_order_json.iccid.to_string();
    h.search(&iccid).await;
    assert_eq!(h.app.esims().result_count(), 2, "a row per profile");
    let mut earlier = None;
    for _ in 0..2 {
        let e = h.app.selected_esim().expect("the row's own record").clone();
        if e.raw_order_json.esim_tran_no != current.raw_order_json.esim_tran_no {
            earlier = Some(e);
            break;
        }
        h.send_and_settle(key('j')).await;
    }
    let earlier = earlier.expect("the earlier profile's row");
    assert_eq!(earlier.facts().classify(), Class::Cancelled);
    let screen = h.screen(120, 60);
    assert!(screen.contains("● cancelled"), "{screen}");
    assert!(
        !screen.contains("● ready to install"),
        "the pane is the row's: {screen}"
    );
    assert!(screen.contains("An earlier profile of this ICCID"), "{screen}");
    h.send_and_settle(key('t')).await;
    match h.app.overlay() {
        Some(Overlay::Purchase(form)) => assert!(
            form.unsure().is_some_and(|u| u.contains("current profile")),
            "{:?}",
            form.unsure()
        ),
        other => panic!("the top-up window, got {other:?}"),
    }
}

/// The status line at 200 columns, which offers none of `keys`.
fn offers_none(h: &Harness, keys: &[&str]) -> String {
    let screen = h.screen(200, 40);
    let bottom = screen.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default();
    for offered in keys {
        assert!(!bottom.contains(offered), "{offered} offered: {bottom}");
    }
    bottom.to_string()
}

/// Esc from either search row of a reissued ICCID (its current profile, its earlier one) lands
/// on that profile's own row of the list, never on the other's (they share the ICCID).
#[tokio::test]
async fn esc_from_a_profiles_search_row_lands_on_that_profile() {
    let mut h = Harness::acme_on('3').await;
    let iccid = h.app.selected_esim().unwrap().raw_order_json.iccid.to_string();
    for row in 0..2 {
        h.search(&iccid).await;
        assert_eq!(h.app.esims().result_count(), 2, "a row per profile");
        for _ in 0..row {
            h.send_and_settle(key('j')).await;
        }
        let chosen = h.app.selected_esim().expect("the row's own record").clone();
        h.send_and_settle(code(KeyCode::Esc)).await;
        let landed = h.app.selected_esim().expect("a row selected").clone();
        assert_eq!(
            (landed.raw_order_json.esim_tran_no, landed.record.provider_order_no),
            (chosen.raw_order_json.esim_tran_no, chosen.record.provider_order_no),
            "search row {row}: the list's row of the same profile"
        );
    }
}

/// On a deleted eSIM, the status line offers no code and no top-up, and `Y`, `l`, `a`, `i`
/// and `w` refuse with the pane's words (nothing copied or written), as `l` always did.
#[tokio::test]
async fn the_keys_that_hand_a_code_over_obey_the_verdict() {
    let mut h = Harness::acme_on('3').await;
    h.down_to(Class::Deleted).await;
    // The status line does not offer them, nor a top-up that cannot add data.
    let bottom = offers_none(&h, &["copy code", "top up"]);
    assert!(bottom.contains("copy ICCID"), "{bottom}");
    for k in ['Y', 'l', 'a', 'i', 'w'] {
        let effects = h.send(key(k));
        assert!(copies(&effects).is_empty(), "{k}: nothing copied");
        assert!(
            !effects
                .iter()
                .any(|e| matches!(e, esimdash_tui::msg::Effect::Send { .. })),
            "{k}: nothing written"
        );
        let flash = h.app.flash_message().expect("said");
        assert_eq!(flash.tone, Tone::Error, "{k}");
        assert!(flash.text.contains("deleted from the phone"), "{k}: {}", flash.text);
    }
}

/// "Cannot be topped up … a new eSIM": `b` there buys a new eSIM of the same plan.
#[tokio::test]
async fn b_in_the_window_that_says_a_new_esim_is_needed_buys_one() {
    let mut h = Harness::acme_on('3').await;
    h.down_to(Class::Deleted).await;
    let slug = h.app.selected_esim().unwrap().record.slug.clone();
    h.send_and_settle(key('t')).await;
    let screen = h.screen(100, 30);
    assert!(screen.contains("b: buy a new eSIM of this plan"), "{screen}");
    h.send_and_settle(key('b')).await;
    match h.app.overlay() {
        Some(Overlay::Purchase(form)) => assert_eq!(form.plan().map(|p| p.slug.clone()), Some(slug)),
        other => panic!("b buys the same plan, got {other:?}"),
    }
}

/// `z` from the pane shown alone (a narrow terminal), then `Esc`: back to that pane.
#[tokio::test]
async fn esc_from_the_zoom_goes_back_to_the_pane_it_came_from() {
    let mut h = Harness::acme_on('3').await;
    h.send_and_settle(code(KeyCode::Enter)).await;
    assert!(matches!(h.app.mode(), Mode::Detail), "{:?}", h.app.mode());
    h.send(key('z'));
    assert!(matches!(h.app.mode(), Mode::Zoom { .. }));
    h.send(code(KeyCode::Esc));
    assert!(matches!(h.app.mode(), Mode::Detail), "{:?}", h.app.mode());
    h.send(key('z'));
    h.send(key('z'));
    assert!(matches!(h.app.mode(), Mode::Detail), "z again: {:?}", h.app.mode());
}

/// A viewer's seat at a team gateway: `t` says so before any window opens, and the header shows
/// no money to spend (a cap set on a viewer means nothing).
#[tokio::test]
async fn a_viewers_seat_is_told_before_a_form_opens() {
    let (mut h, _gateway, _dir) = Harness::at_gateway(Role::VIEWER, Some(Decimal::TEN)).await;
    // The status line offers a viewer no payment, on Catalog and on My eSIMs.
    for tab in ['1', '3'] {
        h.send_and_settle(key(tab)).await;
        offers_none(&h, &["buy", "top up"]);
    }
    h.send_and_settle(key('t')).await;
    assert!(h.app.overlay().is_none(), "no window: {:?}", h.app.overlay());
    let flash = h.app.flash_message().expect("said");
    assert!(flash.text.contains("not for this seat"), "{}", flash.text);
    for (width, height) in [(80, 24), (120, 40)] {
        let screen = h.screen(width, height);
        let header = screen.lines().next().unwrap_or_default();
        assert!(header.contains("ana"), "{header}");
        assert!(!header.contains("10.00"), "a viewer has no money to spend: {header}");
    }
}

/// A support seat with less left of its cap than a top-up costs is told at review, and the
/// payment is not sent (the gateway stays the final guard).
#[tokio::test]
async fn a_capped_seat_is_told_at_review_when_the_price_passes_what_is_left() {
    let (mut h, _gateway, _dir) = Harness::at_gateway(Role::SUPPORT, Some(Decimal::ONE)).await;
    h.send_and_settle(key('3')).await;
    h.down_to(Class::InUse).await;
    h.send_and_settle(key('t')).await;
    h.send_and_settle(code(KeyCode::Enter)).await;
    let screen = h.screen(100, 30);
    assert!(screen.contains("left of this seat's daily cap today"), "{screen}");
    offers_none(&h, &["pay"]);
    let sent = h.sent.len();
    h.send_and_settle(code(KeyCode::Enter)).await;
    assert!(
        !h.sent[sent..]
            .iter()
            .any(|r| matches!(r, esimdash_tui::msg::Request::Pay(_))),
        "nothing paid"
    );
}
