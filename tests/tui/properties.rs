//! Property tests: random sequences of keys, mouse events, resizes from 1×1 to 400×150, timer
//! ticks and answers (data of any size and text, every error kind, answers to requests long
//! done and to ids never given) fed to `App::update`, the app drawn after every step. Nothing
//! panics, and after every step the cursors are inside their lists, the page is inside the
//! total, a payment goes out only from a confirmation and one at a time, a bulk top-up starts
//! only from its confirmation, one at a time, and its window says it pays only while it runs;
//! the eSIMs a bulk run placed (or may have) are no longer marked, those it failed still are;
//! and after a 401 nothing is sent at all. Cases: 10 000 under `CI`, 300 elsewhere, or `PROPTEST_CASES`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use esimdash_api::model::{Esim, Order, Placed, Plan, Profile};
use esimdash_api::{ApiError, Delivery, Endpoint, Found, Paid};
use esimdash_domain::iccid::EsimIccid;
use esimdash_domain::iccid::Iccid;
use esimdash_domain::status::StatusFilter;
use esimdash_inventory::{PagePlace, Seen};
use esimdash_tui::app::{App, Mode, Overlay, Tab};
use esimdash_tui::forms::bulk::BulkStage;
use esimdash_tui::forms::purchase::Stage;
use esimdash_tui::msg::{Answer, BulkEnded, BulkStep, Effect, JobId, Msg, Payload, Request};
use esimdash_tui::tabs::esims::ResultRow;
use esimdash_tui::view::{self, theme::Theme};
use proptest::prelude::*;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use serde_json::json;
use std::time::{Duration, Instant};

/// One thing that happens to the app.
#[derive(Debug, Clone)]
enum Step {
    Key(KeyCode, bool),
    Mouse(u8, u16, u16),
    /// The terminal is now this size.
    Resize(u16, u16),
    /// Time passes, then a tick.
    Tick(u16),
    /// The `n`th pending request (modulo) is answered with data built from `seed`.
    Data(usize, u64),
    /// The `n`th pending request is answered with the error of this number.
    Error(usize, u8),
    /// An answer for a request long done, or an id never given.
    Stray(u64, u64),
    /// The keys of a purchase from the catalog: `1`, `b`, then Enter to review.
    Buy,
    /// Enter, as on a confirmation.
    Enter,
    /// The keys of a bulk top-up, the reads answered with data from the seed between them:
    /// My eSIMs, `*` (mark the page), `t`, Enter to review (and, for odd seeds, Enter twice at
    /// once, then again after the pause, to pay).
    BulkKeys(u64),
    /// The bulk run started tells a step (its check, a row, its end), built from the seed.
    BulkTells(u64),
    /// A paste (bracketed): text of any kind, long, with controls and line ends.
    Paste(u64),
    /// My eSIMs, `/` and a search most eSIMs match (or few, or `!` for the attention filter):
    /// the search needs the whole index, whose pages then come with other answers.
    Search(u8),
}

fn key_code() -> impl Strategy<Value = KeyCode> {
    prop_oneof![
        6 => prop::sample::select(
            "0123456789qwertyuiopasdfghjklzxcvbnmQWERTYUIOPASDFGHJKLZXCVBNM/!?.-: é*".chars().collect::<Vec<_>>()
        ).prop_map(KeyCode::Char),
        4 => prop::sample::select(vec![
            KeyCode::Enter, KeyCode::Esc, KeyCode::Tab, KeyCode::BackTab, KeyCode::Backspace,
            KeyCode::Up, KeyCode::Down, KeyCode::Left, KeyCode::Right, KeyCode::PageUp,
            KeyCode::PageDown, KeyCode::Home, KeyCode::End, KeyCode::Delete, KeyCode::F(1),
        ]),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        10 => (key_code(), prop::bool::weighted(0.05)).prop_map(|(k, ctrl)| Step::Key(k, ctrl)),
        2 => (0u8..8, 0u16..400, 0u16..150).prop_map(|(k, x, y)| Step::Mouse(k, x, y)),
        1 => (1u16..=400, 1u16..=150).prop_map(|(w, h)| Step::Resize(w, h)),
        1 => (0u16..3000).prop_map(Step::Tick),
        8 => (0usize..8, any::<u64>()).prop_map(|(n, s)| Step::Data(n, s)),
        3 => (0usize..8, 0u8..14).prop_map(|(n, e)| Step::Error(n, e)),
        1 => (any::<u64>(), any::<u64>()).prop_map(|(id, s)| Step::Stray(id, s)),
        2 => Just(Step::Buy),
        3 => Just(Step::Enter),
        1 => any::<u64>().prop_map(Step::BulkKeys),
        3 => any::<u64>().prop_map(Step::BulkTells),
        1 => any::<u64>().prop_map(Step::Paste),
        1 => (0u8..4).prop_map(Step::Search),
    ]
}

/// Text of any kind: plain, empty, very long, or with controls, bidi and wide characters.
fn text(seed: u64, plain: &str) -> String {
    match seed % 7 {
        0 => String::new(),
        1 => format!("{plain}\u{1b}[2J\u{202e}\u{9b}x\r\n"),
        2 => "界".repeat(200),
        3 => format!("{plain}{}", "x".repeat(5000)),
        _ => plain.to_string(),
    }
}

/// A price, now and then one at `rust_decimal`'s edges or one no server should send.
fn price(seed: u64, i: u64) -> serde_json::Value {
    match (seed >> 11) % 13 {
        0 => json!(79_228_162_514_264_337_593_543_950_335u128.to_string()),
        1 => serde_json::from_str("1e28").unwrap(),
        2 => json!("-0.01"),
        3 => json!("0.0000000000000000000000000001"),
        _ => json!(format!("{}.{:02}", i % 50, i % 100)),
    }
}

fn plan(seed: u64, i: u64) -> Plan {
    let location = ["FR", "!RG", "", "ZZ"][(i % 4) as usize];
    serde_json::from_value(json!({
        "name": text(seed >> 3, &format!("Plan {i}")), "slug": format!("p-{i}"),
        "packageCode": format!("P{i}"), "locationCode": location,
        "volume": (i + 1) * 1_000_000, "duration": i % 40, "durationUnit": "DAY",
        "price": price(seed, i), "currencyCode": "USD",
        "pricing": { "sellPrice": format!("{}.5", i % 60), "costPrice": "1.00" }
    }))
    .unwrap()
}

const STATUSES: [&str; 8] = [
    "in_use",
    "got_resource",
    "pending",
    "used_up",
    "cancel",
    "revoked",
    "unused_expired",
    "??",
];

fn order(seed: u64, i: u64) -> Order {
    let status = STATUSES[(i % 8) as usize];
    serde_json::from_value(json!({
        "providerOrderNo": format!("B{seed}-{i}"), "status": status,
        "packageName": text(seed >> 5, "Pack"), "slug": format!("p-{i}"), "quantity": i % 3,
        "iccid": format!("89441000000{:08}", i), "totalSellPrice": format!("{}.00", i % 30),
        "createdAt": "2026-11-20T10:00:00Z"
    }))
    .unwrap()
}

/// An ICCID with its Luhn check digit, now and then one without (a provider's mistake).
fn iccid(seed: u64, i: u64) -> String {
    let body = format!("894410000{:09}", (seed ^ i) % 1_000_000_000);
    if seed.is_multiple_of(5) {
        return format!("{body}7");
    }
    let sum: u32 = body
        .chars()
        .rev()
        .filter_map(|c| c.to_digit(10))
        .enumerate()
        .map(|(n, d)| if n % 2 == 0 { (d * 2) / 10 + (d * 2) % 10 } else { d })
        .sum();
    format!("{body}{}", (10 - sum % 10) % 10)
}

fn esim(seed: u64, i: u64) -> Esim {
    let status = STATUSES[(i % 8) as usize];
    let ac = if i.is_multiple_of(3) {
        "LPA:1$rsp.example$ABC".to_string()
    } else {
        text(seed, "")
    };
    serde_json::from_value(json!({
        "orderNo": format!("B{seed}-{i}"), "status": status,
        "packageName": text(seed >> 7, "Pack"), "slug": format!("p-{i}"),
        "rawOrderJson": {
            "iccid": iccid(seed, i), "smdpStatus": "ENABLED",
            "orderUsage": i * 1000, "totalVolume": 1_000_000, "expiredTime": "2026-12-01T00:00:00Z",
            "ac": ac,
            "qrCodeUrl": ""
        }
    }))
    .unwrap()
}

fn profile(seed: u64) -> Profile {
    serde_json::from_value(json!({
        "name": text(seed, "Ada"), "companyName": text(seed >> 2, "Acme"),
        "balanceUsd": match (seed >> 13) % 11 {
            0 => "-79228162514264337593543950335".to_string(),
            1 => "79228162514264337593543950335".to_string(),
            _ => format!("{}.{:02}", seed % 1000, seed % 100),
        }
    }))
    .unwrap()
}

/// The `i`th request an assistant proposed, where it stands drawn from `seed`.
fn listed(seed: u64, i: u64) -> esimdash_front::requests::approval::Listed {
    use esimdash_front::requests::{Proposal, Standing};
    let spend = esimdash_domain::purchase::Spend::order(text(seed >> i, "fr-1gb"), 1);
    let request = Proposal {
        account: "acct",
        spend: &spend,
        plan_name: &text(seed, "France"),
        unit_price: rust_decimal::Decimal::new(seed as i64 % 1000, 2),
        total: rust_decimal::Decimal::new(seed as i64 % 1000, 2),
        reason: &text(seed >> 3, "asked"),
        proposed_by: &text(seed >> 5, "assistant"),
        unsure: seed.is_multiple_of(5).then_some("the eSIM's record could not be read"),
    }
    .request(chrono::Utc::now());
    let standing = match (seed >> i) % 4 {
        0 => Standing::Pending,
        1 => Standing::Expired,
        2 => Standing::Paid {
            order_no: text(seed, "B1"),
        },
        _ => Standing::Refused { why: text(seed, "no") },
    };
    esimdash_front::requests::approval::Listed {
        request,
        standing,
        esim: seed.is_multiple_of(2).then(|| text(seed, "in use")),
    }
}

/// A page of `count` items with a `total` that may disagree with it (a server can be wrong).
fn page_numbers(seed: u64) -> (u64, u64, u64) {
    let count = seed % 60;
    let total = match seed % 5 {
        0 => 0,
        1 => count,
        _ => (seed >> 8) % 100_000,
    };
    ((seed >> 4) % 5 + 1, count, total)
}

/// Data for `request`: mostly what it asked for, sometimes something else entirely.
fn data_for(request: &Request, seed: u64) -> Payload {
    let (page, count, total) = page_numbers(seed);
    let orders = || -> Vec<Order> { (0..count).map(|i| order(seed, i)).collect() };
    let asked = if seed.is_multiple_of(11) {
        &Request::Profile
    } else {
        request
    };
    match asked {
        Request::Profile => Payload::Profile(profile(seed)),
        Request::Plans => Payload::Plans((0..count).map(|i| plan(seed, i)).collect()),
        // Mostly plans; now and then with a caveat, or refused for an eSIM that cannot take data.
        Request::TopupPlans { .. } => Payload::TopupOffer(match seed % 7 {
            0 => esimdash_front::purchase::TopupOffer::Refused {
                class: Some(esimdash_domain::esim_state::Class::Deleted),
                why: text(seed, "deleted"),
            },
            1 => esimdash_front::purchase::TopupOffer::Plans {
                plans: (0..count).map(|i| plan(seed, i)).collect(),
                unsure: Some(text(seed, "not confirmed")),
            },
            _ => esimdash_front::purchase::TopupOffer::Plans {
                plans: (0..count).map(|i| plan(seed, i)).collect(),
                unsure: None,
            },
        }),
        // Mostly the same plans for each eSIM; now and then the last is offered nothing, other
        // plans, or is not found.
        Request::TopupOffers { iccids } => Payload::Offers(
            iccids
                .iter()
                .enumerate()
                .map(|(n, iccid)| {
                    let odd = n + 1 == iccids.len();
                    let offered = match seed % 13 {
                        0 if odd => Err(text(seed, "not in this account")),
                        1 if odd => Ok(Vec::new()),
                        2 if odd => Ok((3..6).map(|i| plan(seed >> 1, i)).collect()),
                        _ => Ok((0..count.clamp(1, 8)).map(|i| plan(seed, i)).collect()),
                    };
                    (iccid.clone(), offered)
                })
                .collect(),
        ),
        Request::Plan { .. } => Payload::Plan(plan(seed, 1)),
        // The orders as the money view sums them, at a fixed time near theirs.
        Request::Money => {
            let ledger: esimdash_ledger::Ledger = orders()
                .iter()
                .filter_map(|o| esimdash_ledger::Sale::of(o).ok())
                .collect();
            let now = chrono::DateTime::parse_from_rfc3339("2026-11-26T12:00:00Z")
                .unwrap()
                .to_utc();
            Payload::Money(Box::new(esimdash_ledger::overview::Overview::of(
                &ledger,
                now,
                &chrono::Utc,
            )))
        }
        Request::RefreshEsims { .. } => Payload::Refreshed,
        Request::Orders(_) => Payload::Orders(
            serde_json::from_value(json!({"page": page, "pageSize": 50, "total": total, "orders": []})).unwrap(),
        )
        .with_orders(orders()),
        Request::Esims(_) => Payload::Esims(
            serde_json::from_value(json!({"page": page, "pageSize": 50, "total": total, "esims": []})).unwrap(),
        )
        .with_esims((0..count).map(|i| esim(seed, i)).collect()),
        // The index's own page comes once, as its answer, with its place.
        Request::EsimScan { page: number } => {
            let esims: Vec<_> = (0..count).map(|i| esim(seed, i)).collect();
            let place = PagePlace {
                page: *number,
                size: 100,
                total,
            };
            Payload::IndexPage {
                seen: Box::new(Seen::page(&esims, place, 0)),
                total,
            }
        }
        Request::FindEsim { .. } => Payload::FoundEsim(
            match seed % 3 {
                0 => Found::Esim(Box::new(esim(seed, 1))),
                1 => Found::Absent,
                _ => Found::Unknown(esimdash_api::Searched {
                    pages_read: seed % 4,
                    pages: seed % 9 + 4,
                    esims_seen: seed % 400,
                    stop: Some(esimdash_api::SweepStop::Near),
                }),
            },
            Vec::new(),
        ),
        Request::ActivationCode { .. } => Payload::ActivationCode(if seed.is_multiple_of(2) {
            Ok(text(seed, "LPA:1$rsp.example$XYZ"))
        } else {
            Err(text(seed, "no QR"))
        }),
        Request::UpdateProfile(_) => Payload::ProfileSaved(profile(seed)),
        Request::OrdersOfPlan { .. } => {
            Payload::OrderNumbers(orders().into_iter().map(|o| o.record.provider_order_no).collect())
        }
        Request::Pay(_) => Payload::Paid(Paid {
            placed: Placed {
                order: order(seed, 1),
                balance_usd: Some(rust_decimal::Decimal::new((seed % 100_000) as i64, 2)),
            },
            delivery: if seed.is_multiple_of(2) {
                Delivery::Answered
            } else {
                Delivery::Resent { replayed: true }
            },
            charged_other: seed.is_multiple_of(7).then(|| esimdash_domain::purchase::ChargedOther {
                charged: rust_decimal::Decimal::new(1320, 2),
                confirmed: rust_decimal::Decimal::new(660, 2),
                balance_moved: None,
            }),
        }),
        Request::LookUpPayment { .. } => Payload::FoundOrder(seed.is_multiple_of(2).then(|| order(seed, 2))),
        // Requests an assistant proposed: some waiting (their eSIM read or not), some decided.
        Request::Requests => Payload::Requests((0..count % 4).map(|i| listed(seed, i)).collect()),
        Request::Triage { .. } => Payload::Triaged(Box::new(Ok(esimdash_front::triage::assess(
            &esim(seed, 0),
            &[],
            esimdash_front::triage::Read {
                country: seed.is_multiple_of(2).then(|| "FR".to_string()),
                code: if seed.is_multiple_of(3) {
                    Ok("LPA:1$rsp.example$ABC".to_string())
                } else {
                    Err(text(seed, "no QR image"))
                },
                ..esimdash_front::triage::Read::default()
            },
            chrono::Utc::now(),
        )))),
        Request::Decide { .. } => Payload::Decided(esimdash_front::requests::approval::Told {
            text: text(seed, "Approved and paid"),
            ok: seed.is_multiple_of(2),
            paid: seed.is_multiple_of(3).then_some(None),
        }),
    }
}

/// Page payloads are built empty and filled, so the JSON above stays small.
trait Fill {
    fn with_orders(self, orders: Vec<Order>) -> Self;
    fn with_esims(self, esims: Vec<Esim>) -> Self;
}

impl Fill for Payload {
    fn with_orders(mut self, orders: Vec<Order>) -> Self {
        if let Payload::Orders(page) = &mut self {
            page.orders = orders;
        }
        self
    }
    fn with_esims(mut self, esims: Vec<Esim>) -> Self {
        if let Payload::Esims(page) = &mut self {
            page.esims = esims;
        }
        self
    }
}

const EP: Endpoint = Endpoint::new("GET", "/reseller/orders");

fn error(kind: u8) -> ApiError {
    match kind {
        0 => ApiError::Unauthorized {
            endpoint: EP,
            message: "Invalid key".into(),
        },
        1 => ApiError::Revoked { endpoint: EP },
        2 => ApiError::RateLimited {
            endpoint: EP,
            retry_after: Duration::from_secs(2),
        },
        3..=5 => {
            let statuses = [
                (500, "boom\u{1b}[2J"),
                (402, "Insufficient balance"),
                (404, "not found"),
            ];
            let (status, message) = statuses[usize::from(kind - 3)];
            ApiError::Api {
                endpoint: EP,
                status,
                message: message.into(),
            }
        }
        6 => ApiError::Decode {
            endpoint: EP,
            status: 200,
            detail: "expected value".into(),
            excerpt: "<html>".into(),
        },
        7 | 8 => ApiError::Network {
            endpoint: EP,
            host: "127.0.0.1".into(),
            detail: "connection reset".into(),
            outcome_unknown: kind == 8,
        },
        9 | 10 => ApiError::Timeout {
            endpoint: EP,
            after: Duration::from_secs(30),
            outcome_unknown: kind == 10,
        },
        11 => ApiError::Repeat {
            endpoint: EP,
            earlier: "the same top-up (p-1 × 1) was placed at 14:02 (order B1)".into(),
        },
        12 => ApiError::Ambiguous {
            endpoint: EP,
            orders: vec!["B1".into(), "B2".into()],
        },
        _ => ApiError::Api {
            endpoint: EP,
            status: 422,
            message: "x".repeat(3000),
        },
    }
}

fn mouse(kind: u8, x: u16, y: u16) -> MouseEvent {
    let kind = match kind {
        0 => MouseEventKind::Down(MouseButton::Left),
        1 => MouseEventKind::Up(MouseButton::Left),
        2 => MouseEventKind::ScrollDown,
        3 => MouseEventKind::ScrollUp,
        4 => MouseEventKind::Drag(MouseButton::Left),
        5 => MouseEventKind::Down(MouseButton::Right),
        6 => MouseEventKind::Moved,
        _ => MouseEventKind::ScrollLeft,
    };
    MouseEvent {
        kind,
        column: x,
        row: y,
        modifiers: KeyModifiers::NONE,
    }
}

/// The app, what it waits for, and what the checks need to remember.
struct Run {
    app: App,
    now: Instant,
    size: (u16, u16),
    pending: Vec<(JobId, Request)>,
    done: Vec<(JobId, Request)>,
    unauthorized: bool,
    /// A payment sent and not yet answered.
    paying: Option<JobId>,
    /// A bulk top-up started and not yet ended: its run and its eSIMs.
    bulk: Option<(JobId, Vec<String>)>,
    terminal: Terminal<TestBackend>,
}

impl Run {
    /// A fresh app; `warm`, with its first requests (profile, catalog) answered with data.
    fn new(warm: Option<u64>) -> Self {
        let mut run = Run {
            app: App::new(false),
            now: Instant::now(),
            size: (120, 40),
            pending: Vec::new(),
            done: Vec::new(),
            unauthorized: false,
            paying: None,
            bulk: None,
            terminal: Terminal::new(TestBackend::new(120, 40)).unwrap(),
        };
        let effects = run.app.start();
        run.follow(&effects, false);
        if let Some(seed) = warm {
            while !run.pending.is_empty() {
                run.answer(0, |r| Ok(data_for(r, seed | 1)));
            }
        }
        run
    }

    fn confirming(&self) -> bool {
        match self.app.overlay() {
            Some(Overlay::Purchase(f)) => matches!(f.stage(), Stage::Confirming { .. } | Stage::Again { .. }),
            Some(Overlay::Bulk(f)) => *f.stage() == BulkStage::Confirming,
            _ => false,
        }
    }

    /// Takes in the effects of one step, checking what was sent.
    fn follow(&mut self, effects: &[Effect], was_confirming: bool) {
        let mut pays = 0;
        for effect in effects {
            match effect {
                Effect::BulkTopup { id, order } => {
                    pays += 1;
                    assert!(!self.unauthorized, "a bulk top-up after a 401");
                    assert!(was_confirming, "a bulk top-up without a confirmation");
                    assert!(self.bulk.is_none(), "a second bulk top-up while one runs");
                    assert!(!order.total.is_sign_negative(), "a negative total: {}", order.total);
                    if let Some(balance) = self.app.profile().and_then(|p| p.balance_usd) {
                        assert!(
                            balance >= order.total,
                            "paid {} from a balance of {balance}",
                            order.total
                        );
                    }
                    let iccids = order.iccids.iter().map(ToString::to_string).collect();
                    self.bulk = Some((*id, iccids));
                }
                Effect::Send { id, request } => {
                    assert!(!self.unauthorized, "sent after a 401: {request:?}");
                    if let Request::Pay(payment) = request {
                        pays += 1;
                        // Amounts out of range, or a balance short of them, never pay.
                        let total = payment.total.expect("a payment leaves with its total");
                        assert!(
                            !total.is_sign_negative() || total.is_zero(),
                            "a negative total was paid: {total}"
                        );
                        if let Some(balance) = self.app.profile().and_then(|p| p.balance_usd) {
                            assert!(balance >= total, "paid {total} from a balance of {balance}");
                        }
                        assert!(was_confirming, "a payment went out without a confirmation");
                        assert!(self.paying.is_none(), "a second payment while one is unanswered");
                        self.paying = Some(*id);
                    }
                    self.pending.push((*id, request.clone()));
                }
                Effect::Cancel(id) => self.pending.retain(|(p, _)| p != id),
                _ => {}
            }
        }
        assert!(pays <= 1, "{pays} payments from one confirmation");
    }

    fn answer(&mut self, n: usize, result: impl FnOnce(&Request) -> Result<Payload, ApiError>) {
        if self.pending.is_empty() {
            return;
        }
        let (id, request) = self.pending.remove(n % self.pending.len());
        let result = result(&request);
        if matches!(result, Err(ApiError::Unauthorized { .. } | ApiError::Revoked { .. })) {
            self.unauthorized = true;
        }
        if self.paying == Some(id) {
            self.paying = None;
        }
        self.done.push((id, request.clone()));
        // As the client's tap does: the eSIMs read reach the index before the answer (the
        // index's own pages come as their answer instead).
        if let Ok(Payload::Esims(page)) = &result {
            let place = match &request {
                Request::Esims(q) if q.status == StatusFilter::All => q.page.zip(q.page_size),
                _ => None,
            };
            let seen = match place {
                Some((number, size)) => Seen::page(
                    &page.esims,
                    PagePlace {
                        page: number,
                        size,
                        total: page.total,
                    },
                    0,
                ),
                None => Seen::records(&page.esims, 0),
            };
            let profile = self.app.session().profile.clone();
            self.keeping_the_cursor(|h| h.update(Msg::IndexSeen { profile, seen }));
        }
        // The index's own page is merged as it is answered: the same rule for the cursor.
        let index_page = matches!(result, Ok(Payload::IndexPage { .. }));
        let answer = Msg::Answer(Box::new(Answer { id, result }));
        if index_page {
            self.keeping_the_cursor(|h| h.update(answer));
        } else {
            self.update(answer);
        }
    }

    /// Runs `merge` (records read anew reaching the index), holding it to the rule that they
    /// move no cursor: it stays on its eSIM while that one is shown, and where it was when its
    /// eSIM left (never back to the first row).
    fn keeping_the_cursor(&mut self, merge: impl FnOnce(&mut Self)) {
        let selected = |app: &App| {
            let esims = app.esims();
            (esims.search_active() && esims.pinned().is_none())
                .then(|| esims.result_rows(app.index()).nth(esims.result_cursor()))
                .flatten()
                .map(|r| r.iccid().to_string())
        };
        let before = selected(&self.app);
        let at = self.app.esims().result_cursor();
        merge(self);
        let Some(before) = before else { return };
        let esims = self.app.esims();
        if esims.result_rows(self.app.index()).any(|r| r.iccid() == before) {
            assert_eq!(selected(&self.app), Some(before), "the cursor left its eSIM");
        } else if esims.search_active() && esims.whole_iccid().is_none() {
            let last = esims.result_count().saturating_sub(1);
            assert_eq!(
                esims.result_cursor(),
                at.min(last),
                "the cursor jumped when its row left"
            );
        }
    }

    fn update(&mut self, msg: Msg) {
        let was_confirming = self.confirming();
        let effects = self.app.update(msg, self.now);
        self.follow(&effects, was_confirming);
    }

    fn step(&mut self, step: &Step) {
        match step {
            Step::Key(code, ctrl) => {
                let modifiers = if *ctrl {
                    KeyModifiers::CONTROL
                } else {
                    KeyModifiers::NONE
                };
                self.update(Msg::Key(KeyEvent::new(*code, modifiers)));
            }
            Step::Mouse(kind, x, y) => self.update(Msg::Mouse(mouse(*kind, *x, *y))),
            Step::Resize(w, h) => {
                self.size = (*w, *h);
                self.update(Msg::Resize);
            }
            Step::Tick(ms) => {
                self.now += Duration::from_millis(u64::from(*ms));
                self.update(Msg::Tick);
            }
            Step::Buy => {
                for c in ['1', 'b'] {
                    self.update(Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)));
                }
                self.update(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
            }
            Step::Enter => self.update(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE))),
            Step::Search(kind) => {
                let text = ["3/8944", "3/0", "3/17", "3!"][*kind as usize % 4];
                for c in text.chars() {
                    self.update(Msg::Key(KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)));
                }
            }
            Step::BulkKeys(seed) => {
                for keys in [&['3'][..], &['*', 't']] {
                    for c in keys {
                        self.update(Msg::Key(KeyEvent::new(KeyCode::Char(*c), KeyModifiers::NONE)));
                    }
                    for _ in 0..self.pending.len() {
                        self.answer(0, |r| Ok(data_for(r, seed | 1)));
                    }
                }
                self.update(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
                // Odd seeds pay: at once (a double tap, never taken) and after the pause.
                if seed % 2 == 1 {
                    self.update(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
                    self.now += esimdash_tui::forms::bulk::PAY_PAUSE;
                    self.update(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
                }
            }
            Step::BulkTells(seed) => self.bulk_step(*seed),
            Step::Paste(seed) => self.update(Msg::Paste(text(*seed, "8944 q\r\n"))),
            Step::Data(n, seed) => self.answer(*n, |r| Ok(data_for(r, *seed))),
            Step::Error(n, kind) => self.answer(*n, |_| Err(error(*kind))),
            Step::Stray(id, seed) => {
                let (id, request) = match self.done.get(*id as usize % (self.done.len() + 1)) {
                    Some(done) => done.clone(),
                    None => (id | 1 << 62, Request::Profile),
                };
                let result = if seed.is_multiple_of(2) {
                    Ok(data_for(&request, *seed))
                } else {
                    Err(error((*seed % 12) as u8))
                };
                self.update(Msg::Answer(Box::new(Answer { id, result })));
            }
        }
    }

    /// The bulk run tells a step: its check done, a row, or its end (every eSIM placed, some,
    /// or nothing paid); the eSIMs it placed are unmarked by then.
    fn bulk_step(&mut self, seed: u64) {
        let Some((id, marked)) = self.bulk.clone() else { return };
        // A run pays only marks whose ICCID is a valid one.
        let iccids: Vec<Iccid> = marked.iter().filter_map(|i| Iccid::parse(i).ok()).collect();
        let step = match (seed % 4, iccids.first()) {
            (0, _) | (1, None) => BulkStep::Paying,
            (1, Some(first)) => BulkStep::Row {
                iccid: first.clone(),
                state: esimdash_front::bulk::State::Placed {
                    order: text(seed, "B1"),
                    now: true,
                    caveat: seed.is_multiple_of(5).then(|| {
                        esimdash_front::bulk::Caveat::ChargedOther(text(
                            seed,
                            "Charged 9.00 USD, not the 1.00 USD confirmed",
                        ))
                    }),
                },
            },
            (2, _) => BulkStep::Ended(Err(text(seed, "the total changed; nothing was paid"))),
            _ => {
                // The eSIMs in turn: placed, of unknown outcome, failed, the rest not paid.
                let mut rest = iccids.iter().cloned();
                let mut take = |shift: u32| -> Vec<Iccid> {
                    let n = (seed >> shift) as usize % (iccids.len() + 1);
                    rest.by_ref().take(n).collect()
                };
                let placed = take(8);
                let unknown: Vec<(Iccid, String)> =
                    take(16).into_iter().map(|i| (i, text(seed, "no answer"))).collect();
                let failed: Vec<(Iccid, String)> = take(24).into_iter().map(|i| (i, text(seed, "refused"))).collect();
                let not_paid = iccids.len() - placed.len() - unknown.len() - failed.len();
                BulkStep::Ended(Ok(BulkEnded {
                    problem: seed.is_multiple_of(3).then(|| text(seed, "the journal failed")),
                    ended: esimdash_front::bulk::Ended::Stopped,
                    not_paid,
                    placed,
                    failed,
                    unknown,
                    file: "rows.csv".into(),
                    result: Err(text(seed, "disk full")),
                }))
            }
        };
        // Placed, or perhaps placed: never marked for a second `t`. Refused: still marked.
        let (gone, kept) = match &step {
            BulkStep::Ended(ended) => {
                self.bulk = None;
                let ended = ended.as_ref().ok();
                let gone = ended.map(|e| {
                    let unknown = e.unknown.iter().map(|u| &u.0);
                    e.placed.iter().chain(unknown).map(Iccid::to_string).collect()
                });
                let kept = ended.map(|e| e.failed.iter().map(|f| f.0.to_string()).collect());
                (gone.unwrap_or_default(), kept.unwrap_or_default())
            }
            _ => (Vec::new(), Vec::new()),
        };
        let marked_before: Vec<String> = kept
            .into_iter()
            .filter(|i: &String| self.app.esims().marks().contains(&EsimIccid::parse(i)))
            .collect();
        self.update(Msg::Bulk { id, step });
        for iccid in gone {
            assert!(
                !self.app.esims().marks().contains(&EsimIccid::parse(&iccid)),
                "{iccid} was placed (or may have been) and is still marked"
            );
        }
        for iccid in marked_before {
            assert!(
                self.app.esims().marks().contains(&EsimIccid::parse(&iccid)),
                "{iccid} failed and was unmarked"
            );
        }
    }

    /// Draws, and checks the invariants that hold after every step.
    fn check(&mut self) {
        let (w, h) = self.size;
        self.terminal.resize(Rect::new(0, 0, w, h)).unwrap();
        let theme = Theme::dark(true);
        self.terminal.draw(|f| self.app.draw(f, &theme, self.now)).unwrap();
        // A view that says it is loading has a request in flight for it, also when the API is
        // unreachable or the session halted ("Loading page 1…" for ever was a bug).
        let buffer = self.terminal.backend().buffer();
        let rows: Vec<String> = (0..buffer.area.height)
            .map(|y| (0..buffer.area.width).map(|x| buffer[(x, y)].symbol()).collect())
            .collect();
        let loading = rows
            .iter()
            .find(|row| row.contains("loading…") || (row.contains(" Loading ") && row.contains('…')));
        assert!(
            loading.is_none() || !self.pending.is_empty(),
            "the screen says loading with nothing in flight: {loading:?}"
        );
        // No hint names an empty key: a key unbound or asked of the wrong context once drew
        // ": top it up".
        let keyless = rows.iter().find(|row| {
            let text = row.trim_start_matches([' ', '│']);
            text.starts_with(": ") || [" · : ", "(: "].iter().any(|gap| row.contains(gap))
        });
        assert!(keyless.is_none(), "a hint without its key: {keyless:?}");
        // Wherever `?` opens help and the bottom line shows keys, it ends with help, at every
        // size the dashboard draws (a message, a countdown or a window's own keys take it).
        let keys_shown = matches!(self.app.mode(), Mode::Browse | Mode::Detail)
            && self.app.flash_message().is_none()
            && self.app.export().is_none()
            && self.app.halt().is_none()
            && self.app.quitting().is_none()
            && self.app.rate_limited_until().is_none()
            && self.app.pacing_countdown().is_none_or(|t| t <= self.now)
            && w >= view::MIN_WIDTH
            && h >= view::MIN_HEIGHT;
        if keys_shown {
            let bottom = rows.last().map_or("", |r| r.trim_end());
            assert!(bottom.ends_with("? help"), "the bottom line at {w}×{h}: {bottom:?}");
        }
        let catalog = self.app.catalog();
        assert!(
            catalog.cursor() < catalog.visible().len().max(1),
            "catalog cursor {} of {}",
            catalog.cursor(),
            catalog.visible().len()
        );
        let orders = self.app.orders().list();
        let esims = self.app.esims().list();
        for (name, cursor, total, page, pages) in [
            (
                "orders",
                orders.cursor(),
                orders.total(),
                orders.current_page(),
                orders.page_count(),
            ),
            (
                "eSIMs",
                esims.cursor(),
                esims.total(),
                esims.current_page(),
                esims.page_count(),
            ),
        ] {
            // Pages are counted (and shown, "page 2/8") once the list's total is known; before
            // that a page may be any one asked for, such as the page of a search result the
            // index placed (Esc on it), which then tells the total.
            if let Some(total) = total {
                assert!(cursor < total.max(1), "{name} cursor {cursor} of {total}");
                assert!(page <= pages.max(1), "{name} page {page} of {pages}");
            }
        }
        assert!(
            self.app.esims().result_cursor() < self.app.esims().result_count().max(1),
            "search cursor"
        );
        // The spinner turns only while something is in flight; every read in flight is one the
        // app still waits for (none is forgotten without being cancelled, none spends the
        // budget for nobody), and the app waits for no read that was not sent.
        assert!(
            !self.app.is_loading() || !self.pending.is_empty(),
            "loading with nothing in flight"
        );
        let mut reads: Vec<JobId> = self
            .pending
            .iter()
            .filter(|(_, r)| !r.writes())
            .map(|(id, _)| *id)
            .collect();
        let mut awaited = if self.unauthorized {
            Vec::new()
        } else {
            self.app.reads_in_flight()
        };
        reads.sort_unstable();
        awaited.sort_unstable();
        assert_eq!(reads, awaited, "reads in flight and reads the app waits for");
        // The index never holds more eSIMs than the list has, and reads one page at a time.
        let index = self.app.index().read();
        if let Some(total) = index.total() {
            assert!(
                index.covered() <= total,
                "{} eSIMs in an index of {total}",
                index.covered()
            );
        }
        let scans: Vec<u64> = self
            .pending
            .iter()
            .filter_map(|(_, r)| match r {
                Request::EsimScan { page } => Some(*page),
                _ => None,
            })
            .collect();
        assert!(scans.len() <= 1, "index pages in flight at once: {scans:?}");
        // My eSIMs' own views (its pane alone, the QR code alone) are never left over another
        // tab: a find that lands while another tab is shown once opened "the eSIM's detail" on it.
        if matches!(self.app.mode(), Mode::Detail | Mode::Zoom { .. }) {
            assert_eq!(self.app.tab(), Tab::Esims, "My eSIMs' view over another tab");
        }
        // An order's detail that says its eSIM is being looked for has the index reading, or
        // holding its read only for an answer in flight (a lookup, the list's first page): a
        // lookup cancelled by a tab switch once held it for good.
        if let Some(Overlay::OrderDetail(order)) = self.app.overlay() {
            let at_hand = self.app.esims().at_hand(self.app.index());
            let esims = self.app.index().order_esims(order, at_hand.into_iter());
            if matches!(esims, esimdash_tui::index::OrderEsims::LookingFor { .. }) && scans.is_empty() {
                let held = self.app.esims().holds_index(self.app.index());
                let awaited =
                    (self.pending.iter()).any(|(_, r)| matches!(r, Request::FindEsim { .. } | Request::Esims(_)));
                assert!(
                    !held || awaited,
                    "an order's detail looks for its eSIM while nothing reads"
                );
            }
        }
        // The money of 30 days: said to be read only while a read of it is in flight.
        let money_reads = self.pending.iter().filter(|(_, r)| matches!(r, Request::Money)).count();
        let reading = rows
            .iter()
            .any(|row| row.contains("Reading the orders") || row.contains("Reading what is new"));
        assert!(
            !reading || money_reads > 0,
            "the screen says the orders are being read with none in flight"
        );
        // The results kept up as pages come (only what a read added is judged) are those a
        // search of the whole index gives now, in the same order.
        let esims = self.app.esims();
        if esims.search_active() {
            let index = self.app.index().inventory();
            let attention = esims.attention().then(|| self.app.index().attention_at());
            let fresh: Vec<String> = index
                .select(esims.search().applied(), esims.status(), attention)
                .into_iter()
                .filter_map(|e| index.row(e as usize).map(|r| r.iccid.to_string()))
                .collect();
            let kept: Vec<String> = esims
                .result_rows(self.app.index())
                .filter_map(|r| match r {
                    ResultRow::Indexed(row) => Some(row.iccid.to_string()),
                    ResultRow::Fetched(_) => None,
                })
                .collect();
            assert_eq!(kept, fresh, "the results kept up and a search of the index now");
        }
        match self.app.overlay() {
            Some(Overlay::Purchase(form)) => assert!(form.cursor() < form.plans().len().max(1), "purchase cursor"),
            Some(Overlay::Bulk(form)) => {
                assert!(
                    form.choice().cursor() < form.choice().plans().len().max(1),
                    "bulk cursor"
                );
                // The window says it pays only while its run goes on.
                if let BulkStage::Paying(progress) = form.stage() {
                    assert_eq!(
                        self.bulk.as_ref().map(|b| b.0),
                        Some(progress.run),
                        "paying without a run"
                    );
                }
            }
            Some(Overlay::StatusPicker { choices, cursor, .. }) => assert!(*cursor < choices.len(), "status cursor"),
            Some(Overlay::AccountPicker { names, cursor, .. }) => assert!(*cursor < names.len().max(1), "picker"),
            _ => {}
        }
    }
}

proptest! {
    #![proptest_config(crate::common::property_config())]

    #[test]
    fn any_sequence_of_input_and_answers_keeps_the_app_whole(
        warm in prop::option::of(any::<u64>()),
        steps in prop::collection::vec(step(), 1..32),
    ) {
        let mut run = Run::new(warm);
        run.check();
        for step in &steps {
            run.step(step);
            run.check();
        }
    }
}

/// A case the random sessions found: quitting (Ctrl-C) while the header's profile is read, the
/// money read refused with 402 (the profile then no longer awaited, and not read again while
/// quitting), then the profile's answer a 401: the key refused halts all the same.
#[test]
fn a_401_halts_even_when_no_one_awaits_its_answer_any_more() {
    let mut run = Run::new(None);
    run.check();
    for step in [
        Step::Key(KeyCode::Char('c'), true),
        Step::Error(1, 4),
        Step::Error(6, 0),
    ] {
        run.step(&step);
        run.check();
    }
}
