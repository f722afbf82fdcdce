//! The HTTP server behind `metrics --listen`: one document, served within the bounds of
//! `esimdash_serve` (a deadline for each request head, a cap on open connections where a new
//! one pushes out the oldest idle one), so that no client can keep the scrapes out.

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode, header};
use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use tokio::net::TcpListener;

pub use esimdash_serve::Bounds;

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
    let plain = |stream| async move { Some(stream) };
    let service = move |_peer| {
        let document = document.clone();
        hyper::service::service_fn(move |request: Request<Incoming>| {
            let document = document.clone();
            async move { Ok::<_, Infallible>(document.answer(&request).await) }
        })
    };
    esimdash_serve::serve(listener, bounds, plain, service, std::future::pending()).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpStream;

    fn bounds(head: Duration, open: usize) -> Bounds {
        Bounds { head, open }
    }

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
        let addr = server(bounds(Duration::from_millis(500), 4), hello).await;
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
        let addr = server(bounds(Duration::from_millis(300), 4), hello).await;
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
        let addr = server(bounds(Duration::from_secs(5), 1), app).await;
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
