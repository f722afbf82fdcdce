//! Profile get and update, the balance route, and the general error rows of docs/api-contract.md:
//! 413, invalid JSON, unknown route, wrong method.

use crate::common::*;
use esimdash_api::model::ProfileUpdate;
use rust_decimal::Decimal;

#[tokio::test]
async fn the_profile_has_every_field_and_the_balance() {
    let sb = sandbox().await;
    let r = acme_get(&sb, "/reseller/profile").await;
    let p = &r.body["profile"];
    for field in [
        "name",
        "email",
        "role",
        "companyName",
        "country",
        "website",
        "status",
        "balanceUsd",
    ] {
        assert!(p[field].is_string(), "{field} is a string: {p}");
    }
    assert_eq!(
        (p["role"].as_str(), p["status"].as_str(), p["balanceUsd"].as_str()),
        (Some("reseller"), Some("approved"), Some("250.00"))
    );
    assert_eq!(
        acme_get(&sb, "/reseller/balance").await.body,
        serde_json::json!({"balanceUsd": "250.00"})
    );
    assert_eq!(acme(&sb).balance().await.unwrap(), Decimal::new(25000, 2));
    // Globex has no company record yet: empty strings, not nulls.
    let g = globex(&sb).profile().await.unwrap();
    assert_eq!(
        (g.company_name.as_str(), g.country.as_str(), g.website.as_str()),
        ("", "", "")
    );
    assert_eq!(g.display_name(), "Hank Scorpio");
}

#[tokio::test]
async fn patch_creates_the_profile_record_keeps_approval_and_validates_each_field() {
    let sb = sandbox().await;
    let client = globex(&sb);
    let update = ProfileUpdate {
        company_name: Some("Globex Travel".into()),
        country: Some("us".into()),
        website: Some("https://globex.example".into()),
    };
    let p = client.update_profile(&update).await.unwrap();
    assert_eq!(
        (
            p.company_name.as_str(),
            p.country.as_str(),
            p.website.as_str(),
            p.status.as_str()
        ),
        ("Globex Travel", "US", "https://globex.example", "approved")
    );
    assert_eq!(
        client.profile().await.unwrap().company_name,
        "Globex Travel",
        "it was stored"
    );
    // Only the given fields change; an empty value clears.
    let p = client
        .update_profile(&ProfileUpdate {
            website: Some(String::new()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!((p.company_name.as_str(), p.website.as_str()), ("Globex Travel", ""));

    let long = "x".repeat(201);
    for (body, needle) in [
        (r#"{"balanceUsd":"999999.00"}"#.to_string(), "balanceUsd"),
        (r#"{"status":"approved"}"#.to_string(), "status"),
        (format!(r#"{{"companyName":"{long}"}}"#), "companyName"),
        (r#"{"companyName":42}"#.to_string(), "companyName"),
        (r#"{"country":"USA"}"#.to_string(), "country"),
        (r#"{"country":"1A"}"#.to_string(), "country"),
        (r#"{"website":"ftp://globex.example"}"#.to_string(), "website"),
        (r#"{"website":"not a url"}"#.to_string(), "website"),
        ("[1,2]".to_string(), "Invalid JSON"),
        ("{".to_string(), "Invalid JSON"),
    ] {
        let r = acme_send(&sb, "PATCH", "/reseller/profile", &body).await;
        assert_eq!(r.status, 400, "{body}");
        assert!(error_of(&r).contains(needle), "{body}: {}", error_of(&r));
    }
    assert_eq!(
        acme(&sb).balance().await.unwrap(),
        Decimal::new(25000, 2),
        "the balance cannot be patched"
    );
    let r = acme_send(
        &sb,
        "PATCH",
        "/reseller/profile",
        &format!(r#"{{"companyName":"{}"}}"#, "y".repeat(200)),
    )
    .await;
    assert_eq!(r.status, 200, "200 characters are allowed");
}

#[tokio::test]
async fn oversized_bodies_unknown_routes_and_wrong_methods_get_json_errors() {
    let sb = sandbox().await;
    let big = format!(r#"{{"companyName":"{}"}}"#, "x".repeat(70 * 1024));
    let r = acme_send(&sb, "PATCH", "/reseller/profile", &big).await;
    assert_eq!(r.status, 413);
    assert!(error_of(&r).contains("too large"));
    let r = acme_send(&sb, "POST", "/portal/topups", &big).await;
    assert_eq!(r.status, 413);

    let r = acme_get(&sb, "/reseller/nothing").await;
    assert_eq!((r.status, error_of(&r)), (404, "Not found"));
    let r = raw("GET", &format!("{}/elsewhere", sb.origin()), &[], None).await;
    assert_eq!((r.status, error_of(&r)), (404, "Not found"));
    let r = acme_send(&sb, "DELETE", "/reseller/profile", "{}").await;
    assert_eq!(r.status, 405);
    assert!(r.body["error"].is_string());
}

#[tokio::test]
async fn hostile_input_never_gets_a_500() {
    let sb = sandbox().await;
    let weird = ["%00", "%FF%FE", "a%20b", &"9".repeat(5000), "🙂", "'--", "\\u0000"];
    for w in weird {
        for path in [
            format!("/reseller/orders?q={w}&status={w}"),
            format!("/reseller/esims?status={w}"),
            format!("/portal/plans?slug={w}"),
            format!("/portal/plans?type=topup&iccid={w}"),
        ] {
            let r = acme_get(&sb, &path).await;
            assert!((200..500).contains(&r.status), "{path}: {}", r.status);
            assert!(r.body.is_object(), "{path}: JSON body");
        }
    }
    for body in [
        "null",
        "1",
        "\"s\"",
        r#"{"iccid":{"a":1},"slug":[1]}"#,
        r#"{"iccid":"x","slug":"y","qty":1e400}"#,
        &format!(r#"{{"iccid":"{}","slug":"y"}}"#, "8".repeat(60_000)),
    ] {
        let r = acme_send(&sb, "POST", "/portal/topups", body).await;
        assert!((400..500).contains(&r.status), "{body:.40}: {}", r.status);
        assert!(r.body["error"].is_string());
    }
}
