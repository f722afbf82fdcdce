//! TLS for the API client: rustls on ring (it builds in seconds where aws-lc compiles a large C
//! library; docs/performance.md), verifying servers against the system's root certificates
//! and any extra root configured (`ca_file`).
//!
//! The system's roots are hundreds of files: they are read when the first https connection is
//! verified, not when the client is made, so a command against an `http://` loopback sandbox,
//! or one that makes no request, never reads them; nor one whose server's chain ends at an
//! extra root (a private authority, a test certificate).

use rustls::DigitallySignedStruct;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use std::path::Path;
use std::sync::{Arc, OnceLock};

/// The client's TLS settings: our provider, HTTP/2 or 1.1 as the server prefers, and servers
/// verified by `Roots`, returned too (to tell whether they were loaded).
pub fn client_config(
    extra_roots: Vec<CertificateDer<'static>>,
) -> Result<(rustls::ClientConfig, Arc<Roots>), rustls::Error> {
    let provider = provider();
    let roots = Arc::new(Roots {
        provider: provider.clone(),
        extra_roots,
        extra_only: OnceLock::new(),
        verifier: OnceLock::new(),
    });
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(roots.clone())
        .with_no_client_auth();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok((config, roots))
}

/// rustls on ring, installed as the process's default once (a second call changes nothing).
pub fn provider() -> Arc<CryptoProvider> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    CryptoProvider::get_default()
        .cloned()
        .unwrap_or_else(|| Arc::new(rustls::crypto::ring::default_provider()))
}

/// The certificates of a PEM file (`ca_file`): at least one, or why not, in words.
pub fn read_pem_certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let bytes = esimdash_files::read_regular(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{} is not a PEM certificate file: {e}", path.display()))?;
    if certs.is_empty() {
        return Err(format!("{} holds no PEM certificate", path.display()));
    }
    Ok(certs)
}

/// Verifies as the platform verifier does (the system's roots plus the extra ones, names
/// checked), building it on the first certificate to verify. Signatures are checked with the
/// provider's algorithms, which need no roots.
#[derive(Debug)]
pub struct Roots {
    provider: Arc<CryptoProvider>,
    extra_roots: Vec<CertificateDer<'static>>,
    /// The extra roots alone: a server whose chain ends at one of them is verified without the
    /// system's roots ever being read.
    extra_only: OnceLock<Option<Arc<rustls::client::WebPkiServerVerifier>>>,
    verifier: OnceLock<Result<rustls_platform_verifier::Verifier, rustls::Error>>,
}

impl Roots {
    /// Whether the system's roots were read (a session that made no https connection: never).
    pub fn loaded(&self) -> bool {
        self.verifier.get().is_some()
    }

    fn extra_only(&self) -> Option<&Arc<rustls::client::WebPkiServerVerifier>> {
        self.extra_only
            .get_or_init(|| {
                let mut store = rustls::RootCertStore::empty();
                let (added, _) = store.add_parsable_certificates(self.extra_roots.iter().cloned());
                if added == 0 {
                    return None;
                }
                rustls::client::WebPkiServerVerifier::builder_with_provider(Arc::new(store), self.provider.clone())
                    .build()
                    .ok()
            })
            .as_ref()
    }

    fn verifier(&self) -> Result<&rustls_platform_verifier::Verifier, rustls::Error> {
        let built = self.verifier.get_or_init(|| {
            tracing::debug!("loading the system's root certificates");
            rustls_platform_verifier::Verifier::new_with_extra_roots(self.extra_roots.clone(), self.provider.clone())
        });
        built.as_ref().map_err(Clone::clone)
    }
}

impl ServerCertVerifier for Roots {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(extra) = self.extra_only()
            && let Ok(verified) = extra.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            return Ok(verified);
        }
        // Not one of ours (or not valid with them): the system's roots, and ours, decide.
        self.verifier()?
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}
