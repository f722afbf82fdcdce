//! HTTP served so that no client can keep the others out. Each connection has a few seconds to
//! finish its handshake and send a request head (hyper's `header_read_timeout`, which also ends
//! a keep-alive connection left idle), and at most a fixed number are held: beyond it, a new
//! connection takes the place of the oldest one not being answered. A flood of silent or
//! half-sent connections then only pushes out its own kind, while a real client, which sends
//! its head at once and is answered in milliseconds, gets in. Refusing new connections instead
//! would keep the real clients out for as long as the flood lasts.
//!
//! What a request's body may take is the service's to bound (it knows the route); this crate
//! bounds the connection.

#![warn(clippy::too_many_lines)]

mod admission;
pub mod tls;

use admission::{Open, Place};
use hyper::body::{Body, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};

/// What a server holds at most.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// How long a client has for its handshake and request head, from connecting or from its
    /// last answer.
    pub head: Duration,
    /// Connections held at once, handshakes included: with room for the process's other
    /// descriptors within the usual `ulimit -n` of 1 024.
    pub open: usize,
}

impl Bounds {
    /// Scrapers send their request at once and seldom keep more than one connection each.
    pub const SCRAPES: Self = Self {
        head: Duration::from_secs(5),
        open: 64,
    };
}

/// How long an accept error (descriptors run out elsewhere in the process) pauses the loop:
/// the connection waits in the backlog, and retrying at once would spin.
const ACCEPT_PAUSE: Duration = Duration::from_millis(50);

/// The largest request head read (hyper's default is about 400 KB): no request of ours comes
/// near it, and a client sending more is refused before it costs memory.
const HEAD_BYTES: usize = 64 * 1024;

/// How long a stopping server waits for the requests being answered.
const DRAIN: Duration = Duration::from_secs(10);

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What a connection is served by: an HTTP service of this crate's connections.
pub trait Service<B>:
    hyper::service::Service<Request<Incoming>, Response = Response<B>, Future: Send + 'static, Error: Into<BoxError>>
    + Send
    + Sync
    + 'static
{
}

impl<S, B> Service<B> for S where
    S: hyper::service::Service<
            Request<Incoming>,
            Response = Response<B>,
            Future: Send + 'static,
            Error: Into<BoxError>,
        > + Send
        + Sync
        + 'static
{
}

/// The body of an answer, sent as it comes.
pub trait AnswerBody: Body<Data: Send, Error: Into<BoxError>> + Send + 'static {}

impl<B> AnswerBody for B where B: Body<Data: Send, Error: Into<BoxError>> + Send + 'static {}

/// Serves `listener` until `stop` completes, then waits for the requests being answered (up to
/// 10 s). Each accepted connection takes a place (`Bounds::open`), goes through `handshake`
/// (plain: the stream itself; `None`: it failed) within the head's time, and is served over
/// HTTP/1.1 by the service `make` gives for its peer.
pub async fn serve<Io, Shake, Shaken, Make, Svc, B>(
    listener: TcpListener,
    bounds: Bounds,
    handshake: Shake,
    make: Make,
    stop: impl Future<Output = ()>,
) where
    Shake: Fn(TcpStream) -> Shaken + Clone + Send + Sync + 'static,
    Shaken: Future<Output = Option<Io>> + Send + 'static,
    Io: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    Make: Fn(SocketAddr) -> Svc,
    Svc: Service<B>,
    B: AnswerBody,
{
    let open = Arc::new(Open::new(bounds.open));
    tokio::pin!(stop);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "a connection could not be accepted");
                    tokio::time::sleep(ACCEPT_PAUSE).await;
                    continue;
                }
            },
            () = &mut stop => break,
        };
        // No place (every held connection is being answered): dropped, so closed at once.
        if let Some(place) = open.admit().await {
            let _ = stream.set_nodelay(true);
            let connection = connection(
                stream,
                handshake.clone(),
                Marked::new(make(peer), &place),
                place,
                bounds.head,
            );
            tokio::spawn(connection);
        }
    }
    drop(listener);
    if tokio::time::timeout(DRAIN, open.drained()).await.is_err() {
        tracing::warn!("stopped with requests still being answered");
    }
}

/// One connection, until it ends, its head time runs out, or a newer one pushes it out.
async fn connection<Io, Shake, Shaken, Svc, B>(
    stream: TcpStream,
    handshake: Shake,
    service: Marked<Svc>,
    mut place: Place,
    head: Duration,
) where
    Shake: Fn(TcpStream) -> Shaken,
    Shaken: Future<Output = Option<Io>>,
    Io: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    Svc: Service<B>,
    B: AnswerBody,
{
    let shaken = tokio::select! {
        shaken = tokio::time::timeout(head, handshake(stream)) => shaken,
        _ = &mut place.pushed_out => return,
    };
    let Ok(Some(io)) = shaken else {
        tracing::debug!("a handshake failed or ran out of time");
        return;
    };
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(head)
        .max_buf_size(HEAD_BYTES);
    let served = http.serve_connection(TokioIo::new(io), service);
    tokio::select! {
        result = served => {
            if let Err(e) = result {
                tracing::debug!(error = %e, "a connection ended");
            }
        }
        _ = &mut place.pushed_out => tracing::debug!("a connection made room for a newer one"),
    }
}

/// A service whose connection counts as busy while a request of it is answered: such a
/// connection is never pushed out.
struct Marked<Svc> {
    inner: Svc,
    busy: admission::Busy,
}

impl<Svc> Marked<Svc> {
    fn new(inner: Svc, place: &Place) -> Self {
        Self {
            inner,
            busy: place.busy(),
        }
    }
}

impl<Svc, B> hyper::service::Service<Request<Incoming>> for Marked<Svc>
where
    Svc: hyper::service::Service<Request<Incoming>, Response = Response<B>>,
    Svc::Future: Send + 'static,
{
    type Response = Response<B>;
    type Error = Svc::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Response<B>, Svc::Error>> + Send>>;

    fn call(&self, request: Request<Incoming>) -> Self::Future {
        let answering = self.busy.mark();
        let answer = self.inner.call(request);
        Box::pin(async move {
            let answer = answer.await;
            drop(answering);
            answer
        })
    }
}
