//! New orders placed at a sandbox by another client (the reseller's web portal, say), while
//! the session under test is not looking.

/// Places `n` orders of one eSIM each, as Acme, at the API at `base_url`.
pub async fn place_orders(base_url: &str, n: usize) {
    let http = reqwest::Client::new();
    for _ in 0..n {
        let r = http
            .post(format!("{base_url}/portal/orders"))
            .header("x-access-code", "ak_demo_acme")
            .header("x-secret-key", "sk_demo_acme")
            .header("content-type", "application/json")
            .body(r#"{"slug":"jp-3gb-15d","qty":1}"#)
            .send()
            .await
            .unwrap();
        assert!(r.status().is_success(), "an order placed: {}", r.status());
    }
}
