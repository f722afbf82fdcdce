//! Orders and eSIMs: pagination edges, newest first, `q`, status filter with `active`,
//! rawOrderJson and its QR images (spec: GET /reseller/orders, /reseller/esims; docs/api-contract.md: Lists).

use crate::common::*;
use esimdash_api::model::{EsimQuery, OrderQuery};
use esimdash_domain::iccid::Iccid;
use esimdash_domain::status::Status;

/// Acme's orders read by page `page` (the first where `None`) of `page_size`, as asked: what
/// the server makes of the size is the test's question.
async fn orders_paged(
    sb: &esimdash_sandbox::RunningSandbox,
    page: Option<u64>,
    page_size: u64,
) -> Result<esimdash_api::model::OrderPage, esimdash_api::ApiError> {
    let query = OrderQuery {
        page,
        page_size: Some(page_size),
        ..Default::default()
    };
    acme(sb).orders(&query).await
}

#[tokio::test]
async fn pages_default_cap_and_run_past_the_end() {
    let sb = sandbox().await;
    let r = acme_get(&sb, "/reseller/orders").await;
    assert_eq!(
        (r.body["page"].as_u64(), r.body["pageSize"].as_u64()),
        (Some(1), Some(20))
    );
    assert_eq!(r.body["orders"].as_array().unwrap().len(), 20);
    let total = r.body["total"].as_u64().unwrap();
    assert_eq!(total, 400);

    let r = acme_get(&sb, "/reseller/orders?pageSize=101").await;
    assert_eq!((r.status, r.body["pageSize"].as_u64()), (200, Some(100)));
    assert_eq!(r.body["orders"].as_array().unwrap().len(), 100);

    let r = acme_get(&sb, "/reseller/orders?page=999&pageSize=50").await;
    assert_eq!(r.body["orders"].as_array().unwrap().len(), 0);
    assert_eq!(r.body["total"].as_u64(), Some(total), "the true total past the end");
    let r = acme_get(&sb, "/reseller/orders?page=99999999999999999999999").await;
    assert_eq!((r.status, r.body["orders"].as_array().map(Vec::len)), (200, Some(0)));

    for (query, message) in [
        ("pageSize=0", "Invalid pageSize"),
        ("pageSize=abc", "Invalid pageSize"),
        ("page=0", "Invalid page"),
        ("page=abc", "Invalid page"),
        ("page=-1", "Invalid page"),
        ("page=1.5", "Invalid page"),
        ("page=", "Invalid page"),
    ] {
        for path in ["/reseller/orders", "/reseller/esims"] {
            let r = acme_get(&sb, &format!("{path}?{query}")).await;
            assert_eq!((r.status, error_of(&r)), (400, message), "{path}?{query}");
        }
    }
    let err = orders_paged(&sb, None, 0).await.unwrap_err();
    assert_refused(&err, 400, "Invalid pageSize");

    // The last page holds the remainder.
    let last = orders_paged(&sb, Some(4), 100).await.unwrap();
    assert_eq!(last.orders.len(), 100);
    let r = orders_paged(&sb, Some(3), 150).await.unwrap();
    assert_eq!((r.page_size, r.orders.len()), (100, 100));
}

#[tokio::test]
async fn orders_are_newest_first_across_pages() {
    let (_sb, client) = sandbox_and_acme().await;
    let mut all = Vec::new();
    for page in 1..=4 {
        all.extend(
            client
                .orders(&OrderQuery {
                    page: Some(page),
                    page_size: Some(100),
                    ..Default::default()
                })
                .await
                .unwrap()
                .orders,
        );
    }
    assert_eq!(all.len(), 400);
    assert!(
        all.windows(2).all(|w| w[0].created_at >= w[1].created_at),
        "newest first"
    );
    let numbers: std::collections::HashSet<_> = all.iter().map(|o| &o.record.provider_order_no).collect();
    assert_eq!(numbers.len(), 400, "no order twice across pages");
}

#[tokio::test]
async fn q_searches_number_name_and_slug_case_insensitively() {
    let (_sb, client) = sandbox_and_acme().await;
    let search = |q: &str| OrderQuery {
        q: Some(q.to_string()),
        page_size: Some(100),
        ..Default::default()
    };
    let by_name = client.orders(&search("fRaNcE")).await.unwrap();
    assert!(by_name.total > 0);
    assert!(
        by_name
            .orders
            .iter()
            .all(|o| o.record.package_name.contains("France") || o.record.slug.contains("france"))
    );
    let by_slug = client.orders(&search("-20GB-30D")).await.unwrap();
    assert!(by_slug.total > 0 && by_slug.orders.iter().all(|o| o.record.slug.ends_with("-20gb-30d")));
    let some = &by_name.orders[0].record.provider_order_no;
    let by_number = client.orders(&search(&some.to_lowercase())).await.unwrap();
    assert_eq!(by_number.total, 1);
    assert_eq!(&by_number.orders[0].record.provider_order_no, some);
    assert_eq!(client.orders(&search("zzz-nothing")).await.unwrap().total, 0);
}

#[tokio::test]
async fn every_status_is_present_and_active_means_usable() {
    let (_sb, client) = sandbox_and_acme().await;
    let filtered = |s: &str| OrderQuery {
        status: s.into(),
        page_size: Some(100),
        ..Default::default()
    };
    let mut sum = 0;
    for status in Status::KNOWN {
        let page = client.orders(&filtered(status.as_str())).await.unwrap();
        assert!(page.total > 0, "{status} appears in the seed");
        assert!(page.orders.iter().all(|o| o.record.status == status));
        sum += page.total;
    }
    assert_eq!(sum, 400);
    let active = client.orders(&filtered("active")).await.unwrap();
    let mut expected = 0;
    for s in ["got_resource", "in_use", "suspended"] {
        expected += client.orders(&filtered(s)).await.unwrap().total;
    }
    assert_eq!(active.total, expected);
    assert!(active.orders.iter().all(|o| o.record.status.is_active()));
    let esims = first_100_esims(&client, "active").await;
    assert!(esims.total > 0 && esims.esims.iter().all(|e| e.record.status.is_active()));
    assert_eq!(
        client.orders(&filtered("teleported")).await.unwrap().total,
        0,
        "an unknown filter matches nothing"
    );
}

#[tokio::test]
async fn esims_carry_valid_iccids_and_both_qr_paths_are_served() {
    let (sb, client) = sandbox_and_acme().await;
    let page = client
        .esims(&EsimQuery {
            page_size: Some(100),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(page.total >= 300, "{} eSIMs", page.total);
    assert!(
        page.esims.iter().all(|e| e.record.status != Status::Pending),
        "pending orders have no eSIM yet"
    );
    let mut with_ac = 0;
    for e in &page.esims {
        let raw = &e.raw_order_json;
        Iccid::parse(raw.iccid.as_str()).unwrap_or_else(|err| panic!("{}: {err}", raw.iccid));
        assert!(!raw.smdp_status.is_empty() && raw.total_volume.is_some() && !raw.expired_time.is_empty());
        assert!(raw.qr_code_url.starts_with(&sb.origin()), "{}", raw.qr_code_url);
        if let Some(ac) = &raw.ac {
            assert!(esimdash_domain::lpa::ActivationCode::parse(ac).is_some(), "{ac}");
            with_ac += 1;
        }
    }
    assert!(
        with_ac > 0 && with_ac < page.esims.len(),
        "some records carry ac, some only qrCodeUrl"
    );
    assert!(page.esims.iter().any(|e| e.raw_order_json.iccid.len() == 20));
    assert!(page.esims.iter().any(|e| e.raw_order_json.iccid.len() == 19));

    // The QR image is served without credentials, as a PNG.
    let url = &page.esims[0].raw_order_json.qr_code_url;
    let resp = reqwest::get(url).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers()["content-type"], "image/png");
    assert_eq!(&resp.bytes().await.unwrap()[1..4], b"PNG");
    let missing = reqwest::get(format!("{}/qr/nothing.png", sb.origin())).await.unwrap();
    assert_eq!(missing.status(), 404);
}

#[tokio::test]
async fn seeding_is_deterministic_and_grows_with_orders() {
    let config = esimdash_sandbox::SandboxConfig {
        orders: 2_000,
        rate_limit: 100_000,
        ..Default::default()
    };
    let (a, b) = (sandbox_with(config.clone()).await, sandbox_with(config).await);
    let (pa, pb) = (
        acme(&a).esims(&Default::default()).await.unwrap(),
        acme(&b).esims(&Default::default()).await.unwrap(),
    );
    let iccids = |p: &esimdash_api::model::EsimPage| {
        p.esims
            .iter()
            .map(|e| e.raw_order_json.iccid.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(iccids(&pa), iccids(&pb));
    assert_eq!(acme(&a).orders(&Default::default()).await.unwrap().total, 2_000);
}

#[tokio::test]
async fn lookup_by_iccid_finds_exactly_that_esim_and_its_orders_and_nothing_of_another_reseller() {
    let sb = sandbox().await;
    // The oldest eSIM: the last page's last item.
    let (iccid, total) = oldest_iccid(&sb).await;
    let iccid = iccid.to_string();
    let oldest = acme_get(&sb, &format!("/reseller/esims?pageSize=1&page={total}")).await;
    let order_no = oldest.body["esims"][0]["providerOrderNo"].as_str().unwrap().to_string();

    // Spaces and dashes are removed before matching.
    let spaced = format!("{} {}-{}", &iccid[..4], &iccid[4..10], &iccid[10..]);
    let found = acme_get(&sb, &format!("/reseller/esims?iccid={}", spaced.replace(' ', "%20"))).await;
    assert_eq!(found.body["total"].as_u64(), Some(1), "{}", found.text);
    assert_eq!(
        found.body["esims"][0]["rawOrderJson"]["iccid"].as_str(),
        Some(iccid.as_str())
    );

    // With a status that does not match, nothing; with its own status, the eSIM.
    let status = found.body["esims"][0]["status"].as_str().unwrap().to_string();
    let other = if status == "cancel" { "in_use" } else { "cancel" };
    let none = acme_get(&sb, &format!("/reseller/esims?iccid={iccid}&status={other}")).await;
    assert_eq!(none.body["total"].as_u64(), Some(0));
    let same = acme_get(&sb, &format!("/reseller/esims?iccid={iccid}&status={status}")).await;
    assert_eq!(same.body["total"].as_u64(), Some(1));

    // Orders for that ICCID: the order that made it.
    let orders = acme_get(&sb, &format!("/reseller/orders?iccid={iccid}")).await;
    assert_eq!(orders.body["total"].as_u64(), Some(1), "{}", orders.text);
    assert_eq!(
        orders.body["orders"][0]["providerOrderNo"].as_str(),
        Some(order_no.as_str())
    );

    // A prefix, a longer number or text is no match; not an error.
    for wrong in [&iccid[..iccid.len() - 1], &format!("{iccid}0"), "abc"] {
        let r = acme_get(&sb, &format!("/reseller/esims?iccid={wrong}")).await;
        assert_eq!((r.status, r.body["total"].as_u64()), (200, Some(0)), "{wrong}");
    }

    // Another reseller's ICCID is an empty list, never a 404 that would tell it exists.
    for list in ["esims", "orders"] {
        let r = globex_get(&sb, &format!("/reseller/{list}?iccid={iccid}")).await;
        assert_eq!((r.status, r.body["total"].as_u64()), (200, Some(0)), "{list}");
    }
}

#[tokio::test]
async fn a_sandbox_without_the_lookup_answers_the_unfiltered_list() {
    let sb = sandbox_with_lookup(false).await;
    let r = acme_get(&sb, "/reseller/esims?iccid=8944100000000000000&pageSize=5").await;
    assert_eq!(r.body["esims"].as_array().map(Vec::len), Some(5));
    assert!(r.body["total"].as_u64().unwrap() > 100);
}

/// The client's `orders?iccid=` against a server with the contract's filter (the order that
/// made the eSIM and its top-up) and one with the published routes only, which answers the
/// whole list: the order that made the eSIM is then found by its number, and no other eSIM's
/// order is ever shown.
#[tokio::test]
async fn an_esims_orders_with_and_without_the_servers_filter() {
    for lookup in [true, false] {
        let sb = sandbox_with_lookup(lookup).await;
        let client = acme(&sb);
        let esim = client.esims(&EsimQuery::default()).await.unwrap().esims.remove(1);
        let iccid = esim.raw_order_json.iccid.valid().unwrap().clone();
        let plans = client.topup_plans(&iccid).await.unwrap();
        let slug = &plans.first().expect("an in-use eSIM can be topped up").slug;
        let body = format!(r#"{{"iccid":"{iccid}","slug":"{slug}","qty":1}}"#);
        assert_eq!(acme_send(&sb, "POST", "/portal/topups", &body).await.status, 201);
        let query = OrderQuery {
            iccid: Some(iccid.clone()),
            ..Default::default()
        };
        let orders = client.orders(&query).await.unwrap().orders;
        let numbers: Vec<_> = orders.iter().map(|o| o.record.provider_order_no.to_string()).collect();
        assert!(
            numbers.contains(&esim.record.provider_order_no.to_string()),
            "lookup {lookup}: {numbers:?}"
        );
        assert!(
            orders.iter().all(|o| o.iccid.is_empty() || o.iccid == iccid.as_str()),
            "lookup {lookup}: never another eSIM's order"
        );
        assert_eq!(orders.len(), if lookup { 2 } else { 1 }, "lookup {lookup}: {numbers:?}");
    }
}
