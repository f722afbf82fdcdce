//! The server side of TLS from PEM files, rustls on ring as the client: one loader for the
//! gateway and the sandbox, and the handshake a connection makes within its bounds.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::path::Path;
use std::sync::Arc;
use tokio::net::TcpStream;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// The server side of TLS with this certificate chain and key (PEM files), offering these
/// application protocols (ALPN, most preferred first); why not, in words.
pub fn acceptor(cert: &Path, key: &Path, protocols: &[&[u8]]) -> Result<TlsAcceptor, String> {
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(|e| format!("cannot read the certificate {}: {e}", cert.display()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{} is not a PEM certificate file: {e}", cert.display()))?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("cannot read the key {}: {e}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_no_client_auth().with_single_cert(chain, key))
        .map_err(|e| format!("the certificate and key do not make a TLS server: {e}"))?;
    config.alpn_protocols = protocols.iter().map(|p| p.to_vec()).collect();
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// The server's side of a handshake on `stream` (its time is bounded by the caller's
/// connection bounds); `None` when it failed.
pub async fn handshake(acceptor: TlsAcceptor, stream: TcpStream) -> Option<TlsStream<TcpStream>> {
    match acceptor.accept(stream).await {
        Ok(tls) => Some(tls),
        Err(e) => {
            tracing::debug!(%e, "a TLS handshake failed");
            None
        }
    }
}
