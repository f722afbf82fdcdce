//! The gateway served over https (`tls_cert` and `tls_key` of `[gateway]`): rustls on ring, as
//! the client. Each handshake runs in its connection's task, within the connection bounds
//! (`esimdash_serve`), so an agent that connects and never speaks holds up nobody else.

use std::net::SocketAddr;
use std::path::Path;
use tokio_rustls::TlsAcceptor;

/// The server side of TLS with this certificate chain and key (PEM files); why not, in words.
pub fn acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, String> {
    esimdash_serve::tls::acceptor(cert, key, &[])
}

pub use esimdash_serve::tls::handshake;

/// Who is connected, over http or https: what failed sign-ins are counted by.
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub SocketAddr);
