//! Authentication and scoping (spec: Authentication; docs/api-contract.md: Authentication).

use crate::common::*;
use esimdash_api::{ApiError, AuthMode, Credentials};

#[tokio::test]
async fn the_pair_the_legacy_modes_and_the_session_cookie_all_reach_acme() {
    let sb = sandbox().await;
    let url = format!("{}/reseller/profile", sb.base_url());
    for headers in [
        vec![("x-access-code", "ak_demo_acme"), ("x-secret-key", "sk_demo_acme")],
        vec![("x-api-key", "sk_demo_legacy")],
        vec![("authorization", "Bearer sk_demo_legacy")],
        vec![("cookie", "theme=dark; esim_session=sess_demo_acme")],
    ] {
        let r = raw("GET", &url, &headers, None).await;
        assert_eq!(r.status, 200, "{headers:?}");
        assert_eq!(r.body["profile"]["companyName"], "Acme Mobile", "{headers:?}");
    }
    for mode in [AuthMode::ApiKey, AuthMode::Bearer] {
        let client = client_for(&sb.base_url(), Credentials::legacy(mode, "sk_demo_legacy"), quick());
        assert_eq!(client.profile().await.unwrap().company_name, "Acme Mobile", "{mode:?}");
    }
}

#[tokio::test]
async fn missing_or_wrong_credentials_are_401_unauthorized() {
    let sb = sandbox().await;
    let url = format!("{}/reseller/orders", sb.base_url());
    for headers in [
        vec![],
        vec![("x-access-code", "ak_demo_acme")],
        vec![("x-access-code", "ak_demo_acme"), ("x-secret-key", "sk_demo_globex")],
        vec![("x-api-key", "nope")],
        vec![("authorization", "Basic c2s6c2s=")],
        vec![("cookie", "esim_session=forged")],
    ] {
        let r = raw("GET", &url, &headers, None).await;
        assert_eq!((r.status, error_of(&r)), (401, "Unauthorized"), "{headers:?}");
    }
    let wrong = client_for(
        &sb.base_url(),
        Credentials::pair("ak_demo_acme", "sk_wrong_secret"),
        quick(),
    );
    let err = wrong.orders(&Default::default()).await.unwrap_err();
    assert!(matches!(err, ApiError::Unauthorized { .. }), "{err:?}");
    assert!(
        !err.to_string().contains("sk_wrong_secret"),
        "the secret never shows: {err}"
    );
    assert!(!format!("{err:?} {wrong:?}").contains("sk_wrong_secret"));
}

#[tokio::test]
async fn a_revoked_key_gets_401_on_every_route() {
    let sb = sandbox().await;
    let revoked = [
        ("x-access-code", "ak_demo_revoked"),
        ("x-secret-key", "sk_demo_revoked"),
    ];
    for (method, path, body) in [
        ("GET", "/portal/plans", None),
        ("GET", "/reseller/orders", None),
        ("GET", "/reseller/esims", None),
        ("GET", "/reseller/profile", None),
        ("GET", "/reseller/balance", None),
        ("PATCH", "/reseller/profile", Some(r#"{"country":"FR"}"#)),
        ("POST", "/portal/topups", Some(r#"{"iccid":"1","slug":"x"}"#)),
        ("POST", "/portal/orders", Some(r#"{"slug":"fr-1gb-7d"}"#)),
    ] {
        let r = raw(method, &format!("{}{path}", sb.base_url()), &revoked, body).await;
        assert_eq!(
            (r.status, error_of(&r)),
            (401, "API key revoked or expired"),
            "{method} {path}"
        );
    }
    let client = client_for(
        &sb.base_url(),
        Credentials::pair("ak_demo_revoked", "sk_demo_revoked"),
        quick(),
    );
    let err = client.balance().await.unwrap_err();
    assert!(matches!(err, ApiError::Revoked { .. }), "{err:?}");
    assert!(
        err.to_string().contains("reseller portal"),
        "says where to get a new key: {err}"
    );
}

#[tokio::test]
async fn globex_can_read_nothing_of_acme_and_cannot_top_up_its_esims() {
    let sb = sandbox().await;
    let (acme, globex) = (acme(&sb), globex(&sb));
    let acme_orders = acme.orders(&Default::default()).await.unwrap();
    let globex_orders = globex.orders(&Default::default()).await.unwrap();
    let acme_numbers: Vec<_> = acme_orders.orders.iter().map(|o| &o.record.provider_order_no).collect();
    assert!(
        globex_orders
            .orders
            .iter()
            .all(|o| !acme_numbers.contains(&&o.record.provider_order_no))
    );
    // Searching for Acme's order number as Globex finds nothing.
    let q = esimdash_api::model::OrderQuery {
        q: Some(acme_numbers[0].to_string()),
        ..Default::default()
    };
    assert_eq!(globex.orders(&q).await.unwrap().total, 0);
    assert_eq!(acme.orders(&q).await.unwrap().total, 1);

    let acme_esims = acme.esims(&Default::default()).await.unwrap();
    let globex_esims = globex.esims(&Default::default()).await.unwrap();
    let acme_iccid = &acme_esims.esims[0].raw_order_json.iccid;
    assert!(globex_esims.esims.iter().all(|e| &e.raw_order_json.iccid != acme_iccid));
    assert_eq!(globex.profile().await.unwrap().email, "hank@globex.example");

    let err = globex.topup_plans(acme_iccid.valid().unwrap()).await.unwrap_err();
    assert_refused(&err, 404, "eSIM not found");
    let before = acme.balance().await.unwrap();
    let body = format!(r#"{{"iccid":"{acme_iccid}","slug":"topup-fr-1gb-7d"}}"#);
    let r = raw(
        "POST",
        &format!("{}/portal/topups", sb.base_url()),
        &[("x-access-code", "ak_demo_globex"), ("x-secret-key", "sk_demo_globex")],
        Some(&body),
    )
    .await;
    assert_eq!((r.status, error_of(&r)), (404, "eSIM not found"));
    assert_eq!(acme.balance().await.unwrap(), before, "nothing moved on Acme's wallet");
}
