//! A TCP proxy in front of a server that holds back the answers to writes: the request reaches
//! the server at once (so the server carries it out), the answer waits `hold` before it is
//! passed on. It is the moment a user's process is killed or hung up "mid-payment": the money
//! has moved, the client does not know yet. It counts the writes that went through it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

pub struct HoldingProxy {
    pub addr: SocketAddr,
    writes: Arc<AtomicU64>,
    /// Writes lose their `Idempotency-Key` header on the way: a failover node or a proxy that
    /// drops it, so the server behind no longer honours keys.
    drop_keys: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl HoldingProxy {
    /// Listens on 127.0.0.1 and forwards to `upstream`, holding each write's answer `hold`.
    pub async fn start(upstream: SocketAddr, hold: Duration) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let writes = Arc::new(AtomicU64::new(0));
        let drop_keys = Arc::new(AtomicBool::new(false));
        let (counted, dropping) = (writes.clone(), drop_keys.clone());
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (counted, dropping) = (counted.clone(), dropping.clone());
                tokio::spawn(async move {
                    if let Ok(server) = TcpStream::connect(upstream).await {
                        relay(client, server, hold, counted, dropping).await;
                    }
                });
            }
        });
        Self {
            addr,
            writes,
            drop_keys,
            task,
        }
    }

    /// `http://127.0.0.1:port/api/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/api/v1", self.addr)
    }

    /// From now on, writes reach the server without their idempotency key.
    #[allow(dead_code)]
    pub fn drop_keys(&self) {
        self.drop_keys.store(true, Ordering::SeqCst);
    }

    /// Writes (POST, PATCH) that went through to the server.
    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::SeqCst)
    }
}

impl Drop for HoldingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn relay(
    client: TcpStream,
    server: TcpStream,
    hold: Duration,
    writes: Arc<AtomicU64>,
    drop_keys: Arc<AtomicBool>,
) {
    let (mut client_rx, mut client_tx) = client.into_split();
    let (mut server_rx, mut server_tx) = server.into_split();
    let write_pending = Arc::new(AtomicBool::new(false));
    let pending = write_pending.clone();
    let up = async move {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = client_rx.read(&mut buf).await {
            if n == 0 {
                break;
            }
            let mut chunk = buf[..n].to_vec();
            if chunk.starts_with(b"POST ") || chunk.starts_with(b"PATCH ") {
                writes.fetch_add(1, Ordering::SeqCst);
                pending.store(true, Ordering::SeqCst);
                if drop_keys.load(Ordering::SeqCst) {
                    chunk = without_key(&chunk);
                }
            }
            if server_tx.write_all(&chunk).await.is_err() {
                break;
            }
        }
    };
    let down = async move {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n) = server_rx.read(&mut buf).await {
            if n == 0 {
                break;
            }
            if write_pending.swap(false, Ordering::SeqCst) {
                tokio::time::sleep(hold).await;
            }
            if client_tx.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    };
    tokio::join!(up, down);
}

/// A request's bytes without its `Idempotency-Key` header line (the head comes in one read).
fn without_key(request: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(request.len());
    let mut rest = request;
    while let Some(end) = rest.windows(2).position(|w| w == b"\r\n") {
        let line = &rest[..end + 2];
        if !line.to_ascii_lowercase().starts_with(b"idempotency-key:") {
            out.extend_from_slice(line);
        }
        rest = &rest[end + 2..];
        if line == b"\r\n" {
            break;
        }
    }
    out.extend_from_slice(rest);
    out
}
