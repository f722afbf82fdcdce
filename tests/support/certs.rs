//! A test certificate authority, and a certificate for 127.0.0.1 and localhost that it signed,
//! made when a test runs, as PEM files: the sandbox serves https with the certificate, a client
//! trusts the authority through `ca_file`.

use std::path::PathBuf;

pub struct TestCerts {
    _dir: tempfile::TempDir,
    /// The authority's certificate: what a client adds as a root.
    pub ca: PathBuf,
    /// The server's certificate and key.
    pub cert: PathBuf,
    pub key: PathBuf,
}

pub fn make() -> TestCerts {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca_params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "esimdash test authority");
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
    let cert = params
        .signed_by(&key, &rcgen::Issuer::from_params(&ca_params, &ca_key))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: String| {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        path
    };
    TestCerts {
        ca: write("ca.pem", ca.pem()),
        cert: write("server.pem", cert.pem()),
        key: write("server-key.pem", key.serialize_pem()),
        _dir: dir,
    }
}

/// The sandbox's server side for these certificates.
pub fn acceptor(certs: &TestCerts) -> esimdash_sandbox::tls::Acceptor {
    esimdash_sandbox::tls::acceptor(&certs.cert, &certs.key).unwrap()
}
