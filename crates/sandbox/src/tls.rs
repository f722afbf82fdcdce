//! The sandbox served over TLS (`esimdash sandbox --tls-cert FILE --tls-key FILE`): with a test
//! certificate, a client is tried on https end to end (trusting it through `ca_file`), as our
//! tests and `scripts/bench.sh` do. Handshakes run each in a task of its own, so a client that
//! connects and never speaks holds up nobody else.

use super::chaos::{Peer, ResettableStream, resettable};
use axum::serve::{IncomingStream, Listener};
use std::io;
use std::path::Path;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// The server side of TLS, as `acceptor` makes it.
pub type Acceptor = TlsAcceptor;

/// How long a client has to complete its handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The server side of TLS with this certificate chain and key (PEM files), offering HTTP/2
/// and HTTP/1.1; why not, in words.
pub fn acceptor(cert: &Path, key: &Path) -> Result<TlsAcceptor, String> {
    esimdash_serve::tls::acceptor(cert, key, &[b"h2", b"http/1.1"])
}

/// Accepts TCP connections and hands on those whose TLS handshake completed.
pub struct TlsListener {
    ready: mpsc::Receiver<TlsStream<TcpStream>>,
}

impl TlsListener {
    pub fn new(tcp: TcpListener, acceptor: TlsAcceptor) -> Self {
        let (tx, ready) = mpsc::channel(64);
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = tcp.accept().await else { continue };
                // A handshake and an answer are several small writes: Nagle's algorithm with
                // the peer's delayed acknowledgement would hold each back by 40 ms.
                let _ = stream.set_nodelay(true);
                let (acceptor, ready) = (acceptor.clone(), tx.clone());
                tokio::spawn(async move {
                    match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await {
                        Ok(Ok(tls)) => {
                            let _ = ready.send(tls).await;
                        }
                        Ok(Err(e)) => tracing::debug!(%e, "a TLS handshake failed"),
                        Err(_) => tracing::debug!("a TLS handshake timed out"),
                    }
                });
                if tx.is_closed() {
                    break;
                }
            }
        });
        Self { ready }
    }
}

impl Listener for TlsListener {
    type Io = ResettableStream<TlsStream<TcpStream>>;
    type Addr = Peer;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(tls) => resettable(tls),
            // The accepting task ends only with the listener: nothing more will come.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        Ok(Peer::default())
    }
}

impl axum::extract::connect_info::Connected<IncomingStream<'_, TlsListener>> for Peer {
    fn connect_info(stream: IncomingStream<'_, TlsListener>) -> Self {
        stream.remote_addr().clone()
    }
}
