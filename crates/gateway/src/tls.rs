//! The gateway served over https (`tls_cert` and `tls_key` of `[gateway]`): rustls on ring, as
//! the client. Each handshake runs in its connection's task, within the connection bounds
//! (`esimdash_serve`), so an agent that connects and never speaks holds up nobody else.

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use tokio::net::TcpStream;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// The server side of TLS with this certificate chain and key (PEM files); why not, in words.
pub fn acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, String> {
    let chain = CertificateDer::pem_file_iter(cert)
        .map_err(|e| format!("cannot read the certificate {}: {e}", cert.display()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("{} is not a PEM certificate file: {e}", cert.display()))?;
    let key = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("cannot read the key {}: {e}", key.display()))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .and_then(|b| b.with_no_client_auth().with_single_cert(chain, key))
        .map_err(|e| format!("the certificate and key do not make a TLS server: {e}"))?;
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

/// Who is connected, over http or https: what failed sign-ins are counted by.
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub SocketAddr);
