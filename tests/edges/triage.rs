//! `esimdash triage ICCID` on every state of the sandbox's showcase, over real HTTP: its checks
//! agree with the eSIM's verdict (`esims --iccid`), its escalation pack holds no secret and no
//! control character, names the requests made, and a second triage tells whether data moved.

use crate::common::*;
use crate::mcp::cli_json;
use esimdash_api::model::EsimQuery;
use serde_json::Value;

/// The outcome the state check must give for a verdict's state.
fn state_outcome(state: &str) -> &'static str {
    match state {
        "in_use" | "installed_no_data" => "passed",
        "ready_to_install" | "downloading" | "turned_off" => "needs_customer",
        _ => "failed",
    }
}

fn check<'a>(triage: &'a Value, id: &str) -> &'a Value {
    triage["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap_or_else(|| panic!("no check {id}: {triage}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn triage_agrees_with_the_verdict_on_every_showcase_state_and_its_pack_is_clean() {
    let (sb, api, home) = sandbox_api_home().await;
    let page = api
        .esims(&EsimQuery {
            page: Some(1),
            page_size: Some(40),
            ..EsimQuery::default()
        })
        .await
        .unwrap();
    let mut states_seen = std::collections::BTreeSet::new();
    for esim in &page.esims {
        let iccid = esim.raw_order_json.iccid.as_str().to_string();
        if iccid.is_empty() {
            continue;
        }
        let shown = cli_json(&sb, &home, &["esims", "--iccid", &iccid, "--json"]).await;
        let state = shown["verdict"]["state"].as_str().unwrap().to_string();
        if !states_seen.insert(state.clone()) {
            continue;
        }
        let triage = cli_json(&sb, &home, &["triage", &iccid, "--country", "FR", "--json"]).await;
        assert_eq!(triage["verdict"]["state"], state.as_str(), "{triage}");
        assert_eq!(
            check(&triage, "state")["outcome"],
            state_outcome(&state),
            "{state}: {triage}"
        );
        for id in ["installed", "usage", "validity", "coverage", "apn", "manual_install"] {
            let outcome = check(&triage, id)["outcome"].as_str().unwrap().to_string();
            assert!(
                ["passed", "failed", "needs_customer"].contains(&outcome.as_str()),
                "{id}: {outcome}"
            );
        }
        if state == "ready_to_install" {
            // Its code is read as the pane and `qr` read it: from the record, else its QR image.
            assert_eq!(check(&triage, "manual_install")["outcome"], "passed", "{triage}");
        }
        let pack = triage["pack"].as_str().unwrap();
        assert!(pack.contains(&iccid), "{pack}");
        assert!(!pack.contains("sk_demo_acme"), "no secret in the pack");
        assert!(
            pack.chars().all(|c| c == '\n' || !c.is_control()),
            "no control character: {pack:?}"
        );
        let requests = triage["requests"].as_array().unwrap();
        assert!(
            requests
                .iter()
                .any(|r| r["answer"] == "200" && r["request"].as_str().unwrap().contains("esims")),
            "the requests made are listed: {requests:?}"
        );
        assert!(pack.contains("Requests made:") && pack.contains("→ 200"), "{pack}");
    }
    for state in [
        "in_use",
        "ready_to_install",
        "downloading",
        "turned_off",
        "used_up",
        "suspended",
        "cancelled",
    ] {
        assert!(states_seen.contains(state), "the showcase has {state}: {states_seen:?}");
    }
}

/// The first triage has nothing to compare usage with; the next one compares with it.
#[tokio::test(flavor = "multi_thread")]
async fn a_second_triage_tells_whether_data_moved_since_the_first() {
    let (sb, api, home) = sandbox_api_home().await;
    let page = api.esims(&EsimQuery::default()).await.unwrap();
    let in_use = page
        .esims
        .iter()
        .find(|e| {
            e.record.status.as_str().eq_ignore_ascii_case("in_use")
                && e.raw_order_json.smdp_status.eq_ignore_ascii_case("enabled")
        })
        .expect("an eSIM in use");
    let iccid = in_use.raw_order_json.iccid.as_str().to_string();
    let first = cli_json(&sb, &home, &["triage", &iccid, "--json"]).await;
    let found = check(&first, "usage")["found"].as_str().unwrap().to_string();
    assert!(found.contains("no earlier reading"), "{found}");
    let out = home.path().join("pack.txt");
    let second = cli_json(
        &sb,
        &home,
        &["triage", &iccid, "--json", "--out", out.to_str().unwrap()],
    )
    .await;
    let found = check(&second, "usage")["found"].as_str().unwrap().to_string();
    assert!(found.contains("since"), "compared with the first triage: {found}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), second["pack"].as_str().unwrap());
    let country = check(&second, "coverage");
    assert_eq!(
        country["outcome"], "needs_customer",
        "the country was not asked: {country}"
    );
}
