//! The top-up of the marked eSIMs, driven through the app and the runtime's own bulk task
//! against a sandbox, counted at the server: only plans offered to every marked eSIM, one
//! confirmation, one order per eSIM; a marked eSIM offered nothing is named, nothing is sent,
//! and Enter unmarks it and goes on with the others; the stop key lets the payment in flight finish and pays no other, and `t`
//! again pays only the eSIMs still marked.

use crate::common::{Live, code, key, listed_iccids, unpaced, unpaced_sandbox};
use crossterm::event::KeyCode;
use esimdash_api::model::{Order, OrderQuery};
use esimdash_api::{Client, ClientOptions};
use esimdash_domain::iccid::EsimIccid;
use esimdash_domain::iccid::Iccid;
use esimdash_tui::app::{App, Overlay};
use esimdash_tui::forms::bulk::BulkStage;
use std::collections::HashMap;
use std::time::Duration;

/// A dashboard whose client keeps an audit trail (the bulk journal lives beside it).
async fn live_with_trail(state: &tempfile::TempDir) -> Live {
    let options = ClientOptions {
        audit: Some(esimdash_api::audit::Trail {
            path: state.path().join("esimdash/audit.jsonl"),
            profile: "sandbox".into(),
        }),
        ..unpaced()
    };
    Live::new(unpaced_sandbox(), options).await
}

/// The newest orders, newest first.
async fn newest_orders(api: &Client, n: u64) -> (u64, Vec<Order>) {
    let page = api
        .orders(&OrderQuery {
            page: Some(1),
            page_size: Some(n.max(1)),
            ..OrderQuery::default()
        })
        .await
        .unwrap();
    (page.total, page.orders)
}

fn bulk(app: &App) -> Option<&BulkStage> {
    match app.overlay() {
        Some(Overlay::Bulk(form)) => Some(form.stage()),
        _ => None,
    }
}

/// The rows of the first page of My eSIMs: (row, ICCID) of each eSIM offered `slug` and of the
/// first offered nothing, for the slug offered to the most of them.
async fn pick(live: &mut Live, api: &Client) -> (String, Vec<(usize, String)>, (usize, String)) {
    live.send(key('3'));
    assert!(
        live.until(Duration::from_secs(10), |app| app.selected_esim().is_some())
            .await
    );
    let rows = listed_iccids(&live.app);
    let mut by_slug: HashMap<String, Vec<(usize, String)>> = HashMap::new();
    let mut plans: HashMap<String, rust_decimal::Decimal> = HashMap::new();
    let mut none = None;
    for (n, iccid) in rows.iter().enumerate() {
        // A reissued ICCID has two rows: one mark.
        if rows[..n].contains(iccid) {
            continue;
        }
        let offered = api.topup_plans(&Iccid::parse(iccid).unwrap()).await.unwrap();
        if offered.is_empty() && none.is_none() {
            none = Some((n, iccid.clone()));
        }
        for plan in offered {
            plans.insert(plan.slug.clone(), plan.sell_price().unwrap_or_default());
            by_slug.entry(plan.slug).or_default().push((n, iccid.clone()));
        }
    }
    // The most eSIMs, then the cheapest plan (the balance must cover it): the same each run.
    let price = |slug: &str| plans.get(slug).copied().unwrap_or_default();
    let (slug, group) = by_slug
        .into_iter()
        .max_by(|a, b| {
            a.1.len()
                .cmp(&b.1.len())
                .then(price(&b.0).cmp(&price(&a.0)))
                .then(b.0.cmp(&a.0))
        })
        .unwrap();
    // eSIMs that cannot take data (deleted from the phone, expired…) are offered nothing.
    assert!(group.len() >= 3, "eSIMs sharing a top-up on the first page: {group:?}");
    (slug, group, none.expect("an eSIM offered no top-up on the first page"))
}

/// Marks the eSIMs at these rows of the list (space on each).
fn mark_rows(live: &mut Live, rows: &[usize]) {
    live.send(code(KeyCode::Home));
    let mut at = 0;
    for &row in rows {
        while at < row {
            live.send(key('j'));
            at += 1;
        }
        live.send(key(' '));
    }
}

/// `t`, the plan `slug` chosen, `qty` each, reviewed and paid.
async fn top_up_marked(live: &mut Live, slug: &str, qty: char) {
    live.send(key('t'));
    assert!(
        live.until(Duration::from_secs(10), |app| bulk(app) == Some(&BulkStage::Choosing))
            .await,
        "{:?}",
        bulk(&live.app)
    );
    let Some(Overlay::Bulk(form)) = live.app.overlay() else {
        unreachable!()
    };
    let (plans, at) = (form.choice().plans().len(), form.choice().cursor());
    let wanted = form.choice().plans().iter().position(|p| p.slug == slug).unwrap();
    // From where the form starts (the plan chosen last for these marks, if any) to `slug`.
    for _ in at..wanted {
        live.send(key('j'));
    }
    for _ in wanted..at.min(plans) {
        live.send(key('k'));
    }
    live.send(key(qty));
    live.send(code(KeyCode::Enter));
    assert_eq!(bulk(&live.app), Some(&BulkStage::Confirming));
    // Enter again at once (a double tap) pays nothing; after the pause it pays.
    live.send(code(KeyCode::Enter));
    assert_eq!(bulk(&live.app), Some(&BulkStage::Confirming));
    tokio::time::sleep(esimdash_tui::forms::bulk::PAY_PAUSE).await;
    live.send(code(KeyCode::Enter));
    assert!(matches!(bulk(&live.app), Some(BulkStage::Paying(_))));
}

async fn until_ended(live: &mut Live) {
    assert!(
        live.until(Duration::from_secs(30), |app| matches!(
            bulk(app),
            Some(BulkStage::Ended(_) | BulkStage::Refused(_))
        ))
        .await,
        "{:?}",
        bulk(&live.app)
    );
}

#[tokio::test]
async fn the_marked_esims_are_topped_up_each_once_and_one_offered_nothing_is_left_out_first() {
    let state = tempfile::tempdir().unwrap();
    let mut live = live_with_trail(&state).await;
    let api = live.api();
    let (slug, group, (none_row, none_iccid)) = pick(&mut live, &api).await;
    let group: Vec<(usize, String)> = group.into_iter().take(4).collect();
    let n = group.len();

    // One marked eSIM offered nothing: named, nothing paid; Enter unmarks it, and goes on.
    let (before, _) = newest_orders(&api, 1).await;
    let mut rows: Vec<usize> = group.iter().map(|(n, _)| *n).chain([none_row]).collect();
    rows.sort_unstable();
    mark_rows(&mut live, &rows);
    assert_eq!(live.app.esims().marks().len(), n + 1);
    live.send(key('t'));
    assert!(
        live.until(Duration::from_secs(10), |app| matches!(
            bulk(app),
            Some(BulkStage::LeaveOut { .. })
        ))
        .await
    );
    let screen = live.screen_text(80, 24);
    assert!(screen.contains(&none_iccid), "{screen}");
    assert!(
        screen.contains(&format!("Enter: unmark them and top up the other {n}")),
        "{screen}"
    );
    live.send(code(KeyCode::Enter));
    assert_eq!(bulk(&live.app), Some(&BulkStage::Choosing));
    assert!(live.screen_text(80, 24).contains(&format!("offers for all {n} eSIMs")));
    assert_eq!(live.app.esims().marks().len(), n, "the one offered nothing unmarked");
    assert!(!live.app.esims().marks().contains(&EsimIccid::parse(&none_iccid)));
    assert_eq!(newest_orders(&api, 1).await.0, before, "nothing paid meanwhile");
    live.send(code(KeyCode::Esc));
    assert!(live.app.overlay().is_none());

    // Those: each its own top-up, placed once.
    top_up_marked(&mut live, &slug, '2').await;
    until_ended(&mut live).await;
    let screen = live.screen_text(120, 40);
    assert!(screen.contains(&format!("All {n} eSIMs topped up")), "{screen}");
    let (after, newest) = newest_orders(&api, n as u64).await;
    assert_eq!(after, before + n as u64, "one order per marked eSIM");
    let mut topped: Vec<String> = newest.iter().map(|o| o.iccid.as_str().to_string()).collect();
    topped.sort();
    let mut wanted: Vec<String> = group.iter().map(|(_, i)| i.clone()).collect();
    wanted.sort();
    assert_eq!(topped, wanted);
    assert!(
        newest
            .iter()
            .all(|o| o.record.slug == slug && o.record.quantity == Some(2)),
        "{newest:?}"
    );
    assert!(live.app.esims().marks().is_empty(), "the eSIMs placed are unmarked");

    // The rows file and its result, in the export directory.
    let files = live.exported();
    assert_eq!(files.len(), 2, "{files:?}");
    let result = files.iter().find(|f| f.ends_with(".result.csv")).unwrap();
    let text = std::fs::read_to_string(live.export_dir.path().join(result)).unwrap();
    for iccid in &wanted {
        assert!(
            text.lines()
                .any(|l| l.contains(iccid.as_str()) && l.contains(",placed,")),
            "{text}"
        );
    }
    // Closed, `t` without marks is the single top-up again.
    live.send(code(KeyCode::Esc));
    live.send(key('t'));
    assert!(matches!(live.app.overlay(), Some(Overlay::Purchase(_))));
    live.send(code(KeyCode::Esc));

    // Two of the four again, the same plan and quantity: the run's check finds both repeated,
    // pays nothing and names them; paying one a second time is the single top-up's question.
    assert!(
        live.until(Duration::from_secs(10), |app| app.esims().list().loaded().count()
            > group[1].0)
            .await
    );
    mark_rows(&mut live, &[group[0].0, group[1].0]);
    top_up_marked(&mut live, &slug, '2').await;
    assert!(
        live.until(Duration::from_secs(30), |app| matches!(
            bulk(app),
            Some(BulkStage::Refused(_))
        ))
        .await,
        "{:?}",
        bulk(&live.app)
    );
    let screen = live.screen_text(120, 40);
    assert!(
        screen.contains("each marked eSIM was topped up with the same"),
        "{screen}"
    );
    assert!(
        screen.contains(&group[0].1) && screen.contains("was placed at"),
        "{screen}"
    );
    assert_eq!(newest_orders(&api, 1).await.0, after, "nothing paid");
}

#[tokio::test]
async fn the_stop_key_pays_no_further_esim_and_t_again_pays_only_those_still_marked() {
    let state = tempfile::tempdir().unwrap();
    let mut live = live_with_trail(&state).await;
    let api = live.api();
    let (slug, group, _) = pick(&mut live, &api).await;
    let (before, _) = newest_orders(&api, 1).await;
    let rows: Vec<usize> = group.iter().map(|(n, _)| *n).collect();
    mark_rows(&mut live, &rows);
    // Slow answers, so that the key lands while the first payment is on its way.
    live.sandbox.set_latency(Duration::from_millis(150));
    top_up_marked(&mut live, &slug, '2').await;
    assert!(
        live.until(
            Duration::from_secs(10),
            |app| matches!(bulk(app), Some(BulkStage::Paying(p)) if p.paying)
        )
        .await
    );
    live.send(code(KeyCode::Esc));
    until_ended(&mut live).await;
    let Some(BulkStage::Ended(ended)) = bulk(&live.app) else {
        panic!("{:?}", bulk(&live.app))
    };
    let placed = ended.placed.len();
    assert!(
        placed >= 1 && placed < group.len(),
        "stopped after {placed} of {}",
        group.len()
    );
    assert_eq!(ended.not_paid, group.len() - placed);
    let (after, _) = newest_orders(&api, 1).await;
    assert_eq!(after, before + placed as u64, "only what the run says it placed");
    assert_eq!(
        live.app.esims().marks().len(),
        group.len() - placed,
        "the rest stay marked"
    );
    assert!(live.screen_text(120, 40).contains("(stopped)"));

    // `t` again with one placed eSIM marked again by mistake: the run's check names it as
    // topped up minutes ago and pays nothing; Enter leaves it out and the rest are paid.
    live.sandbox.set_latency(Duration::ZERO);
    live.send(code(KeyCode::Esc));
    let placed_row = group
        .iter()
        .find(|(_, iccid)| !live.app.esims().marks().contains(&EsimIccid::parse(iccid)))
        .unwrap()
        .clone();
    assert!(
        live.until(Duration::from_secs(10), |app| app.esims().list().loaded().count()
            > placed_row.0)
            .await
    );
    mark_rows(&mut live, &[placed_row.0]);
    assert_eq!(live.app.esims().marks().len(), group.len() - placed + 1);
    top_up_marked(&mut live, &slug, '2').await;
    assert!(
        live.until(Duration::from_secs(30), |app| matches!(
            bulk(app),
            Some(BulkStage::LeaveOut { .. })
        ))
        .await,
        "{:?}",
        bulk(&live.app)
    );
    assert!(live.screen_text(120, 40).contains(&placed_row.1));
    assert_eq!(
        newest_orders(&api, 1).await.0,
        before + placed as u64,
        "nothing paid by it"
    );
    live.send(code(KeyCode::Enter));
    assert!(!live.app.esims().marks().contains(&EsimIccid::parse(&placed_row.1)));
    assert_eq!(bulk(&live.app), Some(&BulkStage::Choosing));
    let Some(Overlay::Bulk(form)) = live.app.overlay() else {
        unreachable!()
    };
    // The stopped run's plan and quantity are offered again, not the first plan and 1.
    assert_eq!(form.choice().plan().map(|p| p.slug.as_str()), Some(slug.as_str()));
    assert_eq!(form.choice().qty(), 2, "the quantity the stopped run used");
    live.send(code(KeyCode::Enter));
    tokio::time::sleep(esimdash_tui::forms::bulk::PAY_PAUSE).await;
    live.send(code(KeyCode::Enter));
    until_ended(&mut live).await;
    let (after, _) = newest_orders(&api, 1).await;
    assert_eq!(after, before + group.len() as u64, "every marked eSIM once, none twice");
    assert!(live.app.esims().marks().is_empty());
}
