//! `--chaos RATE`: that share of answers fails, in each way a real network and server fail, so a
//! client can be proved against them. Failures chosen before the route runs change nothing on
//! the server (500, 503 with `Retry-After`, 429 with `Retry-After`, a reset connection); the
//! others run it and lose the answer on the way (a body cut short, a body that stalls), which
//! for a payment is the "lost answer" an idempotency key exists for.

use super::http::Failure;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::serve::{IncomingStream, Listener};
use futures_util::{StreamExt, stream};
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// One way an answer fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disruption {
    ServerError,
    Unavailable,
    RateLimited,
    Reset,
    Truncated,
    Stalled,
}

impl Disruption {
    pub const ALL: [Disruption; 6] = [
        Disruption::ServerError,
        Disruption::Unavailable,
        Disruption::RateLimited,
        Disruption::Reset,
        Disruption::Truncated,
        Disruption::Stalled,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Disruption::ServerError => "500",
            Disruption::Unavailable => "503 Retry-After",
            Disruption::RateLimited => "429 Retry-After",
            Disruption::Reset => "connection reset",
            Disruption::Truncated => "body cut short",
            Disruption::Stalled => "body stalled",
        }
    }
}

/// How long a stalled body waits before the server gives up on it too (past any client
/// timeout; the connection is freed at once when the client hangs up).
const STALL: Duration = Duration::from_secs(60);

/// Long enough for the first half of a cut answer to leave before the connection closes.
const FLUSHED: Duration = Duration::from_millis(20);

/// What `Retry-After` says on a chaos 503 or 429: short, so a demo under chaos keeps moving.
const RETRY_AFTER_SECS: u32 = 1;

/// The chaos of one sandbox: its rate, its dice, and how many answers failed each way.
pub struct Chaos {
    rate: f64,
    rng: Mutex<fastrand::Rng>,
    counts: [AtomicU64; 6],
}

impl Chaos {
    /// `rate` in 0..=1 (checked by the command line); `seed` makes a run repeatable.
    pub fn new(rate: f64, seed: u64) -> Self {
        Self {
            rate,
            rng: Mutex::new(fastrand::Rng::with_seed(seed)),
            counts: Default::default(),
        }
    }

    fn pick(&self) -> Option<Disruption> {
        if self.rate <= 0.0 {
            return None;
        }
        let mut rng = self.rng.lock().unwrap_or_else(|p| p.into_inner());
        if rng.f64() >= self.rate {
            return None;
        }
        let failure = Disruption::ALL[rng.usize(..Disruption::ALL.len())];
        self.counts[failure as usize].fetch_add(1, Ordering::Relaxed);
        Some(failure)
    }

    /// How many answers failed each way so far.
    pub fn counts(&self) -> Vec<(Disruption, u64)> {
        Disruption::ALL
            .iter()
            .map(|&f| (f, self.counts[f as usize].load(Ordering::Relaxed)))
            .collect()
    }
}

/// The middleware: passes the request on, or fails its answer one way.
pub async fn disrupt(State(chaos): State<Arc<Chaos>>, req: Request, next: Next) -> Response {
    let Some(failure) = chaos.pick() else {
        return next.run(req).await;
    };
    tracing::debug!(path = %req.uri().path(), failure = failure.label(), "chaos");
    let retry_later = |status, message| {
        let mut r = Failure::new(status, message).into_response();
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECS));
        r
    };
    match failure {
        Disruption::ServerError => {
            Failure::new(StatusCode::INTERNAL_SERVER_ERROR, "Internal server error").into_response()
        }
        Disruption::Unavailable => retry_later(StatusCode::SERVICE_UNAVAILABLE, "Service unavailable"),
        Disruption::RateLimited => retry_later(StatusCode::TOO_MANY_REQUESTS, "Rate limit exceeded"),
        Disruption::Reset => match req.extensions().get::<ConnectInfo<Peer>>() {
            Some(ConnectInfo(peer)) => {
                // The connection is reset as this answer is written: the client reads nothing.
                peer.reset.store(true, Ordering::Relaxed);
                StatusCode::INTERNAL_SERVER_ERROR.into_response()
            }
            // Served without the chaos listener (the bare router): the nearest failure.
            None => Failure::new(StatusCode::INTERNAL_SERVER_ERROR, "Internal server error").into_response(),
        },
        Disruption::Truncated | Disruption::Stalled => {
            let response = next.run(req).await;
            cut_short(response, failure == Disruption::Stalled).await
        }
    }
}

/// The answer with its full length announced and only its first half sent; then the body
/// fails (the connection closes) or, `stalled`, waits for `STALL` first.
async fn cut_short(response: Response, stalled: bool) -> Response {
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, usize::MAX).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    parts
        .headers
        .insert(header::CONTENT_LENGTH, HeaderValue::from(bytes.len()));
    let half = bytes.slice(..bytes.len() / 2);
    let end = async move {
        // Even a cut answer gets its first half out (the connection's buffer is flushed first).
        tokio::time::sleep(if stalled { STALL } else { FLUSHED }).await;
        Err::<Bytes, io::Error>(io::Error::new(
            io::ErrorKind::ConnectionAborted,
            "chaos: answer cut short",
        ))
    };
    let body = stream::iter([Ok::<Bytes, io::Error>(half)]).chain(stream::once(end));
    Response::from_parts(parts, Body::from_stream(body))
}

/// A TCP listener whose connections can be reset from a request's handling.
pub struct ChaosListener(pub TcpListener);

/// One accepted connection's reset switch, given to each of its requests.
#[derive(Clone, Debug, Default)]
pub struct Peer {
    reset: Arc<AtomicBool>,
}

impl Listener for ChaosListener {
    type Io = ResettableStream;
    type Addr = Peer;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let (stream, _) = Listener::accept(&mut self.0).await;
        resettable(stream)
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.0.local_addr().map(|_| Peer { reset: Arc::default() })
    }
}

impl axum::extract::connect_info::Connected<IncomingStream<'_, ChaosListener>> for Peer {
    fn connect_info(stream: IncomingStream<'_, ChaosListener>) -> Self {
        stream.remote_addr().clone()
    }
}

/// A connection with its reset switch, and the switch for its requests.
pub fn resettable<S>(stream: S) -> (ResettableStream<S>, Peer) {
    let reset = Arc::new(AtomicBool::new(false));
    (
        ResettableStream {
            stream,
            reset: reset.clone(),
        },
        Peer { reset },
    )
}

/// A stream over TCP that can be closed with a reset.
pub trait OverTcp {
    fn tcp(&self) -> &TcpStream;
}

impl OverTcp for TcpStream {
    fn tcp(&self) -> &TcpStream {
        self
    }
}

impl OverTcp for tokio_rustls::server::TlsStream<TcpStream> {
    fn tcp(&self) -> &TcpStream {
        self.get_ref().0
    }
}

/// A TCP stream (plain or TLS) that, once its switch is on, fails every read and write and is
/// closed with a reset (no linger), as when a middlebox or a crashing server drops a connection.
pub struct ResettableStream<S = TcpStream> {
    stream: S,
    reset: Arc<AtomicBool>,
}

impl<S: OverTcp> ResettableStream<S> {
    fn check(&self) -> io::Result<()> {
        if !self.reset.load(Ordering::Relaxed) {
            return Ok(());
        }
        // Closing with no linger sends RST instead of FIN.
        let _ = self.stream.tcp().set_zero_linger();
        Err(io::Error::new(
            io::ErrorKind::ConnectionReset,
            "chaos: connection reset",
        ))
    }
}

impl<S: OverTcp + AsyncRead + Unpin> AsyncRead for ResettableStream<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        self.check()?;
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl<S: OverTcp + AsyncWrite + Unpin> AsyncWrite for ResettableStream<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.check()?;
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.check()?;
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.check()?;
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
