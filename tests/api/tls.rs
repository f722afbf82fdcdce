//! https end to end: the sandbox served over TLS with a test certificate; the client trusts it
//! through an extra root (`ca_file`) and refuses it without; and a client that only ever speaks
//! plain http to a loopback sandbox never reads the system's root certificates.

use crate::certs;
use crate::common::*;
use esimdash_api::{ApiError, BaseUrl, Client, ClientOptions, Credentials, read_pem_certificates};
use esimdash_sandbox::{SandboxConfig, spawn_with};

fn acme_over(base_url: &str, extra_roots: Vec<rustls::pki_types::CertificateDer<'static>>) -> Client {
    let options = ClientOptions { extra_roots, ..quick() };
    let credentials = Credentials::pair("ak_demo_acme", "sk_demo_acme");
    Client::new(BaseUrl::parse(base_url).unwrap(), &credentials, options).unwrap()
}

#[tokio::test]
async fn over_https_the_sandboxs_certificate_is_trusted_through_ca_file_and_refused_without() {
    let certs = certs::make();
    let config = SandboxConfig::default();
    let sb = spawn_with(&config, "127.0.0.1:0".parse().unwrap(), Some(certs::acceptor(&certs)))
        .await
        .unwrap();
    assert!(sb.base_url().starts_with("https://"));

    let trusting = acme_over(&sb.base_url(), read_pem_certificates(&certs.ca).unwrap());
    assert!(
        !trusting.read_system_roots(),
        "nothing read before the first connection"
    );
    let balance = trusting.balance().await.expect("the balance over https");
    assert_eq!(balance.to_string(), "250.00");
    assert!(
        !trusting.read_system_roots(),
        "its chain ends at the extra root: the system's are not needed"
    );
    // The QR images are served over the same TLS.
    let esims = trusting.esims(&Default::default()).await.unwrap();
    assert!(!esims.esims.is_empty());

    let wary = acme_over(&sb.base_url(), Vec::new());
    let error = wary.balance().await.unwrap_err();
    assert!(
        wary.read_system_roots(),
        "read to verify a certificate of no extra root"
    );
    let text = error.to_string();
    assert!(matches!(error, ApiError::Network { .. }), "{error:?}");
    assert!(text.to_lowercase().contains("certificate"), "says why: {text}");
}

#[tokio::test]
async fn a_client_that_speaks_plain_http_never_reads_the_systems_roots() {
    let (_sb, client) = sandbox_and_acme().await;
    client.balance().await.unwrap();
    client.esims(&Default::default()).await.unwrap();
    assert!(!client.read_system_roots());
}

#[test]
fn a_ca_file_that_is_not_pem_certificates_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("none.pem");
    assert!(read_pem_certificates(&missing).unwrap_err().contains("cannot read"));
    let empty = dir.path().join("empty.pem");
    std::fs::write(&empty, "not a certificate\n").unwrap();
    assert!(
        read_pem_certificates(&empty)
            .unwrap_err()
            .contains("no PEM certificate")
    );
}
