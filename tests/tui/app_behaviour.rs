//! The app driven by messages: navigation, filter, paging, stale answers, 401, 429, network
//! errors, the profile form. Hand-made answers where the point is timing or failure.

use crate::common::*;
use crossterm::event::KeyCode;
use esimdash_api::model::{OrderPage, Profile};
use esimdash_api::{ApiError, Endpoint};
use esimdash_tui::app::{App, Halt, Overlay, Remote, Tab};
use esimdash_tui::msg::{Answer, JobId, Msg, Payload, Request};
use std::time::{Duration, Instant};

const EP: Endpoint = Endpoint::new("GET", "/reseller/orders");

/// An answer: its id and result (the app knows which request the id is; it is named here so
/// that each call reads as what it answers).
fn answer(id: JobId, _request: Request, result: Result<Payload, ApiError>) -> Msg {
    Msg::Answer(Box::new(Answer { id, result }))
}

fn profile() -> Profile {
    serde_json::from_str(r#"{"name":"Ada","companyName":"Acme Mobile","balanceUsd":"250.00"}"#).unwrap()
}

fn orders(page: u64, count: usize, total: u64) -> OrderPage {
    let orders: Vec<_> = (0..count)
        .map(|i| serde_json::json!({"providerOrderNo": format!("B{page}-{i}"), "status": "in_use", "totalSellPrice": "1.00"}))
        .collect();
    serde_json::from_value(serde_json::json!({"page": page, "pageSize": 50, "total": total, "orders": orders})).unwrap()
}

/// An app on the Orders tab with page 1 of 120 orders loaded.
fn on_orders(now: Instant) -> App {
    let mut app = App::new(false);
    app.start();
    let effects = app.update(key('2'), now);
    let (id, request) = sends(&effects)
        .into_iter()
        .find(|(_, r)| matches!(r, Request::Orders(_)))
        .unwrap();
    app.update(answer(id, request, Ok(Payload::Orders(orders(1, 50, 120)))), now);
    app
}

/// An app started now, and the requests it sends first.
fn started() -> (Instant, App, Vec<(JobId, Request)>) {
    let now = Instant::now();
    let mut app = App::new(false);
    let first = sends(&app.start());
    (now, app, first)
}

#[test]
fn start_asks_for_the_profile_the_money_and_the_catalog_and_drops_a_stale_answer() {
    let (now, mut app, first) = started();
    let kinds: Vec<_> = first.iter().map(|(_, r)| r.clone()).collect();
    assert_eq!(kinds, vec![Request::Profile, Request::Money, Request::Plans]);
    let profile_id = first[0].0;
    // An answer with an id nobody waits for changes nothing.
    app.update(
        answer(profile_id + 100, Request::Profile, Ok(Payload::Profile(profile()))),
        now,
    );
    assert!(app.profile().is_none());
    app.update(
        answer(profile_id, Request::Profile, Ok(Payload::Profile(profile()))),
        now,
    );
    assert_eq!(app.profile().as_ref().unwrap().display_name(), "Acme Mobile");
    // Idle: no timer runs once nothing loads.
    let (money_id, plans_id) = (first[1].0, first[2].0);
    app.update(answer(plans_id, Request::Plans, Ok(Payload::Plans(vec![]))), now);
    let nothing_sold = esimdash_ledger::overview::Overview::of(
        &esimdash_ledger::Ledger::in_memory(),
        chrono::Utc::now(),
        &chrono::Utc,
    );
    app.update(
        answer(money_id, Request::Money, Ok(Payload::Money(Box::new(nothing_sold)))),
        now,
    );
    assert_eq!(app.next_wake(now), None, "an idle dashboard asks for no tick");
}

#[test]
fn tabs_switch_by_number_tab_key_and_mouse() {
    let now = Instant::now();
    let mut app = App::new(false);
    app.start();
    app.update(key('3'), now);
    assert_eq!(app.tab(), Tab::Esims);
    app.update(code(KeyCode::Tab), now);
    assert_eq!(app.tab(), Tab::Profile);
    app.update(code(KeyCode::BackTab), now);
    app.update(code(KeyCode::BackTab), now);
    assert_eq!(app.tab(), Tab::Orders);
    let (_, start, _) = Tab::bar_positions(&app.tab_labels())[0];
    let click = crossterm::event::MouseEvent {
        kind: crossterm::event::MouseEventKind::Down(crossterm::event::MouseButton::Left),
        column: start + 1,
        row: 1,
        modifiers: crossterm::event::KeyModifiers::NONE,
    };
    app.update(Msg::Mouse(click), now);
    assert_eq!(app.tab(), Tab::Catalog);
    let quit = app.update(key('q'), now);
    assert!(app.should_quit() && quit.contains(&esimdash_tui::msg::Effect::Quit));
}

#[test]
fn paging_fetches_ahead_and_drops_answers_for_an_old_query() {
    let now = Instant::now();
    let mut app = on_orders(now);
    assert_eq!(app.orders().list().total(), Some(120));
    // Down to ten rows before the end of page 1: page 2 is fetched before it is needed.
    let mut prefetch = Vec::new();
    for _ in 0..39 {
        prefetch.extend(sends(&app.update(key('j'), now)));
    }
    let (id2, req2) = prefetch.into_iter().next().expect("page 2 prefetched");
    assert!(matches!(&req2, Request::Orders(q) if q.page == Some(2)));
    // The query changes (status filter) before page 2 answers: that answer is stale.
    app.update(key('f'), now);
    app.update(key('j'), now);
    let effects = app.update(code(KeyCode::Enter), now);
    let (id_active, req_active) = sends(&effects).into_iter().next().expect("refetch for the new filter");
    assert!(matches!(&req_active, Request::Orders(q) if q.status.param() == Some("active") && q.page == Some(1)));
    app.update(answer(id2, req2, Ok(Payload::Orders(orders(2, 50, 120)))), now);
    assert!(
        app.orders().list().page_items().is_none(),
        "the old query's page 2 was dropped"
    );
    app.update(
        answer(id_active, req_active, Ok(Payload::Orders(orders(1, 30, 30)))),
        now,
    );
    assert_eq!(app.orders().list().total(), Some(30));
    app.update(code(KeyCode::End), now);
    assert_eq!(app.orders().list().cursor(), 29);
}

#[test]
fn the_search_waits_for_a_pause_in_typing() {
    let now = Instant::now();
    let mut app = on_orders(now);
    app.update(key('/'), now);
    for (i, c) in "fran".chars().enumerate() {
        let effects = app.update(key(c), now + Duration::from_millis(100 * i as u64));
        assert!(sends(&effects).is_empty(), "nothing is sent while typing");
    }
    let last_key = now + Duration::from_millis(300);
    let due = app.orders().search().due().expect("a search is due after the pause");
    assert_eq!(due, last_key + Duration::from_millis(350));
    assert!(
        app.next_wake(last_key).is_some_and(|w| w <= due),
        "a tick is asked for by then"
    );
    assert!(
        sends(&app.update(Msg::Tick, due - Duration::from_millis(1))).is_empty(),
        "not before the pause ends"
    );
    let effects = app.update(Msg::Tick, due);
    let sent = sends(&effects);
    assert_eq!(sent.len(), 1);
    assert!(matches!(&sent[0].1, Request::Orders(q) if q.q.as_deref() == Some("fran") && q.page == Some(1)));
}

#[test]
fn a_401_replaces_the_view_and_stops_every_request() {
    let (now, mut app, first) = started();
    let revoked = ApiError::Revoked { endpoint: EP };
    app.update(answer(first[0].0, first[0].1.clone(), Err(revoked)), now);
    assert!(matches!(app.halt(), Some(Halt::Unauthorized { revoked: true, .. })));
    for msg in [key('r'), key('2'), key('3'), code(KeyCode::Enter), Msg::Tick] {
        assert!(sends(&app.update(msg, now)).is_empty(), "nothing is sent after a 401");
    }
    // A late answer to the catalog request is dropped too.
    app.update(answer(first[2].0, first[2].1.clone(), Ok(Payload::Plans(vec![]))), now);
    assert!(app.catalog().plans().value().is_none(), "the late catalog was dropped");
    assert_eq!(app.next_wake(now), None);
    app.update(key('q'), now);
    assert!(app.should_quit());
}

#[test]
fn a_429_counts_down_then_resumes_by_itself() {
    let (now, mut app, first) = started();
    let limited = ApiError::RateLimited {
        endpoint: EP,
        retry_after: Duration::from_secs(3),
    };
    app.update(answer(first[2].0, first[2].1.clone(), Err(limited)), now);
    assert_eq!(app.rate_limited_until(), Some(now + Duration::from_secs(3)));
    assert!(
        sends(&app.update(key('r'), now)).is_empty(),
        "nothing goes out during the countdown"
    );
    let screen = render(&app, 80, 20, now + Duration::from_millis(500));
    assert!(screen.contains("retrying in 3 s"), "{screen}");
    let screen = render(&app, 80, 20, now + Duration::from_millis(1500));
    assert!(screen.contains("retrying in 2 s"), "the countdown moves: {screen}");
    let wake = app.next_wake(now).unwrap();
    assert!(wake <= now + Duration::from_secs(1), "ticks each second");
    let effects = app.update(Msg::Tick, now + Duration::from_secs(3));
    let resent: Vec<_> = sends(&effects).into_iter().map(|(_, r)| r).collect();
    assert!(
        resent.contains(&Request::Plans),
        "the catalog is asked again: {resent:?}"
    );
    assert_eq!(app.rate_limited_until(), None);
}

#[test]
fn a_network_error_waits_for_r_and_other_errors_fade() {
    let (now, mut app, first) = started();
    let down = ApiError::Network {
        endpoint: EP,
        host: "api.example:443".into(),
        detail: "connection refused".into(),
        outcome_unknown: false,
    };
    app.update(answer(first[2].0, first[2].1.clone(), Err(down)), now);
    assert!(matches!(app.halt(), Some(Halt::Offline { .. })));
    assert!(render(&app, 100, 20, now).contains("r to retry"));
    assert!(sends(&app.update(Msg::Tick, now)).is_empty());
    let retried: Vec<_> = sends(&app.update(key('r'), now)).into_iter().map(|(_, r)| r).collect();
    assert!(retried.contains(&Request::Plans), "{retried:?}");
    assert!(app.halt().is_none());

    let mut app = on_orders(now);
    let effects = app.update(code(KeyCode::PageDown), now);
    let (id, request) = sends(&effects).into_iter().next().unwrap();
    let refused = ApiError::Api {
        endpoint: EP,
        status: 500,
        message: "database on fire".into(),
    };
    app.update(answer(id, request, Err(refused)), now);
    let screen = render(&app, 120, 20, now);
    assert!(
        screen.contains("Could not load page 2: GET /reseller/orders: the API answered 500: database on fire"),
        "a failed page says why, in place:\n{screen}"
    );
    assert!(screen.contains("r to try again"), "{screen}");
    assert!(
        screen.contains("could not load (r)") && !screen.contains("loading…"),
        "{screen}"
    );
    assert!(
        sends(&app.update(Msg::Tick, now)).is_empty(),
        "a failed page is not asked again by itself"
    );
    let later = now + Duration::from_secs(60);
    app.update(Msg::Tick, later);
    assert!(
        render(&app, 120, 20, later).contains("Could not load page 2"),
        "a failure shown in place does not fade"
    );
    let retry = sends(&app.update(key('r'), later));
    assert!(
        retry
            .iter()
            .any(|(_, r)| matches!(r, Request::Orders(q) if q.page == Some(2))),
        "{retry:?}"
    );
}

#[tokio::test]
async fn the_catalog_filters_as_you_type_sorts_and_opens_a_plan_with_its_own_pricing() {
    let mut h = Harness::acme().await;
    assert_eq!(h.app.catalog().visible().len(), 366);
    h.send(key('/'));
    h.keys("germany");
    assert!(!h.app.catalog().visible().is_empty());
    assert!(
        h.app
            .catalog()
            .visible()
            .iter()
            .all(|&i| h.app.catalog().all()[i].location_code == "DE"),
        "country names match"
    );
    h.send(code(KeyCode::Enter));
    h.send(key('s'));
    let prices: Vec<_> = h
        .app
        .catalog()
        .visible()
        .iter()
        .map(|&i| h.app.catalog().all()[i].sell_price())
        .collect();
    assert!(prices.windows(2).all(|w| w[0] <= w[1]), "sorted by price");
    h.send(key('G'));
    h.send_and_settle(code(KeyCode::Enter)).await;
    assert!(matches!(h.sent.last(), Some(Request::Plan { slug }) if slug == "de-20gb-30d"));
    assert!(
        matches!(h.app.overlay(), Some(Overlay::PlanDetail { fetched: Remote::Loaded(p), .. }) if p.value.slug == "de-20gb-30d")
    );
    h.send(code(KeyCode::Esc));
    h.send(code(KeyCode::Esc));
    assert_eq!(h.app.catalog().visible().len(), 366, "Esc clears the filter");
}

/// The profile form opened on the Profile tab, its country field focused and emptied.
fn country_typed_over(h: &mut Harness) {
    h.send(key('4'));
    h.send(key('e'));
    h.send(code(KeyCode::Tab));
    h.send(Msg::Key(crossterm::event::KeyEvent::new(
        KeyCode::Char('u'),
        crossterm::event::KeyModifiers::CONTROL,
    )));
}

#[tokio::test]
async fn the_profile_form_validates_before_sending_and_sends_once() {
    let mut h = Harness::acme().await;
    country_typed_over(&mut h);
    h.keys("1x");
    h.send_and_settle(code(KeyCode::Enter)).await;
    assert!(
        !h.sent.iter().any(|r| matches!(r, Request::UpdateProfile(_))),
        "an invalid form is not sent"
    );
    h.send(code(KeyCode::Backspace));
    h.send(code(KeyCode::Backspace));
    h.keys("ie");
    h.send(code(KeyCode::Enter));
    h.send(code(KeyCode::Enter));
    h.send_and_settle(code(KeyCode::Enter)).await;
    let updates = h.sent.iter().filter(|r| matches!(r, Request::UpdateProfile(_))).count();
    assert_eq!(updates, 1, "Enter pressed three times sends one update");
    assert_eq!(
        h.app.profile().as_ref().unwrap().country,
        "IE",
        "the header and tab show the saved profile"
    );
    assert!(h.app.overlay().is_none());
}

#[tokio::test]
async fn a_revoked_key_leaves_nothing_loading_against_the_real_sandbox() {
    let mut h = Harness::new("ak_demo_revoked", "sk_demo_revoked").await;
    assert!(matches!(h.app.halt(), Some(Halt::Unauthorized { revoked: true, .. })));
    assert!(
        !h.app.is_loading(),
        "no spinner turns for requests that will never be answered"
    );
    assert_eq!(h.app.next_wake(h.now), None);
    h.keys("r234");
    h.settle().await;
    assert_eq!(
        h.sent,
        vec![Request::Profile],
        "the money and catalog requests queued behind the 401 were cancelled, and nothing sent after"
    );
    assert_eq!(h.cancelled, 2);
}

/// A 5 000-character plan name is cut with `…` in the catalog row and in the plan window, where
/// every other field stays in view and the name follows in full, wrapped.
#[test]
fn a_huge_plan_name_is_cut_with_an_ellipsis_and_still_readable_whole() {
    let now = Instant::now();
    let mut app = App::new(false);
    let plans = sends(&app.start())
        .into_iter()
        .find(|(_, r)| *r == Request::Plans)
        .unwrap();
    let name = format!("Huge{}End", "x".repeat(5000));
    let plan: esimdash_api::model::Plan = serde_json::from_value(serde_json::json!({
        "name": name, "slug": "huge-1gb", "packageCode": "HUGE", "locationCode": "FR",
        "volume": 1073741824, "duration": 7, "durationUnit": "DAY", "currencyCode": "USD",
        "pricing": { "sellPrice": "4.20", "costPrice": "3.00" }
    }))
    .unwrap();
    app.update(answer(plans.0, plans.1, Ok(Payload::Plans(vec![plan]))), now);
    let screen = render(&app, 100, 30, now);
    let row = screen.lines().find(|l| l.contains("Hugexxx")).expect(&screen);
    assert!(row.contains("x…") && row.contains("4.20"), "{row}");

    app.update(code(KeyCode::Enter), now);
    assert!(matches!(app.overlay(), Some(Overlay::PlanDetail { .. })));
    let screen = render(&app, 100, 30, now);
    for label in ["Slug", "Sell price", "Supplier price"] {
        assert!(screen.contains(label), "{label} in view:\n{screen}");
    }
    assert!(screen.contains("x…") && screen.contains("Plan in full:"), "{screen}");
    // On a screen tall enough, the name shows whole (wrapped), its end included.
    let tall = render(&app, 100, 150, now);
    let whole: String = tall.lines().flat_map(|l| l.chars().filter(|c| *c == 'x')).collect();
    assert!(whole.len() >= 5000 && tall.contains("End"), "{tall}");
}

/// A three-letter country typed in the profile form is refused with the rule, not cut to
/// another country's two letters ("AUT" is Austria, "AU" Australia); nothing is sent.
#[tokio::test]
async fn a_three_letter_country_is_refused_in_the_form_not_cut() {
    let mut h = Harness::acme_on('4').await;
    h.send(key('e'));
    h.send(code(KeyCode::Tab));
    for _ in 0..4 {
        h.send(code(KeyCode::Backspace));
    }
    h.keys("AUT");
    h.send_and_settle(code(KeyCode::Enter)).await;
    let screen = h.screen(120, 40);
    assert!(screen.contains("AUT") && screen.contains("Invalid country"), "{screen}");
    assert!(
        !h.sent.iter().any(|r| matches!(r, Request::UpdateProfile(_))),
        "nothing sent"
    );
}

/// A profile change refused while its form is open is said in the form; refused after the form
/// was closed (another window open meanwhile), it is said on the status line, never dropped.
#[tokio::test]
async fn a_profile_change_refused_is_said_in_its_form_or_else_on_the_status_line() {
    let refusal = || esimdash_api::ApiError::Api {
        endpoint: esimdash_api::PROFILE_UPDATE,
        status: 400,
        message: "Country not served".to_string(),
    };
    let mut h = Harness::acme().await;
    country_typed_over(&mut h);
    h.keys("ie");
    for _ in 0..3 {
        h.send(code(KeyCode::Enter));
    }
    assert_eq!(
        h.count(|r| matches!(r, Request::UpdateProfile(_))),
        0,
        "not answered yet"
    );
    h.fail_pending(refusal());
    assert!(
        matches!(h.app.overlay(), Some(Overlay::ProfileForm(form)) if form.server_error.as_deref() == Some("Country not served")),
        "said in the form"
    );
    assert!(h.app.flash_message().is_none(), "and nowhere else");
    h.send(code(KeyCode::Enter));
    h.send(code(KeyCode::Esc));
    h.send(key('?'));
    h.fail_pending(refusal());
    assert!(matches!(h.app.overlay(), Some(Overlay::Help { .. })));
    let said = h.app.flash_message().map(|f| f.text.clone()).unwrap_or_default();
    assert!(said.contains("Country not served"), "on the status line: {said:?}");
}
