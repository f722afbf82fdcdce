//! The gateway's HTTP layer: it serves (bounded connections, `esimdash_serve`; TLS), reads
//! each request's body in time, signs its agent in (`caller`), and hands it to a route
//! (`routes`) that asks the rules and answers (`answer`). What the gateway decides is in the
//! modules beside this one, none of which knows HTTP.

mod answer;
mod caller;
mod mcp;
mod routes;

pub use mcp::Assistant;

use crate::config::Settings;
use crate::index::TeamIndex;
use crate::refused::Refused;
use crate::state::Gateway;
use crate::store::Store;
use crate::tls::Peer;
use axum::Router;
use axum::extract::{ConnectInfo, Request};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use esimdash_api::Client;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

/// The largest request body the contract takes.
const MAX_BODY: usize = 64 * 1024;
/// A request's body must have arrived this long after its head.
const BODY_TIME: Duration = Duration::from_secs(10);
/// What a client may hold: 10 s for a handshake and each request head (also the time a
/// keep-alive connection may stay idle), and 512 connections, within a 1 024-descriptor limit
/// with room for the store, the API client and the index. Beyond it, a new connection pushes
/// out the oldest idle one, so that half-sent requests cannot keep the agents out.
const CONNECTIONS: esimdash_serve::Bounds = esimdash_serve::Bounds {
    head: Duration::from_secs(10),
    open: 512,
};

/// A running gateway: where it listens; it serves until dropped or `stop`ped.
pub struct Running {
    pub addr: SocketAddr,
    gateway: Arc<Gateway>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<()>,
}

/// The gateway's figures, for a scraper.
#[derive(Clone)]
pub struct Metrics(Arc<Gateway>);

impl Metrics {
    /// The figures now, in the Prometheus text format.
    pub async fn render(&self) -> String {
        crate::metrics::render(&self.0).await
    }
}

impl Running {
    pub fn metrics(&self) -> Metrics {
        Metrics(self.gateway.clone())
    }

    /// Stops taking requests and waits for those under way.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.task).await;
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

/// Why the gateway did not start: its set-up (settings, address, certificates: the user's to
/// mend), or a failure of its own (the store, settling).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("{0}")]
    Setup(String),
    #[error("{0}")]
    Failed(String),
}

/// Opens the store, settles the payments an earlier run left unfinished, and serves.
pub async fn start(settings: Settings, upstream: Client) -> Result<Running, StartError> {
    start_with::<NoAssistant>(settings, upstream, None).await
}

/// No `/mcp` (`start` serves none: its tools are never made).
struct NoAssistant;

impl rmcp::ServerHandler for NoAssistant {}

impl Assistant for NoAssistant {
    type Tools = NoAssistant;
    fn tools(&self, _: Client, _: bool) -> Self::Tools {
        NoAssistant
    }
}

/// As `start`, and with `assistant`, its tools served at `/mcp` to every agent (each under the
/// agent's token, through a loopback listener of the gateway's own).
pub async fn start_with<A: Assistant>(
    settings: Settings,
    upstream: Client,
    assistant: Option<A>,
) -> Result<Running, StartError> {
    settings.check().map_err(StartError::Setup)?;
    let store = Store::open(&settings.store)
        .await
        .map_err(|e| StartError::Failed(e.to_string()))?;
    let listener = tokio::net::TcpListener::bind(settings.listen)
        .await
        .map_err(|e| StartError::Setup(format!("cannot listen on {}: {e}", settings.listen)))?;
    let addr = listener.local_addr().map_err(|e| StartError::Failed(e.to_string()))?;
    let index = settings
        .index_dir
        .as_deref()
        .map(|dir| Arc::new(TeamIndex::open(dir, &upstream, &settings.account)));
    let gateway = Arc::new(Gateway::new(store, upstream, settings, index));
    let index_task = background(&gateway).await?;
    let assisted = match assistant {
        Some(assistant) => Some(assistants(&gateway, assistant).await?),
        None => None,
    };
    let (inside, mcp_route) = assisted.unzip();
    let app = router(gateway.clone(), mcp_route);
    let tls = match &gateway.settings.tls {
        Some((cert, key)) => Some(crate::tls::acceptor(cert, key).map_err(StartError::Setup)?),
        None => None,
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let stopped = async {
            let _ = stopped.await;
        };
        // Each connection's requests reach the router with the peer's address (failed sign-ins
        // are counted by it).
        let make = move |peer: SocketAddr| {
            let app = app.clone();
            hyper::service::service_fn(move |mut request: hyper::Request<hyper::body::Incoming>| {
                request.extensions_mut().insert(ConnectInfo(Peer(peer)));
                tower::ServiceExt::oneshot(app.clone(), request)
            })
        };
        // The loopback listener stops with the public one.
        let (inside_stop, inside_stopped) = tokio::sync::oneshot::channel::<()>();
        let inside_task = inside.map(|listener| {
            let make = make.clone();
            let plain = |stream| async move { Some(stream) };
            tokio::spawn(async move {
                let stopped = async {
                    let _ = inside_stopped.await;
                };
                esimdash_serve::serve(listener, CONNECTIONS, plain, make, stopped).await;
            })
        });
        match tls {
            Some(acceptor) => {
                let handshake = move |stream| crate::tls::handshake(acceptor.clone(), stream);
                esimdash_serve::serve(listener, CONNECTIONS, handshake, make, stopped).await;
            }
            None => {
                let plain = |stream| async move { Some(stream) };
                esimdash_serve::serve(listener, CONNECTIONS, plain, make, stopped).await;
            }
        }
        drop(inside_stop);
        if let Some(task) = inside_task {
            let _ = task.await;
        }
        if let Some(task) = index_task {
            task.abort();
        }
    });
    Ok(Running {
        addr,
        gateway,
        stop: Some(stop),
        task,
    })
}

/// What runs beside serving: the unfinished payments settling, each held against its caps
/// meanwhile (read before the gateway serves, so none of this run's is taken: a replica serves
/// at once), and the team index kept fresh (its task, stopped with the gateway).
async fn background(gateway: &Arc<Gateway>) -> Result<Option<tokio::task::JoinHandle<()>>, StartError> {
    let unfinished = gateway
        .store
        .unsettled()
        .await
        .map_err(|e| StartError::Failed(e.to_string()))?;
    tokio::spawn(crate::settling::settle_unfinished(gateway.clone(), unfinished));
    Ok(gateway.index.clone().map(|index| {
        let upstream = gateway.upstream.clone();
        tokio::spawn(async move { index.keep_fresh(upstream).await })
    }))
}

/// `/mcp`'s route, and the plain loopback listener the assistants' clients reach the gateway
/// on: the same routes and sign-in as the agents' own, whatever certificate the public one
/// serves.
async fn assistants<A: Assistant>(
    gateway: &Arc<Gateway>,
    assistant: A,
) -> Result<(tokio::net::TcpListener, axum::routing::MethodRouter), StartError> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|e| StartError::Failed(format!("cannot listen on the loopback for /mcp: {e}")))?;
    let at = listener.local_addr().map_err(|e| StartError::Failed(e.to_string()))?;
    let base =
        esimdash_api::BaseUrl::parse(&format!("http://{at}/api/v1")).map_err(|e| StartError::Failed(e.to_string()))?;
    let options = esimdash_api::ClientOptions {
        rate_limit: gateway.settings.rate_limit.max(1) * 10,
        ..esimdash_api::ClientOptions::default()
    };
    let mcp = Arc::new(mcp::Mcp::new(assistant, base, options));
    Ok((listener, any(mcp::serve::<A>).with_state((gateway.clone(), mcp))))
}

fn router(gateway: Arc<Gateway>, mcp: Option<axum::routing::MethodRouter>) -> Router {
    let routes = match mcp {
        Some(mcp) => Router::new().route_service("/mcp", mcp),
        None => Router::new(),
    };
    routes
        .route("/api/v1/portal/topups", post(routes::topup))
        .route("/api/v1/portal/orders", post(routes::order))
        .route("/api/v1/gateway/me", get(routes::me))
        .route("/api/v1/gateway/journal", get(routes::journal))
        .route("/api/v1/gateway/requests", get(routes::requests).post(routes::propose))
        .route("/api/v1/gateway/requests/refuse", post(routes::refuse))
        .route("/api/v1/{*rest}", any(routes::relay))
        .fallback(|| async { Refused::not_found() })
        .layer(middleware::from_fn_with_state(gateway.clone(), caller::authenticate))
        .layer(middleware::from_fn(body_in_time))
        .with_state(gateway)
}

/// A request's body, read whole within `BODY_TIME` and `MAX_BODY` before anything else looks
/// at the request: a client sending it a byte at a time holds no handler.
async fn body_in_time(request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    match tokio::time::timeout(BODY_TIME, axum::body::to_bytes(body, MAX_BODY)).await {
        Ok(Ok(bytes)) => {
            next.run(Request::from_parts(parts, axum::body::Body::from(bytes)))
                .await
        }
        Ok(Err(_)) => Refused::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "The request's body is larger than any request of the API, or was cut off",
        )
        .into_response(),
        Err(_) => {
            Refused::new(StatusCode::REQUEST_TIMEOUT, "The request's body did not arrive in time").into_response()
        }
    }
}
