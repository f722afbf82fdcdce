//! The HTTP server behind `metrics --listen`, bounded so that no client can keep the scrapes
//! out. Each connection has a few seconds to send a request head (hyper's
//! `header_read_timeout`, which also ends a keep-alive connection left idle), and at most a
//! fixed number are held: beyond it, a new connection takes the place of the oldest one not
//! being answered. A flood of silent connections then only pushes out its own kind, while a
//! scrape, which sends its head at once and is answered in milliseconds, gets in. Refusing
//! new connections instead would keep the scrapes out for as long as the flood lasts.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode, header};
use hyper_util::rt::{TokioIo, TokioTimer};
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};

/// What a server holds at most.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// How long a client has for its request head, from connecting or from its last answer.
    pub head: Duration,
    /// Connections held at once: with a few descriptors for the API client and the index,
    /// well within the usual `ulimit -n` of 1 024.
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

/// How long a new connection waits for the one it pushed out to close.
const MAKE_ROOM: Duration = Duration::from_secs(1);

/// The one document a server serves: its path, its content type, and what makes it (called on
/// each GET or HEAD of the path).
#[derive(Clone)]
pub struct Document {
    path: &'static str,
    content_type: &'static str,
    make: Arc<dyn Fn() -> BoxFuture<'static, String> + Send + Sync>,
}

impl Document {
    pub fn new<Made>(
        path: &'static str,
        content_type: &'static str,
        make: impl Fn() -> Made + Send + Sync + 'static,
    ) -> Self
    where
        Made: Future<Output = String> + Send + 'static,
    {
        Self {
            path,
            content_type,
            make: Arc::new(move || make().boxed()),
        }
    }

    /// The answer to `request`: the document, or why not (another path, another method).
    async fn answer(&self, request: &Request<Incoming>) -> Response<String> {
        if request.uri().path() != self.path {
            let why = format!("not found: only {} is served here\n", self.path);
            return plain(StatusCode::NOT_FOUND, why);
        }
        if !matches!(*request.method(), Method::GET | Method::HEAD) {
            let why = "only GET and HEAD are answered here\n".to_string();
            let mut refused = plain(StatusCode::METHOD_NOT_ALLOWED, why);
            // What RFC 9110 asks of a 405: the methods that are allowed.
            let allowed = header::HeaderValue::from_static("GET, HEAD");
            refused.headers_mut().insert(header::ALLOW, allowed);
            return refused;
        }
        let mut answer = Response::new((self.make)().await);
        if let Ok(value) = header::HeaderValue::from_str(self.content_type) {
            answer.headers_mut().insert(header::CONTENT_TYPE, value);
        }
        answer
    }
}

/// A refusal in words, as plain text.
fn plain(status: StatusCode, words: String) -> Response<String> {
    let mut answer = Response::new(words);
    *answer.status_mut() = status;
    let text = header::HeaderValue::from_static("text/plain; charset=utf-8");
    answer.headers_mut().insert(header::CONTENT_TYPE, text);
    answer
}

/// Serves `document` on `listener` until the future is dropped.
pub async fn serve(listener: TcpListener, document: Document, bounds: Bounds) {
    let open = Arc::new(Open::new(bounds.open));
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                tracing::warn!(error = %e, "metrics: a connection could not be accepted");
                tokio::time::sleep(ACCEPT_PAUSE).await;
                continue;
            }
        };
        // No place (every held connection is being answered): dropped, so closed at once.
        if let Some(place) = open.admit().await {
            tokio::spawn(connection(stream, document.clone(), place, bounds.head));
        }
    }
}

/// One connection, until it ends, its head time runs out, or a newer one pushes it out.
async fn connection(stream: TcpStream, document: Document, mut place: Place, head: Duration) {
    let busy = place.busy.clone();
    let service = hyper::service::service_fn(move |request: Request<Incoming>| {
        let answering = Answering::mark(&busy);
        let document = document.clone();
        async move {
            let answer = document.answer(&request).await;
            drop(answering);
            Ok::<_, Infallible>(answer)
        }
    });
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(head);
    let served = http.serve_connection(TokioIo::new(stream), service);
    tokio::select! {
        result = served => {
            if let Err(e) = result {
                tracing::debug!(error = %e, "metrics: a connection ended");
            }
        }
        _ = &mut place.pushed_out => tracing::debug!("metrics: a connection made room for a newer one"),
    }
}

/// The connections held, oldest first.
struct Open {
    /// One per connection held, given back when its socket is closed: the hard bound.
    permits: Arc<Semaphore>,
    held: Mutex<BTreeMap<u64, Held>>,
    next: AtomicU64,
}

struct Held {
    busy: Arc<AtomicBool>,
    /// Dropped to push the connection out.
    _push_out: oneshot::Sender<()>,
}

/// A connection's place among the held ones, given up when it is dropped.
struct Place {
    id: u64,
    /// Whether a request of it is being answered: such a connection is not pushed out.
    busy: Arc<AtomicBool>,
    pushed_out: oneshot::Receiver<()>,
    open: Arc<Open>,
    _permit: OwnedSemaphorePermit,
}

impl Open {
    fn new(most: usize) -> Self {
        Self {
            permits: Arc::new(Semaphore::new(most.max(1))),
            held: Mutex::new(BTreeMap::new()),
            next: AtomicU64::new(0),
        }
    }

    fn held(&self) -> MutexGuard<'_, BTreeMap<u64, Held>> {
        self.held.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A place for a new connection: a free one, or the oldest idle connection's.
    async fn admit(self: &Arc<Self>) -> Option<Place> {
        let permit = match self.permits.clone().try_acquire_owned() {
            Ok(permit) => permit,
            Err(_) => {
                if !self.push_out_oldest_idle() {
                    return None;
                }
                tokio::time::timeout(MAKE_ROOM, self.permits.clone().acquire_owned())
                    .await
                    .ok()?
                    .ok()?
            }
        };
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let busy = Arc::new(AtomicBool::new(false));
        let (push_out, pushed_out) = oneshot::channel();
        self.held().insert(
            id,
            Held {
                busy: busy.clone(),
                _push_out: push_out,
            },
        );
        Some(Place {
            id,
            busy,
            pushed_out,
            open: self.clone(),
            _permit: permit,
        })
    }

    /// Whether a connection was pushed out: the oldest one no request of which is being answered.
    fn push_out_oldest_idle(&self) -> bool {
        let mut held = self.held();
        let oldest = held
            .iter()
            .find(|(_, connection)| !connection.busy.load(Ordering::Acquire))
            .map(|(&id, _)| id);
        oldest.and_then(|id| held.remove(&id)).is_some()
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.open.held().remove(&self.id);
    }
}

/// Marks a connection busy while a request of it is answered (also when the answer is dropped).
struct Answering(Arc<AtomicBool>);

impl Answering {
    fn mark(busy: &Arc<AtomicBool>) -> Self {
        busy.store(true, Ordering::Release);
        Self(busy.clone())
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    async fn server<Made>(bounds: Bounds, make: impl Fn() -> Made + Send + Sync + 'static) -> std::net::SocketAddr
    where
        Made: Future<Output = String> + Send + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(serve(listener, Document::new("/metrics", "text/plain", make), bounds));
        addr
    }

    async fn hello() -> String {
        "up 1\n".to_string()
    }

    async fn stalled(addr: std::net::SocketAddr) -> TcpStream {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(b"GET /metr").await.unwrap();
        stream
    }

    async fn scrape(addr: std::net::SocketAddr) -> String {
        ask(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await
    }

    async fn ask(addr: std::net::SocketAddr, head: &str) -> String {
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream.write_all(head.as_bytes()).await.unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer).await;
        answer
    }

    #[tokio::test]
    async fn only_the_document_is_served_and_only_to_get_or_head() {
        let addr = server(Bounds::SCRAPES, hello).await;
        let answer = ask(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await;
        assert!(
            answer.contains("content-type: text/plain") && answer.ends_with("up 1\n"),
            "{answer}"
        );
        let elsewhere = ask(addr, "GET /other HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await;
        assert!(
            elsewhere.starts_with("HTTP/1.1 404") && elsewhere.contains("content-type: text/plain"),
            "{elsewhere}"
        );
        let posted = ask(
            addr,
            "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        )
        .await;
        assert!(
            posted.starts_with("HTTP/1.1 405") && posted.contains("allow: GET, HEAD"),
            "{posted}"
        );
    }

    /// Whether the server closed `stream` within `within`.
    async fn closed(stream: &mut TcpStream, within: Duration) -> bool {
        let mut rest = Vec::new();
        tokio::time::timeout(within, stream.read_to_end(&mut rest))
            .await
            .is_ok()
    }

    #[tokio::test]
    async fn a_scrape_pushes_out_the_oldest_stalled_connection_and_the_rest_time_out() {
        let bounds = Bounds {
            head: Duration::from_millis(500),
            open: 4,
        };
        let addr = server(bounds, hello).await;
        let mut flood = Vec::new();
        for _ in 0..10 {
            flood.push(stalled(addr).await);
        }
        let answer = tokio::time::timeout(Duration::from_millis(300), scrape(addr))
            .await
            .unwrap();
        assert!(
            answer.starts_with("HTTP/1.1 200") && answer.ends_with("up 1\n"),
            "{answer}"
        );
        assert!(
            closed(&mut flood[0], Duration::from_millis(100)).await,
            "pushed out by a newer one"
        );
        let newest = flood.last_mut().unwrap();
        assert!(
            !closed(newest, Duration::from_millis(200)).await,
            "held while it has time"
        );
        assert!(
            closed(newest, Duration::from_secs(2)).await,
            "closed when its time is out"
        );
    }

    #[tokio::test]
    async fn a_keep_alive_connection_left_idle_is_closed_when_its_head_time_is_out() {
        let bounds = Bounds {
            head: Duration::from_millis(300),
            open: 4,
        };
        let addr = server(bounds, hello).await;
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .await
            .unwrap();
        let mut answer = Vec::new();
        while !answer.ends_with(b"up 1\n") {
            let mut chunk = [0; 1024];
            let n = stream.read(&mut chunk).await.unwrap();
            assert!(n > 0, "closed before its answer");
            answer.extend_from_slice(&chunk[..n]);
        }
        assert!(
            !closed(&mut stream, Duration::from_millis(100)).await,
            "kept alive for a while"
        );
        assert!(
            closed(&mut stream, Duration::from_secs(2)).await,
            "not kept idle for ever"
        );
    }

    #[tokio::test]
    async fn a_connection_being_answered_is_never_pushed_out() {
        let gate = Arc::new(tokio::sync::Notify::new());
        let waiting = gate.clone();
        let app = move || {
            let waiting = waiting.clone();
            async move {
                waiting.notified().await;
                "up 1\n".to_string()
            }
        };
        let bounds = Bounds {
            head: Duration::from_secs(5),
            open: 1,
        };
        let addr = server(bounds, app).await;
        let answered = tokio::spawn(scrape(addr));
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut refused = stalled(addr).await;
        assert!(
            closed(&mut refused, Duration::from_millis(500)).await,
            "no place: closed at once"
        );
        gate.notify_one();
        let answer = answered.await.unwrap();
        assert!(answer.ends_with("up 1\n"), "{answer}");
    }
}
