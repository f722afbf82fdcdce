//! From an order to its eSIM: the order's detail names it, `t` there tops up that eSIM at once,
//! `e` shows it on My eSIMs; `/` on Orders with an ICCID lists that eSIM's orders.

use crate::common::*;
use crossterm::event::KeyCode;
use esimdash_api::model::EsimQuery;
use esimdash_tui::app::{Overlay, Tab};

#[tokio::test]
async fn an_orders_detail_names_its_esim_t_tops_it_up_and_e_shows_it() {
    let mut h = Harness::acme_on('2').await;
    // The newest order is still pending; the next one made an eSIM.
    h.send(key('j'));
    let order = h.app.orders().list().selected().unwrap().clone();
    let number = order.record.provider_order_no.to_string();
    let esims = h.api().esims(&EsimQuery::default()).await.unwrap().esims;
    let iccid = esims
        .iter()
        .find(|e| e.record.provider_order_no == number.as_str())
        .map(|e| e.raw_order_json.iccid.to_string())
        .expect("the order's eSIM is on the first page");
    h.send_and_settle(code(KeyCode::Enter)).await;
    let screen = h.screen(80, 24);
    assert!(screen.contains(&iccid), "the detail names the eSIM:\n{screen}");
    assert!(screen.contains("t top up") && screen.contains("e its eSIM"), "{screen}");

    h.send_and_settle(key('t')).await;
    match h.app.overlay() {
        Some(Overlay::Purchase(form)) => assert_eq!(form.iccid().map(|i| i.to_string()), Some(iccid.clone())),
        other => panic!("t on the order tops up its eSIM at once, got {other:?}"),
    }
    h.send(code(KeyCode::Esc));
    h.send_and_settle(code(KeyCode::Enter)).await;
    h.send_and_settle(key('e')).await;
    assert_eq!(h.app.tab(), Tab::Esims);
    let selected = h.app.selected_esim().map(|e| e.raw_order_json.iccid.to_string());
    assert_eq!(selected, Some(iccid), "e shows the order's eSIM on My eSIMs");
}

#[tokio::test]
async fn slash_on_orders_with_an_iccid_lists_that_esims_orders() {
    let mut h = Harness::acme().await;
    let esims = h.api().esims(&EsimQuery::default()).await.unwrap().esims;
    let esim = &esims[1];
    let iccid = esim.raw_order_json.iccid.to_string();
    h.send_and_settle(key('2')).await;
    h.search(&iccid).await;
    let shown = listed_order_numbers(&h.app);
    assert_eq!(
        shown,
        vec![esim.record.provider_order_no.to_string()],
        "only the order that made it"
    );
    assert!(h.screen(120, 40).contains(esim.record.provider_order_no.as_str()));
}

/// A reissued ICCID in the pane: the current profile says it is current and names the earlier
/// one; the earlier (cancelled) one says it is not the current one.
#[tokio::test]
async fn the_pane_says_which_profile_of_a_reissued_iccid_is_current() {
    let mut h = Harness::acme_on('3').await;
    let first = h.app.selected_esim().unwrap().clone();
    // Under its QR code: a taller terminal shows the whole pane.
    let screen = h.screen(120, 60);
    assert!(screen.contains("This ICCID was issued before"), "{screen}");
    let iccid = first.raw_order_json.iccid.to_string();
    loop {
        h.send_and_settle(key('j')).await;
        let e = h.app.selected_esim().unwrap();
        if e.raw_order_json.iccid == iccid.as_str() {
            break;
        }
    }
    let screen = h.screen(120, 40);
    assert!(screen.contains("An earlier profile of this ICCID"), "{screen}");
    assert!(
        screen.contains(first.raw_order_json.esim_tran_no.as_str()),
        "names the current: {screen}"
    );
}

/// A deleted eSIM cannot be installed again: the pane says `b` buys a new one of its plan, and
/// `b` opens the purchase of exactly that plan.
#[tokio::test]
async fn b_on_a_deleted_esim_buys_its_plan_again() {
    use esimdash_domain::esim_state::Class;
    let mut h = Harness::acme_on('3').await;
    h.down_to(Class::Deleted).await;
    let slug = h.app.selected_esim().unwrap().record.slug.clone();
    assert!(h.screen(120, 40).contains("b: buy a new eSIM of this plan"));
    h.send_and_settle(key('b')).await;
    match h.app.overlay() {
        Some(Overlay::Purchase(form)) => assert_eq!(form.plan().map(|p| p.slug.clone()), Some(slug)),
        other => panic!("b buys the same plan, got {other:?}"),
    }
}
