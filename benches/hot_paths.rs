//! The hot paths, timed by divan: a frame of each tab at 200×60 full of data (Profile with its
//! 30 days' charts), decoding an orders page and a 2 000-plan catalog, the partial-ICCID search
//! over 100 000 eSIMs, a QR code encoded and drawn, and the sandbox answering an orders page
//! with `q` over 100 000 orders.
//! `cargo bench --bench hot_paths` (docs/performance.md).

use axum::body::Body;
use axum::http::Request as HttpRequest;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use esimdash_api::model::{Esim, EsimPage, OrderPage, parse_plan_list};
use esimdash_domain::status::StatusFilter;
use esimdash_inventory::{Inventory, PagePlace, Seen};
use esimdash_qr::QrMatrix;
use esimdash_sandbox::{SandboxConfig, router};
use esimdash_tui::app::App;
use esimdash_tui::msg::{Answer, Effect, JobId, Msg, Payload, Request};
use esimdash_tui::view::theme::Theme;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::{Value, json};
use std::hint::black_box;
use std::time::Instant;
use tower::ServiceExt;

fn main() {
    divan::main();
}

fn plan_json(i: usize) -> Value {
    json!({
        "packageCode": format!("P{i:05}"), "slug": format!("fr-{i}gb-30d"),
        "name": format!("France {i}GB 30 Days"), "price": 5.7, "currencyCode": "USD",
        "volume": 1_073_741_824u64, "duration": 30, "durationUnit": "DAY", "locationCode": "FR",
        "supplierPrice": 4.75, "pricing": { "costPrice": 4.75, "sellPrice": 5.7, "margin": 0.95,
        "marginPct": 20.0, "ruleScope": "global", "ruleType": "percent" }
    })
}

fn order_json(i: usize) -> Value {
    json!({
        "providerOrderNo": format!("B1000{i:08}"), "status": "in_use", "packageName": "France 3GB 30 Days",
        "slug": "fr-3gb-30d", "quantity": 1, "iccid": format!("894410000{i:010}"), "locationCode": "FR",
        "totalSellPrice": "12.40", "createdAt": "2026-11-20T10:00:00Z"
    })
}

fn esim_json(i: usize) -> Value {
    json!({
        "orderNo": format!("B1000{i:08}"), "status": "in_use", "packageName": "France 3GB 30 Days",
        "slug": "fr-3gb-30d", "locationCode": "FR",
        "rawOrderJson": { "iccid": format!("894410000{i:010}"), "smdpStatus": "ENABLED",
            "orderUsage": 1_000_000 * i as u64 % 3_000_000_000, "totalVolume": 3_221_225_472u64,
            "expiredTime": "2026-12-20T00:00:00Z", "ac": format!("LPA:1$rsp.esim.example${i:020}"),
            "qrCodeUrl": "" }
    })
}

fn catalog_body() -> String {
    json!({ "data": (0..2000).map(plan_json).collect::<Vec<_>>() }).to_string()
}

fn orders_body() -> String {
    json!({ "page": 1, "pageSize": 100, "total": 100_000, "orders": (0..100).map(order_json).collect::<Vec<_>>() })
        .to_string()
}

fn esims_body() -> String {
    json!({ "page": 1, "pageSize": 100, "total": 100_000, "esims": (0..100).map(esim_json).collect::<Vec<_>>() })
        .to_string()
}

fn esims_page(from: usize, count: usize) -> EsimPage {
    let esims: Vec<Value> = (from..from + count).map(esim_json).collect();
    serde_json::from_value(json!({ "page": 1, "pageSize": count, "total": 100_000, "esims": esims })).unwrap()
}

/// 30 days of a reseller selling 140 orders a day, as the Profile's chart shows them.
fn money() -> esimdash_ledger::overview::Overview {
    let now = chrono::DateTime::parse_from_rfc3339("2026-11-26T12:00:00Z")
        .unwrap()
        .to_utc();
    let ledger: esimdash_ledger::Ledger = (0..4_200)
        .map(|i: i64| esimdash_ledger::Sale {
            order_no: format!("B{i}"),
            at: now - chrono::Duration::minutes(i * 10),
            status: "in_use".into(),
            slug: format!("p-{}", i % 40),
            package: format!("Country {} 3GB 30 Days", i % 40),
            location: ["FR", "JP", "US", "DE", "!RG"][(i % 5) as usize].into(),
            quantity: 1,
            paid: rust_decimal::Decimal::new(500 + i % 3000, 2),
            at_cost: rust_decimal::Decimal::new(400 + i % 2500, 2),
            topup: i % 7 == 0,
        })
        .collect();
    esimdash_ledger::overview::Overview::of(&ledger, now, &chrono::Utc)
}

/// The app with each tab's data in, as after a session's first minutes.
fn full_app() -> App {
    let now = Instant::now();
    let mut app = App::new(false);
    let mut pending: Vec<(JobId, Request)> = Vec::new();
    let take = |effects: Vec<Effect>, pending: &mut Vec<(JobId, Request)>| {
        pending.extend(effects.into_iter().filter_map(|e| match e {
            Effect::Send { id, request } => Some((id, request)),
            _ => None,
        }));
    };
    take(app.start(), &mut pending);
    for key in ['2', '3', '4', '1'] {
        take(
            app.update(Msg::Key(KeyEvent::new(KeyCode::Char(key), KeyModifiers::NONE)), now),
            &mut pending,
        );
        while let Some((id, request)) = pending.pop() {
            let result = match &request {
                Request::Profile => Ok(Payload::Profile(
                    serde_json::from_value(
                        json!({"name": "Ada", "companyName": "Acme Mobile", "balanceUsd": "250.00"}),
                    )
                    .unwrap(),
                )),
                Request::Plans => Ok(Payload::Plans(parse_plan_list(catalog_body().as_bytes()).unwrap())),
                Request::Orders(_) => Ok(Payload::Orders(serde_json::from_str(&orders_body()).unwrap())),
                Request::Esims(_) => Ok(Payload::Esims(esims_page(0, 50))),
                Request::Money => Ok(Payload::Money(Box::new(money()))),
                Request::ActivationCode { esim } => Ok(Payload::ActivationCode(Ok(esim
                    .raw_order_json
                    .ac
                    .clone()
                    .unwrap_or_default()))),
                _ => continue,
            };
            let answer = Answer { id, result };
            take(app.update(Msg::Answer(Box::new(answer)), now), &mut pending);
        }
    }
    app
}

mod frame_200x60 {
    use super::*;

    fn draw_tab(bencher: divan::Bencher, key: char) {
        let mut app = full_app();
        app.update(
            Msg::Key(KeyEvent::new(KeyCode::Char(key), KeyModifiers::NONE)),
            Instant::now(),
        );
        let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
        let theme = Theme::dark(true);
        let now = Instant::now();
        // A frame as the runtime makes it: the whole view rendered into a buffer, compared with
        // the last frame, and what changed written out (here, to a test backend).
        bencher.bench_local(|| terminal.draw(|f| app.draw(f, &theme, now)).unwrap().area);
    }

    /// The tabs a frame is timed on, named in the bench's output.
    #[derive(Clone, Copy, Debug)]
    enum Tab {
        Catalog,
        Orders,
        EsimsWithQr,
        Profile,
    }

    impl Tab {
        /// The key that opens the tab.
        fn key(self) -> char {
            match self {
                Tab::Catalog => '1',
                Tab::Orders => '2',
                Tab::EsimsWithQr => '3',
                Tab::Profile => '4',
            }
        }
    }

    #[divan::bench(args = [Tab::Catalog, Tab::Orders, Tab::EsimsWithQr, Tab::Profile])]
    fn tab(bencher: divan::Bencher, tab: Tab) {
        draw_tab(bencher, tab.key());
    }

    /// My eSIMs searched: 100 000 eSIMs in the index, a part of an ICCID typed, the results
    /// and the selected one's pane.
    #[divan::bench]
    fn esims_search_over_100_000(bencher: divan::Bencher) {
        let mut app = full_app();
        let now = Instant::now();
        for page in 1..=1000 {
            let esims = esims_page((page as usize - 1) * 100, 100).esims;
            let place = PagePlace {
                page,
                size: 100,
                total: 100_000,
            };
            let seen = Seen::page(&esims, place, 0);
            app.update(
                Msg::IndexSeen {
                    profile: app.session().profile.clone(),
                    seen,
                },
                now,
            );
        }
        for key in ['3', '/', '4', '2', '7'] {
            app.update(Msg::Key(KeyEvent::new(KeyCode::Char(key), KeyModifiers::NONE)), now);
        }
        assert!(app.esims().result_count() > 100, "{}", app.esims().result_count());
        let mut terminal = Terminal::new(TestBackend::new(200, 60)).unwrap();
        let theme = Theme::dark(true);
        bencher.bench_local(|| terminal.draw(|f| app.draw(f, &theme, now)).unwrap().area);
    }
}

mod decode {
    use super::*;

    #[divan::bench]
    fn orders_page_of_100(bencher: divan::Bencher) {
        let body = orders_body();
        bencher.bench(|| serde_json::from_str::<OrderPage>(black_box(&body)).unwrap());
    }

    #[divan::bench]
    fn esims_page_of_100(bencher: divan::Bencher) {
        let body = esims_body();
        bencher.bench(|| serde_json::from_str::<EsimPage>(black_box(&body)).unwrap());
    }

    #[divan::bench]
    fn catalog_of_2000_plans(bencher: divan::Bencher) {
        let body = catalog_body();
        bencher.bench(|| parse_plan_list(black_box(body.as_bytes())).unwrap());
    }
}

#[divan::bench]
fn partial_iccid_search_over_100_000(bencher: divan::Bencher) {
    let mut inventory = Inventory::default();
    for (n, from) in (0..100_000).step_by(1000).enumerate() {
        let page = esims_page(from, 1000);
        let esims: &[Esim] = &page.esims;
        let place = PagePlace {
            page: n as u64 + 1,
            size: 1000,
            total: 100_000,
        };
        inventory.merge(&Seen::page(esims, place, 0));
    }
    bencher.bench(|| inventory.search(black_box("0000042"), &StatusFilter::All).len());
}

mod qr {
    use super::*;

    const CODE: &str = "LPA:1$rsp.esim.example$V0IVTWYRS7QC0123456789";

    #[divan::bench]
    fn encode(bencher: divan::Bencher) {
        bencher.bench(|| QrMatrix::encode(black_box(CODE)).unwrap());
    }

    #[divan::bench]
    fn draw_as_half_blocks(bencher: divan::Bencher) {
        let matrix = QrMatrix::encode(CODE).unwrap();
        bencher.bench(|| matrix.to_half_blocks());
    }
}

#[divan::bench(sample_count = 30)]
fn sandbox_orders_page_with_q_over_100_000(bencher: divan::Bencher) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let config = SandboxConfig {
        orders: 100_000,
        rate_limit: u32::MAX,
        ..SandboxConfig::default()
    };
    let app = router(&config, "http://127.0.0.1:1".to_string());
    let mut page = 0u64;
    bencher.bench_local(|| {
        // A different page each time, so no answer is served from a previous one's work.
        page = page % 900 + 1;
        let request = HttpRequest::get(format!("/api/v1/reseller/orders?pageSize=100&q=fr&page={page}"))
            .header("x-access-code", "ak_demo_acme")
            .header("x-secret-key", "sk_demo_acme")
            .body(Body::empty())
            .unwrap();
        let response = runtime.block_on(app.clone().oneshot(request)).unwrap();
        assert!(response.status().is_success());
    });
}

/// The gateway's store on a busy day: what each capped request and `gateway/me` read (an
/// agent's and the team's holds today) and a payment's own store work (reserve, sent, settled),
/// with 0 and 20 000 payments journalled today; and the same read summed from the journal, as
/// before the day's totals were kept.
mod gateway_day {
    use esimdash_gateway::Store;
    use esimdash_gateway::store::{Asked, Caps, From, Outcome, Stage, day_of};
    use rust_decimal::Decimal;

    struct Day {
        _dir: tempfile::TempDir,
        store: Store,
        runtime: tokio::runtime::Runtime,
        day: String,
        now: i64,
    }

    fn asked(i: usize) -> Asked {
        Asked {
            agent: format!("agent{}", i % 20),
            kind: "topup".into(),
            iccid: Some(format!("894410000{i:010}")),
            slug: "fr-3gb-30d".into(),
            qty: 1,
            body: "{}".into(),
            agent_key: None,
            amount: Decimal::new(240, 2),
        }
    }

    /// A store with `n` payments charged today, written in one transaction; `kept`: a payment
    /// of this version has touched the day, so its totals are kept.
    fn day(n: usize, kept: bool) -> Day {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gateway.db");
        let store = runtime.block_on(Store::open(&path.display().to_string())).unwrap();
        let now = chrono::Utc::now().timestamp();
        let day = day_of(now);
        let mut db = rusqlite::Connection::open(&path).unwrap();
        let tx = db.transaction().unwrap();
        for i in 0..n {
            tx.execute(
                "INSERT INTO payments (id, agent, day, kind, iccid, slug, qty, body, upstream_key, reserved, charged, state, asked_at) \
                 VALUES (?1, ?2, ?3, 'topup', ?4, 'fr-3gb-30d', 1, '{}', ?1, '2.40', '2.40', 'charged', ?5)",
                rusqlite::params![format!("p{i}"), format!("agent{}", i % 20), day, format!("894410000{i:010}"), now],
            )
            .unwrap();
        }
        tx.commit().unwrap();
        if kept {
            runtime
                .block_on(store.reserve(asked(n), Caps::default(), now, None))
                .unwrap()
                .unwrap();
        }
        Day {
            _dir: dir,
            store,
            runtime,
            day,
            now,
        }
    }

    #[divan::bench(args = [0, 20_000], sample_count = 50)]
    fn holds_today_kept(bencher: divan::Bencher, n: usize) {
        let d = day(n, true);
        bencher.bench_local(|| d.runtime.block_on(d.store.held_on("agent1", &d.day)).unwrap());
    }

    #[divan::bench(args = [20_000], sample_count = 20)]
    fn holds_today_summed_from_the_journal(bencher: divan::Bencher, n: usize) {
        let d = day(n, false);
        bencher.bench_local(|| d.runtime.block_on(d.store.held_on("agent1", &d.day)).unwrap());
    }

    #[divan::bench(args = [0, 20_000], sample_count = 50)]
    fn a_payment_reserved_sent_and_settled(bencher: divan::Bencher, n: usize) {
        let d = day(n, true);
        let mut i = n + 1;
        bencher.bench_local(|| {
            i += 1;
            let payment = d
                .runtime
                .block_on(d.store.reserve(asked(i), Caps::default(), d.now, None))
                .unwrap()
                .unwrap();
            d.runtime.block_on(d.store.mark_sent(&payment.id, d.now)).unwrap();
            let outcome = Outcome {
                stage: Stage::Charged,
                charged: Some(Decimal::new(240, 2)),
                ..Outcome::default()
            };
            d.runtime
                .block_on(d.store.settle(&payment, outcome, d.now, From::Sent))
                .unwrap()
        });
    }
}
