//! Top-ups and purchases in the dashboard, against the sandbox: money moves exactly once, only
//! for what the API offered; refusals are reported and not retried; a lost answer is looked up.

use crate::common::*;
use crossterm::event::KeyCode;
use esimdash_api::Delivery;
use esimdash_api::model::{EsimQuery, OrderRequest};
use esimdash_domain::iccid::Iccid;
use esimdash_domain::purchase::Purchase;
use esimdash_tui::app::Overlay;
use esimdash_tui::forms::purchase::{Lookup, PurchaseForm, Stage};
use esimdash_tui::msg::Request;
use rust_decimal::Decimal;
use std::time::Duration;

fn form(h: &Harness) -> &PurchaseForm {
    match h.app.overlay() {
        Some(Overlay::Purchase(f)) => f,
        other => panic!("no purchase form: {other:?}"),
    }
}

fn is_topup(r: &Request) -> bool {
    matches!(r, Request::Pay(p) if matches!(p.spend.what, Purchase::Topup { .. }))
}

fn is_order(r: &Request) -> bool {
    matches!(r, Request::Pay(p) if matches!(p.spend.what, Purchase::Order))
}

/// Harness on My eSIMs with the form open for the first eSIM that can be topped up.
async fn topup_form(h: &mut Harness) -> String {
    h.send_and_settle(key('3')).await;
    let iccid = h.app.selected_esim().unwrap().raw_order_json.iccid.to_string();
    h.send(key('t'));
    insta::assert_snapshot!("purchase_loading", h.screen(100, 30));
    h.settle().await;
    iccid
}

#[tokio::test]
async fn a_top_up_offers_only_the_api_plans_debits_once_and_enter_hammered_sends_one() {
    let mut h = Harness::acme().await;
    let iccid = topup_form(&mut h).await;
    let offered = h.api().topup_plans(&Iccid::parse(&iccid).unwrap()).await.unwrap();
    let shown: Vec<_> = form(&h).plans().iter().map(|p| p.slug.clone()).collect();
    assert_eq!(
        shown,
        offered.iter().map(|p| p.slug.clone()).collect::<Vec<_>>(),
        "exactly the offered plans"
    );
    assert_eq!(*form(&h).stage(), Stage::Choosing);
    h.send(key('j'));
    h.send(key('3'));
    insta::assert_snapshot!("purchase_choosing", h.screen(100, 30));
    h.send_and_settle(code(KeyCode::Enter)).await;
    assert!(matches!(form(&h).stage(), Stage::Confirming { .. }));
    insta::assert_snapshot!("purchase_confirming", h.screen(100, 30));
    let plan = offered[1].clone();
    let total = plan.price.unwrap() * Decimal::from(3);
    let before = h.api().balance().await.unwrap();
    for _ in 0..5 {
        h.send(code(KeyCode::Enter));
    }
    assert!(matches!(form(&h).stage(), Stage::Sending { .. }));
    insta::assert_snapshot!("purchase_sending", h.screen(100, 30));
    h.send_and_settle(code(KeyCode::Enter)).await;
    assert_eq!(h.count(is_topup), 1, "six Enters, one request");
    let Stage::Done {
        order,
        balance,
        delivery: Delivery::Answered,
        charged_other: None,
    } = form(&h).stage()
    else {
        panic!("{:?}", form(&h).stage())
    };
    assert_eq!(order.total_sell_price, Some(total));
    assert_eq!(*balance, Some(before - total));
    insta::assert_snapshot!(
        "purchase_done",
        h.screen(100, 30)
            .replace(order.record.provider_order_no.as_str(), "B-NEW")
    );
    assert_eq!(
        h.api().balance().await.unwrap(),
        before - total,
        "debited exactly once, by totalSellPrice"
    );
    let newest = h.api().orders(&Default::default()).await.unwrap().orders.remove(0);
    assert_eq!(
        (newest.record.slug.as_str(), newest.iccid.as_str()),
        (plan.slug.as_str(), iccid.as_str())
    );
    assert_eq!(
        h.app.profile().as_ref().unwrap().balance_usd,
        Some(before - total),
        "the header shows it"
    );
    // Closing the result: more Enters send nothing.
    h.send(code(KeyCode::Enter));
    h.send_and_settle(code(KeyCode::Enter)).await;
    assert_eq!(h.count(is_topup), 1);
}

/// The catalog's first plan matching `search`, bought once from its form: the plan.
async fn buy_from_catalog(h: &mut Harness, search: &str) -> esimdash_api::model::Plan {
    h.type_search(search);
    let plan = h.app.catalog().selected().unwrap().clone();
    h.send(key('b'));
    h.send_and_settle(code(KeyCode::Enter)).await;
    h.send(code(KeyCode::Enter));
    h.send_and_settle(code(KeyCode::Enter)).await;
    plan
}

#[tokio::test]
async fn a_purchase_from_the_catalog_debits_once_and_its_esim_appears_when_allocated() {
    let mut h = Harness::acme().await;
    let esims_before = h.api().esims(&EsimQuery::default()).await.unwrap().total;
    let plan = buy_from_catalog(&mut h, "japan").await;
    assert_eq!(h.count(is_order), 1);
    assert!(matches!(form(&h).stage(), Stage::Done { .. }));
    assert_eq!(
        h.api().balance().await.unwrap(),
        Decimal::new(25000, 2) - plan.price.unwrap()
    );
    // The sandbox gives a new order its profile after two seconds.
    tokio::time::sleep(Duration::from_millis(2200)).await;
    assert_eq!(
        h.api().esims(&EsimQuery::default()).await.unwrap().total,
        esims_before + 1
    );
}

#[tokio::test]
async fn a_short_balance_is_caught_before_sending_and_a_402_is_reported_not_retried() {
    let mut h = Harness::acme().await;
    h.type_search("global 20gb");
    h.send(key('b'));
    h.send(key('0'));
    h.send_and_settle(code(KeyCode::Enter)).await;
    h.send_and_settle(code(KeyCode::Enter)).await;
    assert_eq!(h.count(is_order), 0, "short by far: nothing sent");
    let screen = h.screen(100, 30);
    assert!(screen.contains("short of the"), "{screen}");
    insta::assert_snapshot!("purchase_confirming_short", screen);

    // The dashboard believes 250.00, but another session spends most of it meanwhile.
    h.send(code(KeyCode::Esc));
    h.send(key('1'));
    h.send_and_settle(code(KeyCode::Enter)).await;
    let price = form(&h).unit_price().unwrap();
    let spent = another_session_buys_a_global_plan(&h).await;
    assert!(spent.unwrap() < price, "the test leaves less than the price");
    h.send_and_settle(code(KeyCode::Enter)).await;
    assert_eq!(h.count(is_order), 1, "sent once, refused, not retried");
    let Stage::Failed(message) = form(&h).stage() else {
        panic!("{:?}", form(&h).stage())
    };
    assert!(message.starts_with("Insufficient balance"), "{message}");
    assert_eq!(
        h.app.profile().as_ref().unwrap().balance_usd,
        spent,
        "after a 402 the header reads the balance again"
    );
    insta::assert_snapshot!("purchase_failed", h.screen(100, 30));
}

/// Another session of Acme's (the test's own client) buys one 20 GB global plan behind the
/// dashboard's back; the balance it leaves.
async fn another_session_buys_a_global_plan(h: &Harness) -> Option<Decimal> {
    let order = OrderRequest {
        slug: "gl-20gb-30d".into(),
        qty: 1,
    };
    h.api().place_order(&order).await.unwrap().balance_usd
}

/// Where the look-up of a payment whose answer was lost stands; fails with the stage when the
/// form is not waiting on such a payment.
fn lost_answer_lookup(h: &Harness) -> &Lookup {
    let Stage::Unknown { lookup, .. } = form(h).stage() else {
        panic!("{:?}", form(h).stage())
    };
    lookup
}

/// Presses Enter on the confirmation while the sandbox answers after the client has given up
/// (the server still carries the request out), then makes the sandbox quick again.
async fn pay_with_the_answer_lost(h: &mut Harness) {
    h.sandbox.set_latency(Duration::from_millis(1500));
    h.send(code(KeyCode::Enter));
    h.step().await;
    h.sandbox.set_latency(Duration::ZERO);
}

#[tokio::test]
async fn a_lost_answer_is_not_resent_and_the_placed_top_up_is_found() {
    let mut h = Harness::with_timeout("ak_demo_acme", "sk_demo_acme", Duration::from_millis(700)).await;
    let iccid = topup_form(&mut h).await;
    h.send_and_settle(code(KeyCode::Enter)).await;
    // The answer to the payment will come after the client has given up.
    pay_with_the_answer_lost(&mut h).await;
    assert!(
        matches!(lost_answer_lookup(&h), Lookup::Checking),
        "{:?}",
        form(&h).stage()
    );
    insta::assert_snapshot!("purchase_unknown_checking", h.screen(100, 30));
    for _ in 0..3 {
        h.send(code(KeyCode::Enter));
    }
    h.settle().await;
    assert_eq!(h.count(is_topup), 1, "never sent again");
    assert_eq!(h.count(|r| matches!(r, Request::LookUpPayment { .. })), 1);
    let Lookup::Found(order) = lost_answer_lookup(&h) else {
        panic!("{:?}", form(&h).stage())
    };
    assert_eq!(order.iccid, iccid);
    insta::assert_snapshot!(
        "purchase_unknown_found",
        h.screen(100, 30)
            .replace(order.record.provider_order_no.as_str(), "B-NEW")
    );
    let topups = h.api().recent_orders_for(&order.record.slug, None).await.unwrap();
    assert_eq!(
        topups.iter().filter(|o| o.iccid == iccid).count(),
        1,
        "placed exactly once"
    );
}

#[tokio::test]
async fn a_lost_answer_to_a_refused_top_up_is_reported_as_most_likely_not_placed() {
    let mut h = Harness::with_timeout("ak_demo_acme", "sk_demo_acme", Duration::from_millis(700)).await;
    topup_form(&mut h).await;
    // Another session will leave 104.50; pick a total the dashboard (which believes 250.00) lets
    // through but the server must refuse.
    let spend = h.api().plan("gl-20gb-30d").await.unwrap().price.unwrap();
    let left = Decimal::new(25000, 2) - spend;
    let (cursor, qty) = (0..form(&h).plans().len())
        .flat_map(|c| (1..=10u32).map(move |q| (c, q)))
        .find(|&(c, q)| {
            let total = form(&h).plans()[c].price.unwrap() * Decimal::from(q);
            total > left && total <= Decimal::new(25000, 2)
        })
        .expect("a plan and quantity between what is left and what the dashboard believes");
    for _ in 0..cursor {
        h.send(key('j'));
    }
    h.send(key(if qty == 10 { '0' } else { char::from(b'0' + qty as u8) }));
    h.send_and_settle(code(KeyCode::Enter)).await;
    // The server will refuse (too little left), but its answer will be lost.
    let spent = another_session_buys_a_global_plan(&h).await;
    assert_eq!(spent, Some(left));
    pay_with_the_answer_lost(&mut h).await;
    h.settle().await;
    assert_eq!(h.count(is_topup), 1);
    assert!(
        matches!(lost_answer_lookup(&h), Lookup::NotFound),
        "{:?}",
        form(&h).stage()
    );
    insta::assert_snapshot!("purchase_unknown_not_found", h.screen(100, 30));
}

#[tokio::test]
async fn nothing_is_offered_for_a_cancelled_esim_and_a_typed_iccid_is_checked() {
    let mut h = Harness::acme().await;
    h.send(key('3'));
    h.send(key('f'));
    // all, active, then the statuses in docs/api-contract.md order: cancel is the tenth.
    for _ in 0..9 {
        h.send(key('j'));
    }
    h.send_and_settle(code(KeyCode::Enter)).await;
    assert_eq!(h.app.esims().status().query().as_deref(), Some("cancel"));
    // The newest cancelled eSIM's ICCID was reissued (its current profile can be topped up):
    // the next one's was not.
    h.send_and_settle(key('j')).await;
    h.send_and_settle(key('t')).await;
    let Stage::Empty(why) = form(&h).stage() else {
        panic!("{:?}", form(&h).stage())
    };
    assert!(why.contains("it was cancelled"), "{why}");
    insta::assert_snapshot!("purchase_empty", h.screen(100, 30));
    h.send(code(KeyCode::Esc));

    // From any tab, with a typed ICCID: checked before anything is asked.
    h.send(key('4'));
    h.send(key('t'));
    h.keys("8944 1000 0000 0208 0712");
    h.send(code(KeyCode::Enter));
    let screen = h.screen(100, 30);
    assert!(screen.contains("Luhn"), "{screen}");
    h.send(Msg::Key(crossterm::event::KeyEvent::new(
        KeyCode::Char('u'),
        crossterm::event::KeyModifiers::CONTROL,
    )));
    // A valid ICCID of another reseller's: the API says it is not ours.
    let payload = "894420000000000000";
    let other = format!("{payload}{}", esimdash_domain::iccid::luhn_check_digit(payload));
    h.keys(&other);
    h.send_and_settle(code(KeyCode::Enter)).await;
    let Stage::Failed(message) = form(&h).stage() else {
        panic!("{:?}", form(&h).stage())
    };
    assert!(message.contains("not in your account"), "{message}");
    assert_eq!(h.count(is_topup), 0);
}

use esimdash_tui::msg::Msg;

/// `t` on an eSIM deleted from the phone (its status may still say in use): the form says why
/// and that a new eSIM of the plan is needed, offers nothing, and no top-up is ever asked for.
#[tokio::test]
async fn no_top_up_is_offered_for_an_esim_deleted_from_the_phone() {
    let mut h = Harness::acme().await;
    let mut deleted = None;
    for page in 1..=10 {
        let query = EsimQuery {
            page: Some(page),
            page_size: Some(100),
            ..EsimQuery::default()
        };
        let found = h
            .api()
            .esims(&query)
            .await
            .unwrap()
            .esims
            .into_iter()
            .find(|e| e.facts().classify() == esimdash_domain::esim_state::Class::Deleted);
        if let Some(found) = found {
            deleted = Some(found.raw_order_json.iccid.to_string());
            break;
        }
    }
    let iccid = deleted.expect("the demo has an eSIM deleted from a phone");
    h.send(key('4'));
    h.send(key('t'));
    h.keys(&iccid);
    h.send_and_settle(code(KeyCode::Enter)).await;
    let Stage::Empty(why) = form(&h).stage() else {
        panic!("{:?}", form(&h).stage())
    };
    assert!(
        why.contains("deleted from the phone") && why.contains("new eSIM"),
        "{why}"
    );
    for _ in 0..3 {
        h.send(code(KeyCode::Enter));
    }
    h.settle().await;
    assert_eq!(h.count(is_topup), 0, "nothing was paid");
}

/// The offered plans' check gets no answer in time: the form says so in place, and that nothing
/// was topped up; no payment is asked for.
#[tokio::test]
async fn a_top_up_check_that_times_out_says_nothing_was_topped_up() {
    let mut h = Harness::acme_on('3').await;
    h.send(key('t'));
    assert!(h.pending().iter().any(|(_, r)| matches!(r, Request::TopupPlans { .. })));
    h.fail_pending(esimdash_api::ApiError::Timeout {
        endpoint: esimdash_api::Endpoint::new("GET", "/portal/plans"),
        after: Duration::from_secs(30),
        outcome_unknown: false,
    });
    let Stage::Failed(message) = form(&h).stage() else {
        panic!("{:?}", form(&h).stage());
    };
    assert!(
        message.contains("no answer from the API within 30 s") && message.ends_with("; nothing was topped up."),
        "{message}"
    );
    let screen = h.screen(100, 30);
    assert!(screen.contains("within 30 s; nothing was topped"), "{screen}");
    assert_eq!(h.count(is_topup), 0);
}

/// Keys rebound in the config file are the keys the form names: `accept` on the choice,
/// `pay` on the confirmation, `close` on the choice and on the result.
#[tokio::test]
async fn the_form_names_the_keys_in_force_after_pay_close_and_accept_are_rebound() {
    use crossterm::event::{KeyEvent, KeyModifiers};
    use esimdash_tui::keymap::{Keymap, Rebinding};
    let ctrl = |c| esimdash_tui::msg::Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL));
    let rebind = |action: &str, key: &str| Rebinding {
        action: action.into(),
        keys: vec![key.into()],
        line: 1,
    };
    let keymap = Keymap::new(&[
        rebind("pay", "ctrl-p"),
        rebind("close", "ctrl-g"),
        rebind("accept", "ctrl-o"),
    ])
    .unwrap();
    let mut h = Harness::acme().await;
    let app = std::mem::replace(&mut h.app, esimdash_tui::app::App::new(false));
    h.app = app.with_keymap(keymap);
    h.send_and_settle(key('3')).await;
    h.send_and_settle(key('t')).await;
    let choosing = h.screen(100, 30);
    assert!(choosing.contains("Ctrl-o: review · Ctrl-g: cancel"), "{choosing}");
    assert!(!choosing.contains("Enter: review"), "{choosing}");
    h.send(ctrl('o'));
    h.settle().await;
    assert!(matches!(form(&h).stage(), Stage::Confirming { .. }));
    let confirming = h.screen(100, 30);
    assert!(
        confirming.contains("Ctrl-p: pay") && confirming.contains("Esc: back"),
        "{confirming}"
    );
    h.send(ctrl('p'));
    h.settle().await;
    let done = h.screen(100, 30);
    assert!(
        done.contains("Placed: order") && done.contains("Ctrl-g: close"),
        "{done}"
    );
    h.send(ctrl('g'));
    assert!(h.app.overlay().is_none(), "the rebound close key closed it");
}

/// `q` closes the top-up window while choosing and on the confirmation (no text is typed
/// there); nothing is sent.
#[tokio::test]
async fn q_closes_the_purchase_window_where_no_text_is_typed() {
    let mut h = Harness::acme_on('3').await;
    for enters in [0, 1] {
        h.send_and_settle(key('t')).await;
        for _ in 0..enters {
            h.send_and_settle(code(KeyCode::Enter)).await;
        }
        assert!(matches!(h.app.overlay(), Some(Overlay::Purchase(_))), "open");
        h.send(key('q'));
        assert!(h.app.overlay().is_none(), "q closed it after {enters} Enter");
    }
    assert_eq!(h.count(Request::writes), 0, "nothing was paid");
}

/// Right after buying, the new order's detail says its eSIM is not allocated yet and `e` says
/// so (no "being looked for" that never ends); once allocated, `r` shows the order as it is now,
/// and `e` goes to its eSIM, reading the list from the top for it.
#[tokio::test]
async fn a_new_orders_esim_is_told_pending_then_found_and_gone_to() {
    let mut h = Harness::acme().await;
    buy_from_catalog(&mut h, "japan").await;
    let Stage::Done { order, .. } = form(&h).stage() else {
        panic!("{:?}", form(&h).stage())
    };
    let number = order.record.provider_order_no.to_string();
    h.send(code(KeyCode::Esc));
    h.send_and_settle(key('2')).await;
    assert_eq!(
        h.app
            .orders()
            .list()
            .selected()
            .map(|o| o.record.provider_order_no.to_string()),
        Some(number.clone()),
        "the new order is first"
    );
    h.send_and_settle(code(KeyCode::Enter)).await;
    let screen = h.screen(100, 30);
    assert!(screen.contains("not allocated yet"), "{screen}");
    h.send(key('e'));
    let screen = h.screen(100, 30);
    assert!(screen.contains("pending"), "{screen}");

    // The sandbox gives a new order its profile after two seconds.
    tokio::time::sleep(Duration::from_millis(2200)).await;
    h.send_and_settle(key('r')).await;
    h.settle().await;
    let screen = h.screen(100, 30);
    assert!(!screen.contains("not allocated yet"), "{screen}");
    h.send(key('e'));
    for _ in 0..20 {
        h.settle().await;
        if h.app.selected_esim().is_some() {
            break;
        }
    }
    let selected = h.app.selected_esim().map(|e| e.record.provider_order_no.to_string());
    assert_eq!(selected, Some(number), "{}", h.screen(100, 30));
}
