//! Finding an eSIM by ICCID at a real reseller's size: by the lookup, against a server without
//! it, and in a second session from the saved inventory index. Counted at the sandbox, with
//! the app driven as the runtime drives it (real tasks, the wall clock, the product's pacing).

use crate::common::*;
use crate::pages::{PAGE_SIZE, esims_page};
use crossterm::event::KeyCode;
use esimdash_api::model::EsimQuery;
use esimdash_api::{ClientOptions, Found};
use esimdash_sandbox::SandboxConfig;
use esimdash_tui::app::Remote;
use esimdash_tui::msg::Msg;
use std::time::{Duration, Instant};

/// A sandbox of `orders` without the lookup by ICCID, and a client, neither pacing: pages are
/// counted, not waited for.
fn without_lookup(orders: usize) -> (SandboxConfig, ClientOptions) {
    let config = SandboxConfig {
        orders,
        iccid_lookup: false,
        ..unpaced_sandbox()
    };
    (config, unpaced())
}

/// The dashboard on the eSIMs tab, its first page read, against a sandbox of `orders` without
/// the lookup (see `without_lookup`).
async fn on_esims_without_lookup(orders: usize) -> Live {
    let (config, fast) = without_lookup(orders);
    let mut live = Live::new(config, fast).await;
    live.send(key('3'));
    live.idle(Duration::from_secs(10)).await;
    live
}

/// The oldest eSIM's ICCID (the last item of the list), read with a client of our own.
async fn oldest_iccid(base_url: &str) -> String {
    let client = client_as(base_url, ACME, unpaced());
    let total = client.esims(&esims_page(1)).await.unwrap().total;
    let last = client.esims(&esims_page(total.div_ceil(PAGE_SIZE))).await.unwrap();
    last.esims.last().unwrap().raw_order_json.iccid.to_string()
}

/// Feeds the app until `done` holds or `limit` passes; the time it took.
async fn until(live: &mut Live, limit: Duration, done: impl Fn(&Live) -> bool) -> Duration {
    let started = Instant::now();
    while !done(live) && started.elapsed() < limit {
        live.idle(Duration::from_millis(20)).await;
    }
    started.elapsed()
}

fn selected_iccid(live: &Live) -> Option<String> {
    live.app.selected_esim().map(|e| e.raw_order_json.iccid.to_string())
}

#[tokio::test]
async fn an_iccid_from_the_oldest_page_and_its_qr_code_in_three_requests_within_a_second_at_100_000() {
    let config = SandboxConfig {
        orders: 100_000,
        rate_limit: 100_000,
        ..SandboxConfig::default()
    };
    // The product's own pacing: 120 requests a minute.
    let mut live = Live::new(config, ClientOptions::default()).await;
    live.send(key('3'));
    live.idle(Duration::from_secs(10)).await;
    let iccid = oldest_iccid(&live.sandbox.base_url()).await;

    let before = live.sandbox.requests_received();
    let started = Instant::now();
    live.send(key('/'));
    for c in iccid.chars() {
        live.send(key(c));
    }
    let code_shown = |live: &Live| {
        selected_iccid(live).as_deref() == Some(iccid.as_str())
            && live
                .app
                .esims()
                .selected_code(live.app.index())
                .and_then(Remote::value)
                .is_some_and(|c| c.is_ok())
    };
    until(&mut live, Duration::from_secs(10), code_shown).await;
    let took = started.elapsed();
    let requests = live.sandbox.requests_received() - before;
    let screen = render(&live.app, 120, 40, Instant::now());
    eprintln!("the oldest of 100 956 eSIMs with its QR code: {requests} requests, {took:?}");
    assert!(code_shown(&live), "the eSIM and its code are shown:\n{screen}");
    let scannable = live.app.selected_esim().map(|e| e.facts().classify())
        == Some(esimdash_domain::esim_state::Class::ReadyToInstall);
    assert!(
        screen.contains(&iccid) && (screen.contains("▀▀▀") || !scannable && screen.contains("QR code not drawn")),
        "its QR code is drawn, or said why not:\n{screen}"
    );
    // The index's background read goes on meanwhile, within its share: not what the find cost.
    let background = live.count(|r| matches!(r, esimdash_tui::msg::Request::EsimScan { .. })) as u64;
    assert!(
        requests - background.min(requests) <= 3,
        "{requests} requests, {background} of the index"
    );
    assert!(took <= Duration::from_secs(1), "took {took:?}");
    let lookups = live.count(|r| matches!(r, esimdash_tui::msg::Request::FindEsim { .. }));
    assert_eq!(lookups, 1, "the lookup is asked once, never cancelled and asked again");
}

#[tokio::test]
async fn a_server_without_the_lookup_never_shows_another_esim_and_a_second_session_needs_two_requests() {
    let (config, fast) = without_lookup(1_500);
    let mut first = Live::new(config.clone(), fast.clone()).await;
    first.send(key('3'));
    first.idle(Duration::from_secs(10)).await;
    let iccid = oldest_iccid(&first.sandbox.base_url()).await;
    first.send(key('/'));
    for c in iccid.chars() {
        first.send(key(c));
        // Whatever the lookup answered, no other eSIM is ever shown as the one asked for.
        if let Some(Found::Esim(e)) = first.app.esims().fresh().and_then(|f| f.record.value()) {
            assert_eq!(e.raw_order_json.iccid, first.app.esims().fresh().unwrap().iccid);
        }
    }
    let found = |live: &Live| selected_iccid(live).as_deref() == Some(iccid.as_str());
    until(&mut first, Duration::from_secs(20), found).await;
    assert!(found(&first), "found by reading the list");
    let shown = result_iccids(&first.app);
    assert_eq!(shown, vec![iccid.clone()], "the only result is the eSIM asked for");
    // The first session quits: what its index took in is in the file, as between two sessions.
    let loaded = first.quit_saving();

    // The saved index is read at start (a small file, before the list's first page is in);
    // that page, meeting eSIMs the index has, tells that nothing new is at the top.
    let mut second = Live::new(config, fast).await;
    second.saved_inventory(loaded);
    second.send(key('3'));
    second.idle(Duration::from_secs(10)).await;
    let index_reads = |live: &Live| live.count(|r| matches!(r, esimdash_tui::msg::Request::EsimScan { .. }));
    assert_eq!(
        index_reads(&second),
        0,
        "no read of the index at start: the list's first page told"
    );
    let before = second.sandbox.api_requests_received();
    let images_before = second.sandbox.requests_received() - before;
    second.send(key('/'));
    for c in iccid.chars() {
        second.send(key(c));
    }
    until(&mut second, Duration::from_secs(10), found).await;
    let requests = second.sandbox.api_requests_received() - before;
    let images = second.sandbox.requests_received() - second.sandbox.api_requests_received() - images_before;
    eprintln!("second session, server without the lookup: found with {requests} API requests (and {images} QR image)");
    assert!(found(&second));
    assert!(requests <= 2, "{requests} requests");
    assert!(render(&second.app, 120, 40, Instant::now()).contains(" in the index"));
}

#[tokio::test]
async fn while_the_client_waits_for_its_own_budget_the_status_line_counts_down() {
    let mut h = Harness::acme().await;
    h.send(key('3'));
    assert!(h.app.is_loading(), "the first page is asked for");
    let now = h.now;
    h.send(Msg::Pacing(Some(now + Duration::from_millis(4_200))));
    assert!(h.screen(120, 40).contains("Waiting for the API's rate limit: 5 s"));
    h.now = now + Duration::from_millis(1_500);
    h.send(Msg::Tick);
    assert!(h.screen(120, 40).contains("Waiting for the API's rate limit: 3 s"));
    // Once nothing waits, the line is the usual one again.
    h.settle().await;
    assert!(!h.screen(120, 40).contains("rate limit"));
}

/// An agent finds an eSIM by its whole ICCID and tops it up: afterwards nothing says "loading"
/// unless something is in flight, the tab keeps its attention count, and Esc leaves the eSIM
/// selected in the list (its place is still known). `r` on the result does the same.
#[tokio::test]
async fn after_a_top_up_or_r_on_a_found_esim_nothing_loads_for_ever() {
    let mut h = Harness::acme().await;
    let q = EsimQuery {
        status: "in_use".into(),
        ..EsimQuery::default()
    };
    let iccid = h.api().esims(&q).await.unwrap().esims[1]
        .raw_order_json
        .iccid
        .to_string();
    h.send_and_settle(key('3')).await;
    // The first digits read the whole inventory (so the attention count is known), the rest
    // finds the one eSIM.
    h.send(key('/'));
    h.keys(&iccid[..6]);
    h.settle().await;
    h.keys(&iccid[6..]);
    h.settle().await;
    assert_eq!(h.app.selected_iccid().unwrap().to_string(), iccid);
    let says_loading = |h: &Harness| h.screen(120, 40).lines().take(4).any(|l| l.contains("loading"));
    let labelled = |h: &Harness| h.app.tab_labels().iter().any(|(_, label)| label.contains("(! "));
    assert!(labelled(&h), "the attention count is known once the inventory is read");
    for step in ["top-up", "r"] {
        if step == "top-up" {
            top_up_with_the_first_plan(&mut h, (120, 40)).await;
            h.send(code(KeyCode::Esc));
        } else {
            h.send(key('r'));
        }
        h.settle().await;
        assert!(h.pending().is_empty(), "{step}: nothing is left to answer");
        assert!(
            !says_loading(&h),
            "{step}: loading with nothing in flight:\n{}",
            h.screen(120, 40)
        );
        assert!(
            labelled(&h),
            "{step}: the attention count stays while the inventory is read again"
        );
    }
    h.send(code(KeyCode::Esc));
    h.send_and_settle(code(KeyCode::Esc)).await;
    assert_eq!(
        h.app.selected_iccid().unwrap().to_string(),
        iccid,
        "still selected in the list"
    );
    assert!(!h.screen(120, 40).contains("not known yet"), "{}", h.screen(120, 40));
}

/// Under `!`, once the whole inventory is known, the title says how old the count is (its
/// oldest usable eSIM's read) from a minute on; a count read just now says no age.
#[tokio::test]
async fn under_attention_the_title_says_how_old_the_count_is_from_a_minute_on() {
    let mut h = Harness::acme().await;
    h.send_and_settle(key('3')).await;
    // A search reads the whole inventory; Esc leaves it, `!` filters.
    h.send(key('/'));
    h.keys("8");
    h.settle().await;
    h.send_and_settle(code(KeyCode::Esc)).await;
    h.send_and_settle(key('!')).await;
    let read = chrono::Utc::now();
    let title = |h: &Harness| {
        let screen = h.screen(120, 40);
        let line = screen.lines().find(|l| l.contains("in the index")).map(str::to_string);
        line.unwrap_or_else(|| panic!("no index progress:\n{screen}"))
    };
    h.pin_clock(read + chrono::Duration::seconds(20));
    assert!(!title(&h).contains(" old"), "read 20 s ago: {}", title(&h));
    h.pin_clock(read + chrono::Duration::minutes(5) + chrono::Duration::seconds(10));
    assert!(title(&h).contains("in the index, 5 min old"), "{}", title(&h));
}

/// Tops the selected eSIM up with the first plan offered, confirmed as a user does, and checks
/// the screen (at this size) says it was placed.
async fn top_up_with_the_first_plan(h: &mut Harness, (width, height): (u16, u16)) {
    h.send_and_settle(key('t')).await;
    for _ in 0..2 {
        h.send_and_settle(code(KeyCode::Enter)).await;
    }
    assert!(
        h.screen(width, height).contains("Placed: order"),
        "{}",
        h.screen(width, height)
    );
}

/// The agent's job at once: a whole ICCID (no index read), a top-up, Esc Esc: the eSIM is
/// selected in the list at its row (found on the page at hand), not pinned above it.
#[tokio::test]
async fn a_whole_iccid_topped_up_stays_selected_in_the_list_after_esc_esc() {
    let mut h = Harness::acme().await;
    let iccid = h.api().esims(&EsimQuery::default()).await.unwrap().esims[1]
        .raw_order_json
        .iccid
        .to_string();
    h.send_and_settle(key('3')).await;
    h.search(&iccid).await;
    assert_eq!(h.app.selected_iccid().unwrap().to_string(), iccid);
    top_up_with_the_first_plan(&mut h, (80, 24)).await;
    h.send_and_settle(code(KeyCode::Esc)).await;
    // The record read after the top-up shows it, and the pane says so.
    let screen = h.screen(120, 40);
    assert!(screen.contains("Top-up landed"), "{screen}");
    h.send_and_settle(code(KeyCode::Esc)).await;
    assert_eq!(h.app.selected_iccid().unwrap().to_string(), iccid);
    assert!(h.app.esims().pinned().is_none(), "at its row, not pinned");
    assert!(!h.screen(80, 24).contains("not known yet"), "{}", h.screen(80, 24));
}

/// A whole ICCID with one digit wrong: the search says it is not a valid ICCID and why (the
/// Luhn check), as the `t` prompt and the commands do, instead of only "No eSIM matches."
#[tokio::test]
async fn a_mistyped_whole_iccid_in_the_search_says_which_check_failed() {
    let mut h = Harness::acme().await;
    let q = EsimQuery::default();
    let iccid = h.api().esims(&q).await.unwrap().esims[0]
        .raw_order_json
        .iccid
        .to_string();
    let last = iccid.chars().last().unwrap().to_digit(10).unwrap();
    let mistyped = format!("{}{}", &iccid[..iccid.len() - 1], (last + 1) % 10);
    h.send_and_settle(key('3')).await;
    h.send(key('/'));
    h.keys(&mistyped);
    h.settle().await;
    let screen = h.screen(120, 40);
    assert!(
        screen.contains("not a valid ICCID") && screen.contains("Luhn"),
        "{screen}"
    );
}

/// The index's background read as the dashboard runs it, against a server without the lookup:
/// saved every few pages while it reads (a session killed then keeps what it read), resumed by
/// the next session at its first gap, and after new orders, brought up to date from the top
/// in two pages.
#[tokio::test]
async fn the_dashboards_index_is_saved_as_it_is_read_resumed_at_the_gap_and_fresh_from_the_top() {
    let config = SandboxConfig {
        orders: 5_000,
        rate_limit: 100_000,
        iccid_lookup: false,
        allocate_after: Duration::ZERO,
        balance: Some(rust_decimal::Decimal::new(1_000_000, 2)),
        ..SandboxConfig::default()
    };
    let fast = ClientOptions {
        rate_limit: 100_000,
        ..ClientOptions::default()
    };
    // My eSIMs, its first page read, then a search (which needs the whole index).
    async fn search(live: &mut Live) {
        live.send(key('3'));
        live.until(Duration::from_secs(10), |app| app.esims().list().page_items().is_some())
            .await;
        live.send(key('/'));
        for c in "8944".chars() {
            live.send(key(c));
        }
    }
    let index_pages = |live: &Live| -> Vec<u64> {
        live.sent
            .iter()
            .filter_map(|r| match r {
                esimdash_tui::msg::Request::EsimScan { page } => Some(*page),
                _ => None,
            })
            .collect()
    };
    // Session 1 is cut off mid-read, after ten pages: each was written as it came.
    let mut live = Live::new(config, fast).await;
    live.sandbox.set_latency(Duration::from_millis(5));
    search(&mut live).await;
    while live.kept.held().unwrap_or(0) < 9 * 100 {
        live.until(Duration::from_millis(20), |_| false).await;
    }
    live.sandbox.set_latency(Duration::ZERO);
    live.new_session();
    let loaded = live.quit_saving();
    let saved = loaded.inventory.clone();
    let total = saved.total().unwrap();
    assert!(!saved.is_complete(), "cut off mid-read");

    // Session 2 starts from that file and reads only the gaps.
    live.saved_inventory(loaded);
    search(&mut live).await;
    assert!(
        live.until(Duration::from_secs(30), |app| app.index().read().is_complete())
            .await
    );
    let read = index_pages(&live);
    let covered_before: Vec<u64> = read
        .iter()
        .copied()
        .filter(|&p| saved.first_gap_from((p - 1) * 100).is_none_or(|gap| gap >= p * 100))
        .collect();
    eprintln!(
        "session 2 read {} pages of {}: {read:?}",
        read.len(),
        total.div_ceil(100)
    );
    assert!(covered_before.is_empty(), "saved pages read again: {covered_before:?}");
    assert!(live.screen_text(120, 40).contains(" in the index"));
    let complete = live.quit_saving();
    assert!(complete.inventory.is_complete(), "every page was written");

    // 50 new orders; session 3's index has their eSIMs after two pages: the list's first
    // (all new) and the read from the top (which meets the known ones).
    crate::orders::place_orders(&live.sandbox.base_url(), 50).await;
    live.new_session();
    live.saved_inventory(complete);
    search(&mut live).await;
    assert!(
        live.until(Duration::from_secs(30), |app| app.index().read().is_complete())
            .await
    );
    let index = live.app.index().read();
    eprintln!("after 50 new orders: index {} of {:?}", index.covered(), index.total());
    assert_eq!(
        index_pages(&live),
        vec![1],
        "one page from the top, after the list's first"
    );
    let lists = live.count(|r| matches!(r, esimdash_tui::msg::Request::Esims(_)));
    assert_eq!(lists, 1);
}

/// A whole ICCID the account does not have, once the whole list is in the index: the pane says
/// so (and how to read the list again), rather than "No eSIM selected", against a server
/// without the lookup, where no record fetched can tell.
#[tokio::test]
async fn a_whole_iccid_the_complete_index_lacks_is_said_to_be_none_of_the_account() {
    let mut live = on_esims_without_lookup(800).await;
    live.send(key('/'));
    // Luhn-valid, and not one of the sandbox's.
    for c in "8944100099999345681".chars() {
        live.send(key(c));
    }
    live.send(code(KeyCode::Enter));
    assert!(
        live.until(Duration::from_secs(20), |app| app.index().read().is_complete())
            .await
    );
    live.idle(Duration::from_secs(5)).await;
    let screen = render(&live.app, 120, 40, Instant::now());
    assert!(
        screen.contains("No eSIM with this ICCID") && screen.contains("whole list is in the index"),
        "{screen}"
    );
}

/// With the budget lifted, the time the index's read still needs is the pace the pages really
/// come at, not "0 s to go" for as long as the server takes.
#[tokio::test]
async fn the_time_to_go_follows_the_pace_the_pages_come_at() {
    let mut live = on_esims_without_lookup(4_000).await;
    live.sandbox.set_latency(Duration::from_millis(60));
    live.send(key('/'));
    live.send(key('7'));
    let mut said = Vec::new();
    let started = Instant::now();
    while !live.app.index().read().is_complete() && started.elapsed() < Duration::from_secs(30) {
        live.until(Duration::from_millis(100), |_| false).await;
        let screen = render(&live.app, 160, 40, Instant::now());
        if let Some(at) = screen.find(" to go") {
            let words: Vec<&str> = screen[..at].split_whitespace().rev().take(2).collect();
            said.push(format!("{} {}", words[1], words[0]));
        }
    }
    eprintln!("the time to go, as the read went: {said:?}");
    // About 40 pages of 60 ms: seconds, not "0 s", until near the end.
    assert!(said.iter().any(|s| s != "0 s"), "{said:?}");
}

/// The acme account's oldest page of eSIMs, as the index takes a page in, and its last eSIM:
/// far from what the list's first page brings to the index.
async fn the_oldest_page(h: &Harness) -> (esimdash_inventory::Seen, esimdash_api::model::Esim) {
    let total = h.api().esims(&EsimQuery::default()).await.unwrap().total;
    let last = total.div_ceil(50);
    let q = EsimQuery {
        page: Some(last),
        page_size: Some(50),
        ..EsimQuery::default()
    };
    let esims = h.api().esims(&q).await.unwrap().esims;
    let place = esimdash_inventory::PagePlace {
        page: last,
        size: 50,
        total,
    };
    let seen = esimdash_inventory::Seen::page(&esims, place, 0);
    (seen, esims.last().expect("an eSIM on the last page").clone())
}

/// A whole ICCID typed on My eSIMs, then Orders before its lookup answers: the lookup is
/// cancelled with the tab, and an order's detail that looks for its eSIM in the index gets its
/// read (the lookup no one would send once held it: "looking for it…" for good).
#[tokio::test]
async fn an_order_detail_reads_the_index_after_a_lookup_a_tab_switch_cancelled() {
    let mut h = Harness::acme_on('3').await;
    let (_, old) = the_oldest_page(&h).await;
    h.type_search(old.raw_order_json.iccid.as_str());
    let lookup = |r: &esimdash_tui::msg::Request| matches!(r, esimdash_tui::msg::Request::FindEsim { .. });
    assert!(h.pending().iter().any(|(_, r)| lookup(r)), "the lookup is asked for");
    h.send_and_settle(key('2')).await;
    // The oldest order's detail: its eSIM is in no page at hand.
    h.send(key('G'));
    h.settle().await;
    let scan = |r: &esimdash_tui::msg::Request| matches!(r, esimdash_tui::msg::Request::EsimScan { .. });
    let before = h.count(scan);
    h.send(code(KeyCode::Enter));
    h.settle().await;
    assert!(h.count(scan) > before, "the index was not read for the order's eSIM");
    let screen = h.screen(120, 40);
    assert!(
        !screen.contains("looking for it"),
        "still looking with nothing read:\n{screen}"
    );
}

/// A find that lands while another tab is shown (the index's read brought the whole ICCID
/// typed on My eSIMs) selects it there, and opens nothing over the tab shown.
#[tokio::test]
async fn a_find_that_lands_on_another_tab_opens_nothing_over_it() {
    let mut h = Harness::acme_on('3').await;
    let (seen, old) = the_oldest_page(&h).await;
    h.type_search(old.raw_order_json.iccid.as_str());
    h.send_and_settle(key('2')).await;
    let profile = h.app.session().profile.clone();
    h.send(Msg::IndexSeen { profile, seen });
    assert_eq!(h.app.tab(), esimdash_tui::app::Tab::Orders);
    assert!(
        matches!(h.app.mode(), esimdash_tui::app::Mode::Browse),
        "{:?} over Orders",
        h.app.mode()
    );
    h.send_and_settle(key('3')).await;
    assert_eq!(
        h.app.selected_iccid().map(|i| i.to_string()).as_deref(),
        Some(old.raw_order_json.iccid.as_str()),
        "found, and selected on My eSIMs"
    );
}

/// `T` on an eSIM of a server without the lookup: the triage reads it at the place the index
/// saw it (as the pane's record is read), never "not found", and counts one page.
#[tokio::test]
async fn a_triage_against_a_server_without_the_lookup_reads_the_esim_where_the_index_saw_it() {
    let mut live = on_esims_without_lookup(1_500).await;
    // The oldest eSIM, found by reading the list: the index knows its page.
    let iccid = oldest_iccid(&live.sandbox.base_url()).await;
    live.send(key('/'));
    for c in iccid.chars() {
        live.send(key(c));
    }
    let found = |live: &Live| selected_iccid(live).as_deref() == Some(iccid.as_str());
    until(&mut live, Duration::from_secs(20), found).await;
    assert!(found(&live));
    live.send(code(KeyCode::Enter));
    live.idle(Duration::from_secs(2)).await;
    live.send(key('T'));
    until(
        &mut live,
        Duration::from_secs(10),
        |l| matches!(l.app.overlay(), Some(esimdash_tui::forms::mode::Overlay::Triage(w)) if !w.triage().is_loading()),
    )
    .await;
    let Some(esimdash_tui::forms::mode::Overlay::Triage(window)) = live.app.overlay() else {
        panic!("the triage window is open");
    };
    let triage = window
        .triage()
        .value()
        .unwrap_or_else(|| {
            panic!(
                "the triage was read: {:?}",
                window.triage().error().map(ToString::to_string)
            )
        })
        .as_ref()
        .as_ref()
        .unwrap_or_else(|missing| panic!("the eSIM was found: {missing}"));
    assert_eq!(triage.iccid, iccid);
    assert_eq!(triage.requests.len(), 1, "one page read: {:?}", triage.requests);
}
