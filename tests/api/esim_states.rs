//! The sandbox's eSIM records carry the provider's fields in the combinations upstream gives
//! (docs/api-contract.md, "eSIM states in detail"), every state an agent meets is in the demo,
//! and about one in ten usable eSIMs needs attention. Read over HTTP, as any client reads them.

use crate::common::*;
use esimdash_api::model::{Esim, EsimQuery};
use esimdash_domain::attention::AttentionRule;
use esimdash_domain::esim_state::Class;
use esimdash_domain::status::Status;
use std::collections::HashSet;

async fn every_esim(client: &esimdash_api::Client) -> Vec<Esim> {
    let mut all = Vec::new();
    for page in 1.. {
        let got = client.esims(&crate::pages::esims_page(page)).await.unwrap();
        let done = got.esims.is_empty();
        all.extend(got.esims);
        if done || all.len() as u64 >= got.total {
            break;
        }
    }
    all
}

/// One record's fields against the provider's table; the broken rule, if any.
fn inconsistency(e: &Esim) -> Option<&'static str> {
    let raw = &e.raw_order_json;
    let used = raw.order_usage.unwrap_or(0);
    let smdp = raw.smdp_status.as_str();
    let status = &e.record.status;
    if raw.esim_status != status.as_str().to_ascii_uppercase()
        && !(raw.esim_status == "REVOKE" && *status == Status::Revoked)
    {
        return Some("esimStatus is the upper-case order status");
    }
    if (smdp == "RELEASED") != raw.eid.is_empty() {
        return Some("an EID exactly once downloaded");
    }
    if matches!(smdp, "RELEASED" | "DOWNLOAD" | "INSTALLATION") && used > 0 {
        return Some("no usage before an install");
    }
    if matches!(smdp, "ENABLED" | "DISABLED" | "DELETED") && raw.installation_time.at().is_none() {
        return Some("an installed profile has its installation time");
    }
    if *status == Status::GotResource && used > 0 {
        return Some("GOT_RESOURCE is not used yet");
    }
    if *status == Status::InUse && !matches!(smdp, "ENABLED" | "DISABLED") {
        return Some("IN_USE goes with ENABLED or DISABLED");
    }
    if *status == Status::UsedUp && raw.order_usage != raw.total_volume {
        return Some("USED_UP has usage at the volume");
    }
    if matches!(status, Status::UnusedExpired | Status::Cancel) && (used > 0 || smdp != "RELEASED") {
        return Some("an unused or cancelled profile was never installed");
    }
    if raw.activate_time.at().is_some_and(|a| {
        let days = i64::try_from(raw.total_duration.unwrap_or(0)).unwrap_or(0);
        raw.expired_time.at() != Some(a + chrono::Duration::days(days))
    }) {
        return Some("expiry counts from activation");
    }
    if ![Some(1), Some(2)].contains(&raw.active_type) || raw.apn.is_empty() {
        return Some("activeType and apn are given");
    }
    None
}

#[tokio::test]
async fn the_demo_has_every_state_in_consistent_combinations_and_a_tenth_needs_attention() {
    let sb = sandbox().await;
    let esims = every_esim(&acme(&sb)).await;
    assert!(esims.len() > 350, "{}", esims.len());
    for e in &esims {
        if let Some(rule) = inconsistency(e) {
            panic!("{rule}: {}", serde_json::to_string_pretty(&e.raw_order_json).unwrap());
        }
    }
    let classes: HashSet<Class> = esims.iter().map(|e| e.facts().classify()).collect();
    for class in Class::ALL {
        let expected = !matches!(class, Class::Unknown | Class::Pending);
        assert_eq!(classes.contains(&class), expected, "{class:?} in the demo");
    }
    let orders = acme(&sb).orders(&Default::default()).await.unwrap();
    assert!(
        orders.orders.iter().any(|o| o.record.status == Status::Pending),
        "a pending order near the top"
    );

    let now = chrono::Utc::now();
    let usable = esims.iter().filter(|e| e.record.status.is_active()).count();
    let urgent = esims
        .iter()
        .filter(|e| AttentionRule::default().needs_esim(*e, now))
        .count();
    let share = urgent as f64 / usable as f64;
    assert!(
        (0.05..=0.15).contains(&share),
        "{urgent} of {usable} usable eSIMs need attention"
    );
}

#[tokio::test]
async fn a_top_up_adds_its_data_and_days_to_the_esim_at_once() {
    let (sb, client) = sandbox_and_acme().await;
    let esims = every_esim(&client).await;
    let used_up = esims
        .iter()
        .find(|e| e.record.status == Status::UsedUp && e.raw_order_json.smdp_status == "ENABLED")
        .expect("a used-up eSIM");
    let iccid = used_up.raw_order_json.iccid.valid().unwrap().clone();
    let before = (
        used_up.raw_order_json.total_volume.unwrap(),
        used_up.raw_order_json.expired_time.at().unwrap(),
    );
    let r = acme_get(&sb, &format!("/portal/plans?type=topup&iccid={iccid}")).await;
    let plan = &r.body["data"][0];
    let (slug, volume) = (plan["slug"].as_str().unwrap(), plan["volume"].as_u64().unwrap());
    let body = format!(r#"{{"iccid":"{iccid}","slug":"{slug}","qty":1}}"#);
    assert_eq!(acme_send(&sb, "POST", "/portal/topups", &body).await.status, 201);
    let after = client.find_esim(&iccid).await.unwrap().expect("still there");
    assert_eq!(after.raw_order_json.total_volume, Some(before.0 + volume));
    assert!(after.raw_order_json.expired_time.at().unwrap() > before.1);
    assert_eq!(after.record.status, Status::InUse, "a used-up eSIM has data again");
    assert_eq!(after.facts().classify(), Class::InUse);
}

/// A provider reissues ICCIDs: the demo's newest eSIM carries the ICCID of a cancelled one. The
/// lookup lists both, the client takes the newest `esimTranNo` as current, and a top-up goes to
/// that one.
#[tokio::test]
async fn a_reissued_iccid_has_an_old_and_a_current_profile() {
    let (sb, client) = sandbox_and_acme().await;
    let newest = client.esims(&EsimQuery::default()).await.unwrap().esims.remove(0);
    let iccid = newest.raw_order_json.iccid.valid().unwrap().clone();
    let r = acme_get(&sb, &format!("/reseller/esims?iccid={iccid}")).await;
    assert_eq!(r.body["total"].as_u64(), Some(2), "both profiles: {}", r.body);
    let profiles = client.find_profiles(&iccid).await.unwrap();
    let states: Vec<(String, Status)> = profiles
        .iter()
        .map(|e| (e.raw_order_json.esim_tran_no.clone(), e.record.status.clone()))
        .collect();
    assert_eq!(profiles.len(), 2, "{states:?}");
    assert_eq!(
        profiles[0].raw_order_json.esim_tran_no,
        newest.raw_order_json.esim_tran_no
    );
    assert_eq!(profiles[0].record.status, Status::GotResource, "the current one");
    assert_eq!(profiles[1].record.status, Status::Cancel, "the old one");
    assert!(
        esimdash_api::tran_no_order(&profiles[0].raw_order_json.esim_tran_no)
            > esimdash_api::tran_no_order(&profiles[1].raw_order_json.esim_tran_no)
    );
    let plans = client.topup_plans(&iccid).await.unwrap();
    assert!(
        !plans.is_empty(),
        "the current profile can be topped up; the cancelled one could not"
    );
}

/// The contract's availability: an eSIM whose state cannot take data (deleted from the phone,
/// cancelled, revoked, expired, expired unused) is offered no top-up, and a top-up sent for it
/// all the same is refused with 400, debiting nothing; every other usable eSIM is offered some.
#[tokio::test]
async fn an_esim_that_cannot_take_data_is_offered_and_sold_no_top_up() {
    let (sb, client) = sandbox_and_acme().await;
    let esims = every_esim(&client).await;
    let balance = client.balance().await.unwrap();
    let mut refused = HashSet::new();
    for e in &esims {
        let class = e.facts().classify();
        let iccid = e.raw_order_json.iccid.valid().unwrap().clone();
        let offered = acme_get(&sb, &format!("/portal/plans?type=topup&iccid={iccid}")).await;
        let plans = offered.body["data"].as_array().map_or(0, Vec::len);
        if class.cannot_take_data().is_none() {
            continue;
        }
        // A reissued ICCID's current profile decides (the lookup's newest).
        let current = client.find_esim(&iccid).await.unwrap().unwrap();
        if current.facts().classify().cannot_take_data().is_none() {
            continue;
        }
        assert_eq!(plans, 0, "{iccid} is {class:?} and was offered {plans} top-ups");
        let body = format!(r#"{{"iccid":"{iccid}","slug":"topup-jo-1gb-7d","qty":1}}"#);
        let sent = acme_send(&sb, "POST", "/portal/topups", &body).await;
        assert_eq!(sent.status, 400, "{iccid} ({class:?}): {}", sent.body);
        assert_eq!(sent.body["error"], "This eSIM cannot be topped up");
        refused.insert(class);
    }
    for class in [
        Class::Deleted,
        Class::Cancelled,
        Class::ExpiredUnused,
        Class::ExpiredUsed,
    ] {
        assert!(refused.contains(&class), "the demo has a {class:?} eSIM to refuse");
    }
    assert_eq!(client.balance().await.unwrap(), balance, "nothing was debited");
}
