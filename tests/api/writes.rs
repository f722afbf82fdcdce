//! What the client enforces on every write, below any screen: read-only sessions send nothing,
//! the audit trail holds a line per stage (the "sent" one before anything leaves), and a lost
//! payment answer is sent once more under its idempotency key only where the server honours keys.

use crate::common::*;
use esimdash_api::audit::{self, Stage, Trail};
use esimdash_api::model::{EsimQuery, OrderQuery, ProfileUpdate, TopupRequest};
use esimdash_api::{ApiError, ClientOptions, Credentials, Delivery, Payment};
use esimdash_domain::iccid::Iccid;
use esimdash_domain::order_no::OrderNo;
use esimdash_domain::purchase::Spend;
use esimdash_sandbox::RunningSandbox;
use rust_decimal::Decimal;
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

fn trail_in(dir: &tempfile::TempDir) -> Trail {
    Trail {
        path: dir.path().join("state/esimdash/audit.jsonl"),
        profile: "sandbox".into(),
    }
}

/// A quick client's options, writing its trail to `trail`.
fn audited(trail: &Trail) -> ClientOptions {
    ClientOptions {
        audit: Some(trail.clone()),
        ..quick()
    }
}

/// A top-up of Acme's first in-use eSIM, and its total.
async fn a_topup(sb: &RunningSandbox) -> (Payment, Decimal) {
    let client = acme(sb);
    let q = EsimQuery {
        status: "in_use".into(),
        ..Default::default()
    };
    let iccid = client.esims(&q).await.unwrap().esims[0]
        .raw_order_json
        .iccid
        .valid()
        .unwrap()
        .clone();
    let plan = client.topup_plans(&iccid).await.unwrap().remove(0);
    let total = plan.price.unwrap();
    let spend = Spend::topup(iccid.clone(), plan.slug, 1);
    // The tests here pay the same top-up again on purpose: confirmed twice (the rule against an
    // accidental repeat is tested on its own, in settling.rs).
    (Payment::new(spend, Some(total)).again(), total)
}

fn stages(trail: &Trail) -> Vec<(Stage, Option<u32>)> {
    audit::read(&trail.path)
        .unwrap()
        .entries
        .iter()
        .map(|e| (e.stage, e.attempt))
        .collect()
}

#[tokio::test]
async fn a_read_only_session_sends_no_write_and_says_which_setting() {
    let sb = sandbox().await;
    let dir = tempfile::tempdir().unwrap();
    let client = acme_with(
        &sb,
        ClientOptions {
            read_only: Some("--read-only".into()),
            ..audited(&trail_in(&dir))
        },
    );
    let (payment, _) = a_topup(&sb).await;
    let before = sb.api_requests_received();
    let order = Payment::new(Spend::order(payment.slug(), 1), None);
    for p in [&payment, &order] {
        let err = client.pay(p).await.unwrap_err();
        assert!(
            matches!(&err, ApiError::ReadOnly { setting, .. } if setting == "--read-only"),
            "{err:?}"
        );
        assert!(err.to_string().contains("read-only (--read-only)"), "{err}");
    }
    let request = TopupRequest {
        iccid: payment.iccid().unwrap().clone(),
        slug: payment.slug().to_string(),
        qty: 1,
    };
    assert!(matches!(client.topup(&request).await, Err(ApiError::ReadOnly { .. })));
    let update = ProfileUpdate {
        company_name: Some("Taken over".into()),
        ..Default::default()
    };
    assert!(matches!(
        client.update_profile(&update).await,
        Err(ApiError::ReadOnly { .. })
    ));
    assert_eq!(sb.api_requests_received(), before, "nothing reached the server");
    // Reading still works.
    assert!(client.balance().await.is_ok());
    // Each refusal is in the trail: asked, then refused.
    let read = audit::read(&trail_in(&dir).path).unwrap();
    let lines: Vec<(Stage, &str)> = read.entries.iter().map(|e| (e.stage, e.action.as_str())).collect();
    assert_eq!(
        lines,
        [
            (Stage::Asked, "topup"),
            (Stage::Refused, "topup"),
            (Stage::Asked, "order"),
            (Stage::Refused, "order"),
            (Stage::Asked, "topup"),
            (Stage::Refused, "topup"),
            (Stage::Asked, "profile"),
            (Stage::Refused, "profile"),
        ]
    );
}

#[tokio::test]
async fn the_trail_holds_each_stage_of_a_top_up_a_lost_answer_and_its_lookup() {
    let sb = sandbox().await;
    let dir = tempfile::tempdir().unwrap();
    let trail = trail_in(&dir);
    let options = ClientOptions {
        request_timeout: Duration::from_millis(800),
        ..audited(&trail)
    };
    // A server never seen to honour keys: the lost answer is not sent again, but looked up.
    let client = acme_with(&sb, options.clone());
    let (payment, total) = a_topup(&sb).await;
    let before: HashSet<OrderNo> = client
        .recent_orders_for(payment.slug(), payment.iccid())
        .await
        .unwrap()
        .into_iter()
        .map(|o| o.record.provider_order_no)
        .collect();
    let balance = client.balance().await.unwrap();
    sb.lose_next_writes(1);
    let posts = sb.api_requests_received();
    let err = client.pay(&payment).await.unwrap_err();
    assert!(err.outcome_unknown(), "{err}");
    let found = client.look_up_payment(&payment, &before).await.unwrap();
    let order = found.expect("the server carried it out; the order list shows it");
    assert_eq!(
        sb.api_requests_received(),
        posts + 1 + 1,
        "one POST and one lookup: nothing sent again"
    );
    assert_eq!(client.balance().await.unwrap(), balance - total);
    assert_eq!(
        stages(&trail),
        [
            (Stage::Asked, None),
            (Stage::Sent, None),
            (Stage::Unknown, None),
            (Stage::LookedUp, None)
        ]
    );
    let read = audit::read(&trail.path).unwrap();
    let looked_up = &read.entries[3];
    assert_eq!(
        looked_up.order_no.as_deref(),
        Some(order.record.provider_order_no.as_str())
    );
    for e in &read.entries {
        assert_eq!(e.profile, "sandbox");
        assert_eq!(e.access_code, "ak_demo_acme");
        assert_eq!(e.api_host, format!("{}", sb.addr));
        assert_eq!(e.iccid.as_deref(), payment.iccid().map(Iccid::as_str));
        assert_eq!(e.slug.as_deref(), Some(payment.slug()));
        assert_eq!(e.quantity, Some(1));
        assert_eq!(e.total, Some(esimdash_domain::money::format_amount(total)));
        assert_eq!(e.idempotency_key.as_deref(), Some(payment.key.as_str()));
        assert!(!e.user.is_empty());
    }
    let text = std::fs::read_to_string(&trail.path).unwrap();
    assert!(!text.contains("sk_demo_acme"), "never the secret");

    // A top-up answered: asked, sent, answered with the order and the balance after; the
    // server echoed the key, which the trail keeps.
    let (second, total) = a_topup(&sb).await;
    let paid = client.pay(&second).await.unwrap();
    assert_eq!(paid.delivery, Delivery::Answered);
    let read = audit::read(&trail.path).unwrap();
    let answered = read.entries.last().unwrap();
    assert_eq!(answered.stage, Stage::Answered);
    assert_eq!(answered.outcome.as_deref(), Some("placed"));
    assert_eq!(
        answered.order_no.as_deref(),
        Some(paid.placed.order.record.provider_order_no.as_str())
    );
    assert_eq!(
        answered.balance_after,
        Some(esimdash_domain::money::format_amount(balance - total - total))
    );
    assert_eq!(answered.key_echoed, Some(true));

    // A new session (a new client) knows from the trail that this server honours keys: its
    // lost answer is sent once more under the same key, and the server replays it.
    let next = acme_with(&sb, options);
    assert!(next.honours_keys());
    let (third, total) = a_topup(&sb).await;
    let balance = next.balance().await.unwrap();
    let orders = next.orders(&OrderQuery::default()).await.unwrap().total;
    sb.lose_next_writes(1);
    let paid = next.pay(&third).await.unwrap();
    assert_eq!(paid.delivery, Delivery::Resent { replayed: true });
    assert_eq!(next.balance().await.unwrap(), balance - total, "debited once");
    assert_eq!(next.orders(&OrderQuery::default()).await.unwrap().total, orders + 1);
    let tail: Vec<_> = stages(&trail).into_iter().rev().take(5).rev().collect();
    assert_eq!(
        tail,
        [
            (Stage::Asked, None),
            (Stage::Sent, None),
            (Stage::Unknown, None),
            (Stage::Sent, Some(2)),
            (Stage::Answered, Some(2))
        ]
    );
    let read = audit::read(&trail.path).unwrap();
    assert_eq!(read.entries.last().unwrap().outcome.as_deref(), Some("replayed"));
}

#[tokio::test]
async fn nothing_is_sent_when_the_sent_line_cannot_be_written() {
    let sb = sandbox().await;
    let dir = tempfile::tempdir().unwrap();
    // A directory where the file should be: no line can be appended.
    let path = dir.path().join("audit.jsonl");
    std::fs::create_dir(&path).unwrap();
    let trail = Trail {
        path,
        profile: "sandbox".into(),
    };
    let client = acme_with(
        &sb,
        ClientOptions {
            audit: Some(trail),
            ..quick()
        },
    );
    let (payment, _) = a_topup(&sb).await;
    let balance = client.balance().await.unwrap();
    let before = sb.api_requests_received();
    let err = client.pay(&payment).await.unwrap_err();
    assert!(matches!(err, ApiError::Audit { .. }), "{err:?}");
    assert!(err.to_string().contains("not sent: the audit trail"), "{err}");
    assert_eq!(sb.api_requests_received(), before);
    assert_eq!(client.balance().await.unwrap(), balance);
}

/// A server that answers payments in turn: the first is answered (echoing the key), the second
/// is held past the client's timeout (lost), and every later one, the resend, gets `resend`.
async fn lossy(resend: u16) -> (String, Arc<AtomicUsize>) {
    use axum::http::{HeaderMap, StatusCode};
    use axum::response::IntoResponse;
    let hits = Arc::new(AtomicUsize::new(0));
    let count = hits.clone();
    let placed =
        r#"{"ok":true,"order":{"providerOrderNo":"B1","slug":"x","status":"got_resource"},"balanceUsd":"10.00"}"#;
    let app = axum::Router::new().fallback(move |headers: HeaderMap| {
        let n = count.fetch_add(1, Ordering::SeqCst);
        let key = headers.get("idempotency-key").cloned();
        async move {
            let status = match n {
                0 => StatusCode::CREATED,
                1 => {
                    tokio::time::sleep(Duration::from_secs(3)).await;
                    StatusCode::CREATED
                }
                _ => StatusCode::from_u16(resend).unwrap(),
            };
            let body = if status.is_success() {
                placed.to_string()
            } else {
                r#"{"error":"no"}"#.to_string()
            };
            let mut response = (status, body).into_response();
            if let Some(key) = key {
                response.headers_mut().insert("idempotency-key", key);
            }
            response
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("http://{addr}/api/v1"), hits)
}

/// A lost answer sent again under its key: only a refusal that says the first was never
/// carried out settles it. A 429, a gateway's 504 or a 401 on the resend leave it unknown (as
/// the trail says), and a 409 ("still in progress") is asked again, then left unknown: never
/// "not placed", which would let a re-run pay twice.
#[tokio::test]
async fn a_resend_is_settled_only_by_a_refusal_of_the_first_and_a_409_is_never_not_placed() {
    for (resend, settles) in [
        (429, false),
        (504, false),
        (401, false),
        (409, false),
        (402, true),
        (404, true),
    ] {
        let (base, hits) = lossy(resend).await;
        let dir = tempfile::tempdir().unwrap();
        let trail = trail_in(&dir);
        let client = client_for(
            &base,
            Credentials::pair("ak_demo_acme", "sk_demo_acme"),
            ClientOptions {
                request_timeout: Duration::from_millis(600),
                ..audited(&trail)
            },
        );
        let topup = |qty| {
            Payment::new(
                Spend::topup(Iccid::parse("8944100000000000018").unwrap(), "x", qty),
                Some(Decimal::ONE),
            )
        };
        client.pay(&topup(1)).await.expect("answered, the key echoed");
        let error = client.pay(&topup(2)).await.unwrap_err();
        assert!(hits.load(Ordering::SeqCst) >= 3, "{resend}: sent once more");
        assert_eq!(error.outcome_unknown(), !settles, "{resend}: {error}");
        if resend == 409 {
            assert!(matches!(error, ApiError::InProgress { .. }), "{error:?}");
        }
        let read = audit::read(&trail.path).unwrap();
        let records = audit::payments(&read.entries, client.who());
        let second = records.last().unwrap();
        assert_eq!(
            second.outcome.is_some(),
            settles,
            "{resend}: the trail leaves it open unless refused: {:?}",
            read.entries.iter().map(|e| e.stage).collect::<Vec<_>>()
        );
    }
}

/// A trail kept before open marks existed: its open payment has no mark, yet the first start
/// reads the trail through once and settles it, and notes that it did.
#[tokio::test]
async fn a_payment_left_open_in_a_trail_without_marks_is_settled_at_the_first_start() {
    let sb = sandbox().await;
    let dir = tempfile::tempdir().unwrap();
    let trail = trail_in(&dir);
    let client = acme_with(&sb, audited(&trail));
    let (payment, _) = a_topup(&sb).await;
    // Written as an older esimdash did: the line alone, no mark beside it.
    let mut asked = audit::Entry::new(
        &audit::Who {
            profile: "sandbox".into(),
            api_host: sb.addr.to_string(),
            access_code: "ak_demo_acme".into(),
            account: "ak_demo_acme".into(),
            user: "ana".into(),
        },
        Stage::Asked,
        "topup",
    );
    // An older esimdash named no account: the access code was the account.
    asked.account = None;
    asked.iccid = payment.iccid().cloned().map(Into::into);
    asked.slug = Some(payment.slug().to_string());
    asked.quantity = Some(1);
    asked.idempotency_key = Some(payment.key.clone());
    std::fs::create_dir_all(trail.path.parent().unwrap()).unwrap();
    std::fs::write(&trail.path, format!("{}\n", serde_json::to_string(&asked).unwrap())).unwrap();

    client.settle_earlier().await;
    assert_eq!(
        stages(&trail),
        [(Stage::Asked, None), (Stage::Settled, None)],
        "never sent: settled"
    );
    let marks = trail.open_marks(&client.who().account);
    assert!(marks.scanned && marks.names.is_empty(), "{marks:?}");
}

/// The trail is a record, not an instruction: a "sent" line added by hand (without the seal
/// only the account's secret makes), its open mark beside it, is settled from the order list
/// at the next start and never sent, though the server honours keys.
#[tokio::test]
async fn a_sent_line_written_by_hand_is_settled_never_paid() {
    let sb = sandbox().await;
    let dir = tempfile::tempdir().unwrap();
    let trail = trail_in(&dir);
    let options = audited(&trail);
    let client = acme_with(&sb, options.clone());
    let (first, _) = a_topup(&sb).await;
    client
        .pay(&first)
        .await
        .expect("paid: the trail now shows keys honoured");
    let (payment, _) = a_topup(&sb).await;
    let orders = client.orders(&OrderQuery::default()).await.unwrap().total;
    let mut sent = audit::Entry::new(client.who(), Stage::Sent, "topup");
    sent.time = chrono::Utc::now() - chrono::Duration::minutes(2);
    sent.iccid = payment.iccid().cloned().map(Into::into);
    sent.slug = Some(payment.slug().to_string());
    sent.quantity = Some(1);
    sent.idempotency_key = Some(payment.key.clone());
    trail.append(&sent).unwrap();
    trail.set_open(&client.who().account, &payment.key, true);
    assert!(!trail.open_marks(&client.who().account).names.is_empty(), "marked open");

    let next = acme_with(&sb, options);
    assert!(next.honours_keys());
    next.settle_earlier().await;
    assert_eq!(
        next.orders(&OrderQuery::default()).await.unwrap().total,
        orders,
        "nothing paid"
    );
    assert_eq!(
        stages(&trail).last(),
        Some(&(Stage::Settled, None)),
        "settled from the list"
    );
}
