//! Where money moves: top-ups and new orders, each error row of docs/api-contract.md, and concurrent
//! requests that would overdraw the wallet.

use crate::common::*;
use esimdash_api::model::{EsimQuery, OrderQuery, OrderRequest, TopupRequest};
use esimdash_domain::iccid::Iccid;
use esimdash_domain::status::Status;
use esimdash_sandbox::RunningSandbox;
use rust_decimal::Decimal;
use std::time::Duration;

async fn usable_iccid(sb: &RunningSandbox) -> Iccid {
    let q = EsimQuery {
        status: "in_use".into(),
        ..Default::default()
    };
    acme(sb).esims(&q).await.unwrap().esims[0]
        .raw_order_json
        .iccid
        .valid()
        .unwrap()
        .clone()
}

/// An eSIM in use (see `usable_iccid`) and the slug of the first top-up offered for it.
async fn usable_iccid_and_top_up(sb: &RunningSandbox) -> (Iccid, String) {
    let iccid = usable_iccid(sb).await;
    let slug = acme(sb).topup_plans(&iccid).await.unwrap()[0].slug.clone();
    (iccid, slug)
}

async fn order_count(sb: &RunningSandbox) -> u64 {
    acme(sb).orders(&Default::default()).await.unwrap().total
}

#[tokio::test]
async fn a_top_up_debits_its_total_once_and_shows_as_the_newest_order() {
    let (sb, client) = sandbox_and_acme().await;
    let iccid = usable_iccid(&sb).await;
    let plan = client.topup_plans(&iccid).await.unwrap().remove(0);
    let before = client.balance().await.unwrap();
    let count = order_count(&sb).await;

    let placed = client
        .topup(&TopupRequest {
            iccid: iccid.clone(),
            slug: plan.slug.clone(),
            qty: 2,
        })
        .await
        .unwrap();
    let total = plan.price.unwrap() * Decimal::from(2);
    assert_eq!(placed.order.total_sell_price, Some(total));
    assert_eq!(placed.order.record.quantity, Some(2));
    assert_eq!(placed.balance_usd, Some(before - total));
    assert_eq!(client.balance().await.unwrap(), before - total);
    let orders = client.orders(&Default::default()).await.unwrap();
    assert_eq!(orders.total, count + 1);
    assert_eq!(
        orders.orders[0].record.provider_order_no,
        placed.order.record.provider_order_no
    );
    assert_eq!(orders.orders[0].record.slug, plan.slug);

    // The wire shape: 201 with ok, order and balanceUsd as a decimal string; qty defaults to 1.
    let r = acme_send(
        &sb,
        "POST",
        "/portal/topups",
        &format!(r#"{{"iccid":"{iccid}","slug":"{}"}}"#, plan.slug),
    )
    .await;
    assert_eq!(r.status, 201);
    assert_eq!(r.body["ok"], true);
    assert_eq!(r.body["order"]["quantity"], 1);
    let expected = esimdash_domain::money::format_amount(before - total - plan.price.unwrap());
    assert_eq!(r.body["balanceUsd"].as_str(), Some(expected.as_str()));
}

#[tokio::test]
async fn top_up_errors_debit_nothing() {
    let (sb, client) = sandbox_and_acme().await;
    let (iccid, slug) = usable_iccid_and_top_up(&sb).await;
    let before = client.balance().await.unwrap();
    let cases: Vec<(String, u16, &str)> = vec![
        (format!(r#"{{"slug":"{slug}"}}"#), 400, "Missing iccid or slug"),
        (format!(r#"{{"iccid":"{iccid}"}}"#), 400, "Missing iccid or slug"),
        (r#"{"iccid":"","slug":""}"#.into(), 400, "Missing iccid or slug"),
        ("{}".into(), 400, "Missing iccid or slug"),
        (
            format!(r#"{{"iccid":"8944000000000000000","slug":"{slug}"}}"#),
            404,
            "eSIM not found",
        ),
        (
            format!(r#"{{"iccid":"{iccid}","slug":"fr-1gb-7d"}}"#),
            400,
            "Slug not available for this eSIM",
        ),
        (
            format!(r#"{{"iccid":"{iccid}","slug":"topup-xx-made-up"}}"#),
            400,
            "Slug not available for this eSIM",
        ),
        ("not json".into(), 400, "Invalid JSON"),
    ];
    for (body, status, message) in &cases {
        let r = acme_send(&sb, "POST", "/portal/topups", body).await;
        assert_eq!((r.status, error_of(&r)), (*status, *message), "{body}");
    }
    for qty in ["0", "11", "1.5", "\"2\"", "-1", "true"] {
        let r = acme_send(
            &sb,
            "POST",
            "/portal/topups",
            &format!(r#"{{"iccid":"{iccid}","slug":"{slug}","qty":{qty}}}"#),
        )
        .await;
        assert_eq!(r.status, 400, "qty {qty}");
        assert!(error_of(&r).contains("qty"), "qty {qty}: {}", error_of(&r));
    }
    // A top-up plan of another location is not available for this eSIM either.
    let esims = first_100_esims(&client, "in_use").await;
    let here = &esims.esims[0].record.location_code;
    let elsewhere = esims.esims.iter().find(|e| &e.record.location_code != here).unwrap();
    let other_slug = client
        .topup_plans(elsewhere.raw_order_json.iccid.valid().unwrap())
        .await
        .unwrap()[0]
        .slug
        .clone();
    let err = client
        .topup(&TopupRequest {
            iccid: iccid.clone(),
            slug: other_slug,
            qty: 1,
        })
        .await
        .unwrap_err();
    assert_refused(&err, 400, "Slug not available for this eSIM");
    assert_eq!(client.balance().await.unwrap(), before);
}

#[tokio::test]
async fn insufficient_balance_is_402_and_debits_nothing() {
    let (sb, client) = sandbox_and_acme().await;
    // 10 × the dearest plan is far beyond 250.00.
    let err = client
        .place_order(&OrderRequest {
            slug: "gl-20gb-30d".into(),
            qty: 10,
        })
        .await
        .unwrap_err();
    assert_refused(&err, 402, "Insufficient balance");
    assert_eq!(client.balance().await.unwrap(), Decimal::new(25000, 2));
    assert_eq!(order_count(&sb).await, 400);
}

#[tokio::test]
async fn a_new_order_debits_once_and_its_esim_appears_when_allocated() {
    let config = esimdash_sandbox::SandboxConfig {
        rate_limit: 100_000,
        allocate_after: Duration::from_millis(300),
        ..Default::default()
    };
    let sb = sandbox_with(config).await;
    let client = acme(&sb);
    let esims_before = client.esims(&Default::default()).await.unwrap().total;
    let plan = client.plan("jp-3gb-15d").await.unwrap();
    let placed = client
        .place_order(&OrderRequest {
            slug: plan.slug.clone(),
            qty: 1,
        })
        .await
        .unwrap();
    assert_eq!(placed.order.record.status, Status::Pending);
    assert_eq!(placed.balance_usd, Some(Decimal::new(25000, 2) - plan.price.unwrap()));
    assert_eq!(
        client.esims(&Default::default()).await.unwrap().total,
        esims_before,
        "no profile yet"
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    let esims = client.esims(&Default::default()).await.unwrap();
    assert_eq!(esims.total, esims_before + 1);
    assert_eq!(
        esims.esims[0].record.provider_order_no,
        placed.order.record.provider_order_no
    );
    assert_eq!(esims.esims[0].record.status, Status::GotResource);
    let orders = client.orders(&Default::default()).await.unwrap();
    assert_eq!(orders.orders[0].record.status, Status::GotResource);

    for (body, status, message) in [
        (r#"{}"#, 400, "Missing slug"),
        (r#"{"slug":"nope"}"#, 404, "Plan not found"),
        (
            r#"{"slug":"jp-3gb-15d","qty":0}"#,
            400,
            "Invalid qty: a whole number from 1 to 10",
        ),
    ] {
        let r = acme_send(&sb, "POST", "/portal/orders", body).await;
        assert_eq!((r.status, error_of(&r)), (status, message), "{body}");
    }
}

#[tokio::test]
async fn concurrent_top_ups_never_overdraw_the_wallet() {
    let (sb, client) = sandbox_and_acme().await;
    let iccid = usable_iccid(&sb).await;
    let plan = client
        .topup_plans(&iccid)
        .await
        .unwrap()
        .into_iter()
        .max_by_key(|p| p.price)
        .unwrap();
    let price = plan.price.unwrap();
    let balance = client.balance().await.unwrap();
    let affordable = (balance / price).floor().try_into().unwrap_or(0usize);
    assert!(affordable >= 1, "the test needs at least one affordable top-up");
    let attempts = affordable + 6;
    let tasks: Vec<_> = (0..attempts)
        .map(|_| {
            let (client, request) = (
                client.clone(),
                TopupRequest {
                    iccid: iccid.clone(),
                    slug: plan.slug.clone(),
                    qty: 1,
                },
            );
            tokio::spawn(async move { client.topup(&request).await })
        })
        .collect();
    let mut ok = 0;
    for t in tasks {
        match t.await.unwrap() {
            Ok(_) => ok += 1,
            Err(e) => assert_eq!(e.status(), Some(402), "{e}"),
        }
    }
    assert_eq!(ok, affordable, "exactly the affordable number succeed");
    assert_eq!(
        client.balance().await.unwrap(),
        balance - price * Decimal::from(affordable as u64)
    );
    let q = OrderQuery {
        q: Some(plan.slug.clone()),
        page_size: Some(100),
        ..Default::default()
    };
    let placed = client
        .orders(&q)
        .await
        .unwrap()
        .orders
        .into_iter()
        .filter(|o| o.record.slug == plan.slug)
        .count();
    assert_eq!(placed, affordable);
    assert!(client.balance().await.unwrap() >= Decimal::ZERO);
}

/// docs/api-contract.md's idempotency keys, over the wire as any client would send them.
#[tokio::test]
async fn an_idempotency_key_debits_once_replays_its_answer_and_refuses_another_body() {
    let (sb, client) = sandbox_and_acme().await;
    let (iccid, slug) = usable_iccid_and_top_up(&sb).await;
    let before = client.balance().await.unwrap();
    let count = order_count(&sb).await;
    let url = format!("{}/portal/topups", sb.base_url());
    let keyed = |key: &'static str| [ACME_PAIR[0], ACME_PAIR[1], ("idempotency-key", key)];
    let body = format!(r#"{{"iccid":"{iccid}","slug":"{slug}","qty":1}}"#);

    let first = raw("POST", &url, &keyed("k-1"), Some(&body)).await;
    assert_eq!(first.status, 201, "{}", first.text);
    assert_eq!(first.headers["idempotency-key"], "k-1", "every answer echoes the key");
    assert!(first.headers.get("idempotent-replayed").is_none());
    let after_first = client.balance().await.unwrap();
    assert!(after_first < before);

    // The same body again (other spacing and key order): the stored answer, nothing debited.
    let same = format!(r#"{{ "qty": 1, "slug": "{slug}", "iccid": "{iccid}" }}"#);
    let again = raw("POST", &url, &keyed("k-1"), Some(&same)).await;
    assert_eq!(again.status, 201);
    assert_eq!(again.headers["idempotent-replayed"], "true");
    assert_eq!(again.headers["idempotency-key"], "k-1");
    assert_eq!(again.body, first.body, "the same answer, the same order number");
    assert_eq!(client.balance().await.unwrap(), after_first);
    assert_eq!(order_count(&sb).await, count + 1);

    // The same key with another body, or on the other route: 422, nothing debited.
    let other = format!(r#"{{"iccid":"{iccid}","slug":"{slug}","qty":2}}"#);
    let reused = raw("POST", &url, &keyed("k-1"), Some(&other)).await;
    assert_eq!(reused.status, 422);
    assert_eq!(error_of(&reused), "Idempotency-Key reused with a different request");
    assert_eq!(reused.headers["idempotency-key"], "k-1");
    let order_url = format!("{}/portal/orders", sb.base_url());
    let elsewhere = raw("POST", &order_url, &keyed("k-1"), Some(&body)).await;
    assert_eq!(elsewhere.status, 422);
    assert_eq!(client.balance().await.unwrap(), after_first);

    // A refusal is kept too: replayed as it was, even once the wallet could pay.
    let too_many = format!(r#"{{"slug":"{slug}","qty":0}}"#);
    let refused = raw("POST", &order_url, &keyed("k-2"), Some(&too_many)).await;
    assert_eq!(refused.status, 400);
    let replayed = raw("POST", &order_url, &keyed("k-2"), Some(&too_many)).await;
    assert_eq!((replayed.status, &replayed.body), (400, &refused.body));
    assert_eq!(replayed.headers["idempotent-replayed"], "true");

    // Keys are per reseller: Globex's "k-1" is its own.
    let globex = [GLOBEX_PAIR[0], GLOBEX_PAIR[1], ("idempotency-key", "k-1")];
    let plan = acme_get(&sb, "/portal/plans").await.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| !p["slug"].as_str().unwrap().starts_with("TOPUP"))
        .unwrap()["slug"]
        .as_str()
        .unwrap()
        .to_string();
    let theirs = raw("POST", &order_url, &globex, Some(&format!(r#"{{"slug":"{plan}"}}"#))).await;
    assert_eq!(theirs.status, 201, "{}", theirs.text);
    assert!(theirs.headers.get("idempotent-replayed").is_none());

    // A key that is not 1–255 printable ASCII characters is refused before anything is done.
    let long = "k".repeat(256);
    for bad in ["", long.as_str()] {
        let headers = [ACME_PAIR[0], ACME_PAIR[1], ("idempotency-key", bad)];
        let r = raw("POST", &url, &headers, Some(&body)).await;
        assert_eq!(r.status, 400, "{bad:?}");
        assert!(error_of(&r).starts_with("Invalid Idempotency-Key"));
    }
    assert_eq!(client.balance().await.unwrap(), after_first);
}
