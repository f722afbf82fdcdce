//! The catalog, plan by slug, and top-up availability (spec: GET /portal/plans; docs/api-contract.md).

use crate::common::*;
use esimdash_domain::iccid::Iccid;
use esimdash_domain::status::Status;
use rust_decimal::Decimal;
use std::collections::HashSet;

#[tokio::test]
async fn the_catalog_is_large_priced_per_reseller_and_consistent() {
    let sb = sandbox().await;
    let plans = acme(&sb).plans().await.unwrap();
    assert!(plans.len() >= 300, "{} plans", plans.len());
    let countries: HashSet<_> = plans
        .iter()
        .map(|p| p.location_code.as_str())
        .filter(|c| !c.starts_with('!'))
        .collect();
    assert!(countries.len() >= 50, "{} countries", countries.len());
    assert!(plans.iter().any(|p| p.location_code == "!RG") && plans.iter().any(|p| p.location_code == "!GL"));
    assert!(
        plans.iter().all(|p| !p.is_topup()),
        "top-up plans are not in the catalog"
    );
    for p in &plans {
        let pricing = p.pricing.as_ref().expect("every plan has pricing");
        let (cost, sell) = (pricing.cost_price.unwrap(), pricing.sell_price.unwrap());
        assert_eq!(p.price, Some(sell), "price equals pricing.sellPrice: {}", p.slug);
        assert_eq!(pricing.margin, Some(sell - cost), "{}", p.slug);
        let pct = (sell - cost) / cost * Decimal::ONE_HUNDRED;
        assert_eq!(pricing.margin_pct, Some(pct.round_dp(2)), "{}", p.slug);
        assert_eq!((p.duration_unit.as_str(), p.currency_code.as_str()), ("DAY", "USD"));
        assert_eq!(
            (pricing.rule_scope.as_str(), pricing.rule_type.as_str()),
            ("global", "percent")
        );
    }
    // A 20 % rule gives 20.00 on the wire, as a number.
    let r = acme_get(&sb, "/portal/plans?slug=fr-1gb-7d").await;
    assert!(r.body["data"]["pricing"]["marginPct"].is_number());
    assert!(r.text.contains(r#""marginPct":20.00"#), "{}", r.text);
    assert_eq!(r.body["data"]["volume"], 1_073_741_824u64);

    let globex_plans = globex(&sb).plans().await.unwrap();
    let fr = |ps: &[esimdash_api::model::Plan]| ps.iter().find(|p| p.slug == "fr-1gb-7d").unwrap().clone();
    assert_eq!(
        fr(&plans).pricing.unwrap().cost_price,
        fr(&globex_plans).pricing.unwrap().cost_price
    );
    assert_ne!(
        fr(&plans).price,
        fr(&globex_plans).price,
        "each reseller has its own pricing rule"
    );
}

#[tokio::test]
async fn a_plan_by_slug_and_an_unknown_slug() {
    let sb = sandbox().await;
    let plan = acme(&sb).plan("de-5gb-30d").await.unwrap();
    assert_eq!(
        (plan.location_code.as_str(), plan.volume),
        ("DE", Some(5 * 1_073_741_824))
    );
    let err = acme(&sb).plan("no-such-plan").await.unwrap_err();
    assert_refused(&err, 404, "Plan not found");
}

/// The newest eSIM in `status` whose ICCID was issued once (a reissued ICCID's availability
/// is its current profile's).
async fn first_esim_with(sb: &esimdash_sandbox::RunningSandbox, status: Status) -> Iccid {
    let q = esimdash_api::model::EsimQuery {
        status: status.into(),
        page_size: Some(100),
        ..Default::default()
    };
    let client = acme(sb);
    for esim in client.esims(&q).await.unwrap().esims {
        let iccid = esim.raw_order_json.iccid.valid().unwrap().clone();
        if client.find_profiles(&iccid).await.unwrap().len() == 1 {
            return iccid;
        }
    }
    panic!("no eSIM in that status")
}

#[tokio::test]
async fn top_up_availability_lists_plans_for_the_esims_location_or_none() {
    let (sb, client) = sandbox_and_acme().await;
    let iccid = first_esim_with(&sb, Status::InUse).await;
    let esims = client
        .esims(&esimdash_api::model::EsimQuery {
            page_size: Some(100),
            ..Default::default()
        })
        .await
        .unwrap();
    let location = esims
        .esims
        .iter()
        .find(|e| e.raw_order_json.iccid == iccid)
        .unwrap()
        .record
        .location_code
        .clone();
    let offered = client.topup_plans(&iccid).await.unwrap();
    assert!(!offered.is_empty());
    assert!(
        offered
            .iter()
            .all(|p| p.is_topup() && p.location_code == location && p.pricing.is_some())
    );
    let r = acme_get(&sb, &format!("/portal/plans?type=topup&iccid={iccid}")).await;
    assert_eq!(r.body["iccid"], iccid.as_str(), "the answer names the ICCID");

    for status in [
        Status::UsedExpired,
        Status::UnusedExpired,
        Status::Cancel,
        Status::Revoked,
    ] {
        let iccid = first_esim_with(&sb, status.clone()).await;
        assert!(
            client.topup_plans(&iccid).await.unwrap().is_empty(),
            "{status} cannot be topped up"
        );
    }
    let r = acme_get(&sb, "/portal/plans?type=topup").await;
    assert_eq!((r.status, error_of(&r)), (400, "Missing iccid"));
    let err = client.topup_plans(&no_such_iccid()).await.unwrap_err();
    assert_refused(&err, 404, "eSIM not found");
    let r = acme_get(&sb, "/portal/plans?type=bogus").await;
    assert_eq!(r.status, 400);
}
