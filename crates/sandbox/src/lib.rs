//! The sandbox: a real server of the API contract (docs/api-contract.md) with seeded data, for `--demo`,
//! for the tests, and for integrators. It knows the contract, nothing of the client.

#![warn(clippy::too_many_lines)]

mod auth;
mod chaos;
mod http;
mod idempotency;
mod lifecycle;
mod lists;
mod rate_limit;
mod records;
mod routes;
pub mod seed;
mod spread;
mod store;
pub mod tls;
mod wire;

use auth::Keys;
use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chrono::{DateTime, Utc};
use rate_limit::RateLimiter;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use store::Data;
use tokio::net::TcpListener;

pub use auth::SESSION_COOKIE;

/// How the sandbox is seeded and how it behaves.
#[derive(Debug, Clone)]
pub struct SandboxConfig {
    pub seed: u64,
    /// Orders per reseller.
    pub orders: usize,
    /// Requests per key per `rate_window`.
    pub rate_limit: u32,
    /// A minute, as the spec says; shorter only in tests.
    pub rate_window: Duration,
    /// Added to every response after the request was handled (so a client that gives up
    /// still leaves the change done, as on a slow real network).
    pub latency: Duration,
    /// When the seeded history ends; `None` is now.
    pub epoch: Option<DateTime<Utc>>,
    /// How long a new order stays `pending` before its eSIMs exist.
    pub allocate_after: Duration,
    /// Whether the lists take `iccid` (docs/api-contract.md); off, the sandbox plays a server that
    /// predates the lookup and answers the unfiltered list.
    pub iccid_lookup: bool,
    /// The share of answers (0 to 1) that fail as networks and servers do (`--chaos`).
    pub chaos: f64,
    /// Every reseller's wallet at start; `None`: the seeded ones (Acme 250.00, Globex 1000.00).
    pub balance: Option<rust_decimal::Decimal>,
}

pub use chaos::Disruption;

pub const DEFAULT_SEED: u64 = 20_261_120;
pub const DEFAULT_ORDERS: usize = 400;
/// The most orders per reseller `sandbox --orders` takes: past it the seeded history stops
/// being a realistic reseller's (an order every half minute for two years) and the memory
/// outgrows a laptop's.
pub const MAX_ORDERS: usize = 2_000_000;

impl Default for SandboxConfig {
    fn default() -> Self {
        Self {
            seed: DEFAULT_SEED,
            orders: DEFAULT_ORDERS,
            rate_limit: 120,
            rate_window: Duration::from_secs(60),
            latency: Duration::ZERO,
            epoch: None,
            allocate_after: Duration::from_secs(2),
            iccid_lookup: true,
            chaos: 0.0,
            balance: None,
        }
    }
}

/// State shared by the handlers.
pub struct Shared {
    data: Mutex<Data>,
    keys: Keys,
    limiter: RateLimiter,
    /// `http://host:port`, where the QR images are served.
    origin: String,
    allocate_after: Duration,
    iccid_lookup: bool,
    /// The `Idempotency-Key`s seen and their answers.
    idempotency: idempotency::Ledger,
    /// Every key's limit a window from now on, in place of its own (0: its own).
    limit_now: std::sync::atomic::AtomicU32,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Data> {
        // Handlers do not panic; if one ever did, its change was one step and the data stays usable.
        self.data.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The router, for a sandbox reachable at `origin`.
pub fn router(config: &SandboxConfig, origin: String) -> Router {
    router_with_knobs(config, origin, Arc::new(Knobs::new(config))).0
}

/// What a test can turn and read on a running sandbox.
struct Knobs {
    /// Added to every answer, in milliseconds.
    latency_ms: AtomicU64,
    /// Requests received, of any route (tests count what a client really sent).
    received: AtomicU64,
    /// Of those, requests to the API (not QR images).
    api_received: AtomicU64,
    /// How many of the next writes are handled but never answered (a lost answer).
    lose_writes: AtomicU64,
    /// How many more writes are handled before every key is refused as revoked (`u64::MAX`:
    /// never), and whether that has come.
    writes_before_revoked: AtomicU64,
    revoked: std::sync::atomic::AtomicBool,
    /// The `page` of every eSIM list request, in order (tests count the pages a client read).
    esim_pages: Mutex<Vec<u64>>,
    chaos: Arc<chaos::Chaos>,
}

impl Knobs {
    fn new(config: &SandboxConfig) -> Self {
        Self {
            latency_ms: AtomicU64::new(config.latency.as_millis() as u64),
            received: AtomicU64::new(0),
            api_received: AtomicU64::new(0),
            lose_writes: AtomicU64::new(0),
            writes_before_revoked: AtomicU64::new(u64::MAX),
            revoked: std::sync::atomic::AtomicBool::new(false),
            esim_pages: Mutex::default(),
            chaos: Arc::new(chaos::Chaos::new(config.chaos, config.seed)),
        }
    }
}

impl Knobs {
    fn note_esim_page(&self, query: Option<&str>) {
        let page = query
            .into_iter()
            .flat_map(|q| q.split('&'))
            .find_map(|kv| kv.strip_prefix("page="))
            .and_then(|p| p.parse().ok())
            .unwrap_or(1);
        self.esim_pages.lock().unwrap_or_else(|p| p.into_inner()).push(page);
    }
}

/// The router, with its knobs readable and settable from outside.
/// The router, and the state its handlers share (a running sandbox keeps it for its tests).
fn router_with_knobs(config: &SandboxConfig, origin: String, knobs: Arc<Knobs>) -> (Router, Arc<Shared>) {
    let epoch = config.epoch.unwrap_or_else(Utc::now);
    let mut data = Data::seeded(config.seed, config.orders, epoch);
    if let Some(balance) = config.balance {
        for reseller in &mut data.resellers {
            reseller.balance = balance;
        }
    }
    let shared = Arc::new(Shared {
        data: Mutex::new(data),
        keys: Keys::demo(config.rate_limit),
        limiter: RateLimiter::new(config.rate_window),
        origin,
        allocate_after: config.allocate_after,
        iccid_lookup: config.iccid_lookup,
        idempotency: idempotency::Ledger::default(),
        limit_now: std::sync::atomic::AtomicU32::new(0),
    });
    let keyed = || middleware::from_fn_with_state(shared.clone(), idempotency::idempotent);
    let api = Router::new()
        .route("/portal/plans", get(routes::plans))
        .route("/portal/topups", axum::routing::post(routes::topup).layer(keyed()))
        .route(
            "/portal/orders",
            axum::routing::post(routes::place_order).layer(keyed()),
        )
        .route("/reseller/orders", get(routes::orders))
        .route("/reseller/esims", get(routes::esims))
        .route("/reseller/profile", get(routes::profile).patch(routes::update_profile))
        .route("/reseller/balance", get(routes::balance))
        .route_layer(middleware::from_fn_with_state(shared.clone(), authenticate));
    let router = Router::new()
        .nest("/api/v1", api)
        .route("/qr/{file}", get(routes::qr_image))
        .fallback(routes::not_found)
        .method_not_allowed_fallback(routes::method_not_allowed)
        .layer(DefaultBodyLimit::max(http::MAX_BODY_BYTES))
        .layer(middleware::from_fn_with_state(knobs.chaos.clone(), chaos::disrupt))
        .layer(middleware::from_fn(move |req: Request, next: Next| {
            knobs.received.fetch_add(1, Ordering::Relaxed);
            if req.uri().path().starts_with("/api/") {
                knobs.api_received.fetch_add(1, Ordering::Relaxed);
            }
            if req.uri().path().ends_with("/reseller/esims") {
                knobs.note_esim_page(req.uri().query());
            }
            let mut latency = Duration::from_millis(knobs.latency_ms.load(Ordering::Relaxed));
            let writes = req.method() != axum::http::Method::GET;
            if writes && take_one(&knobs.lose_writes) {
                // Handled, then never answered: the client gives up with the change made.
                latency = LOST;
            }
            let revoked = knobs.revoked.load(Ordering::Relaxed);
            if writes && !revoked && knobs.writes_before_revoked.load(Ordering::Relaxed) != u64::MAX {
                // This write is handled; once the count is spent, the key is revoked after it.
                if take_one(&knobs.writes_before_revoked) && knobs.writes_before_revoked.load(Ordering::Relaxed) == 0 {
                    knobs.revoked.store(true, Ordering::Relaxed);
                }
            }
            let refused = revoked.then(|| http::Failure::new(StatusCode::UNAUTHORIZED, "API key revoked or expired"));
            async move {
                match refused {
                    Some(failure) => failure.into_response(),
                    None => delay(latency, req, next).await,
                }
            }
        }))
        .with_state(shared.clone());
    (router, shared)
}

/// How long a "lost" answer is held back: past any client's timeout.
const LOST: Duration = Duration::from_secs(3600);

/// Takes one from a counter that is above zero.
fn take_one(counter: &AtomicU64) -> bool {
    counter
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
        .is_ok()
}

/// Resolves the caller, counts the request against its key, and reports the budget.
async fn authenticate(State(s): State<Arc<Shared>>, mut req: Request, next: Next) -> Response {
    let caller = match s.keys.resolve(req.headers()) {
        Ok(c) => c,
        Err(failure) => return failure.into_response(),
    };
    let limit = match s.limit_now.load(Ordering::Relaxed) {
        0 => caller.rate_limit,
        now => now,
    };
    let verdict = s.limiter.check(&caller.budget, limit, Instant::now());
    let mut response = if verdict.allowed {
        req.extensions_mut().insert(caller);
        next.run(req).await
    } else {
        let mut r =
            http::Failure::new(axum::http::StatusCode::TOO_MANY_REQUESTS, "Rate limit exceeded").into_response();
        r.headers_mut()
            .insert("retry-after", HeaderValue::from(verdict.reset_secs));
        r
    };
    let headers = response.headers_mut();
    headers.insert("x-ratelimit-limit", HeaderValue::from(verdict.limit));
    headers.insert("x-ratelimit-remaining", HeaderValue::from(verdict.remaining));
    headers.insert("x-ratelimit-reset", HeaderValue::from(verdict.reset_secs));
    response
}

/// Reports how long the server took in `Server-Timing` (so the time at the server can be
/// measured from outside, apart from the network), then adds the configured latency.
async fn delay(latency: Duration, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let mut response = next.run(req).await;
    let took = format!("app;dur={:.3}", started.elapsed().as_secs_f64() * 1000.0);
    if let Ok(value) = HeaderValue::from_str(&took) {
        response.headers_mut().insert("server-timing", value);
    }
    if !latency.is_zero() {
        tokio::time::sleep(latency).await;
    }
    response
}

/// A sandbox running in this process (for `--demo` and tests); stopped when dropped.
pub struct RunningSandbox {
    pub addr: SocketAddr,
    /// `http`, or `https` when served over TLS.
    scheme: &'static str,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    knobs: Arc<Knobs>,
    shared: Arc<Shared>,
}

impl RunningSandbox {
    /// `http://127.0.0.1:port/api/v1`.
    pub fn base_url(&self) -> String {
        format!("{}/api/v1", self.origin())
    }

    pub fn origin(&self) -> String {
        format!("{}://{}", self.scheme, self.addr)
    }

    /// Changes the latency added to every answer from now on (tests of slow networks).
    pub fn set_latency(&self, latency: Duration) {
        self.knobs
            .latency_ms
            .store(latency.as_millis() as u64, Ordering::Relaxed);
    }

    /// Every key is allowed `limit` requests a window from now on (tests that fill an index
    /// fast, then measure at the API's own limit).
    pub fn set_rate_limit(&self, limit: u32) {
        self.shared.limit_now.store(limit.max(1), Ordering::Relaxed);
    }

    /// The next `n` writes (POST, PATCH) are handled and never answered, as when a connection
    /// drops after the server acted.
    pub fn lose_next_writes(&self, n: u64) {
        self.knobs.lose_writes.store(n, Ordering::Relaxed);
    }

    /// The next `n` writes are handled; after them every request is refused 401 "API key revoked
    /// or expired", as when the reseller revokes the key in the portal mid-run.
    pub fn revoke_after_writes(&self, n: u64) {
        self.knobs.revoked.store(n == 0, Ordering::Relaxed);
        self.knobs.writes_before_revoked.store(n, Ordering::Relaxed);
    }

    /// A customer's device installs the eSIM with this ICCID now (see `Data::install`):
    /// `false` if there is none, or it is installed already.
    pub fn install(&self, iccid: &str) -> bool {
        self.shared.lock().install(iccid, Utc::now())
    }

    /// The next payment (of any reseller) is charged `unit` a plan, whatever was quoted: a
    /// price that changed between the quote and the debit. The order records what was charged.
    pub fn reprice_next_payment(&self, unit: rust_decimal::Decimal) {
        self.shared.lock().reprice_next = Some(unit);
    }

    /// Every reseller's markup is `percent` from now on: the catalog's prices as they see them
    /// change (a price changed between a proposal and its approval).
    pub fn set_markup(&self, percent: rust_decimal::Decimal) {
        self.shared.lock().set_markup(percent);
    }

    /// The provider purges its `n` oldest eSIMs of every reseller, as old records are purged
    /// (`Data::purge_oldest_esims`): every newer eSIM keeps its place from the top of the list,
    /// and the list's total falls. How many were purged.
    pub fn purge_oldest_esims(&self, n: usize) -> usize {
        self.shared.lock().purge_oldest_esims(n)
    }

    /// How many requests reached the server so far.
    pub fn requests_received(&self) -> u64 {
        self.knobs.received.load(Ordering::Relaxed)
    }

    /// How many answers `chaos` failed, each way.
    pub fn disruptions(&self) -> Vec<(Disruption, u64)> {
        self.knobs.chaos.counts()
    }

    /// The `page` of every eSIM list request received so far, in order.
    pub fn esim_pages_served(&self) -> Vec<u64> {
        self.knobs.esim_pages.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// How many of them were API requests (QR images left out).
    pub fn api_requests_received(&self) -> u64 {
        self.knobs.api_received.load(Ordering::Relaxed)
    }

    /// How many requests were refused for their key's rate limit (429).
    pub fn rate_limited(&self) -> u64 {
        self.shared.limiter.refused()
    }
}

impl Drop for RunningSandbox {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

/// Binds `addr` (port 0 for any free one) and serves in a background task.
pub async fn spawn(config: &SandboxConfig, addr: SocketAddr) -> std::io::Result<RunningSandbox> {
    spawn_with(config, addr, None).await
}

/// As `spawn`, over TLS with `tls` when given (`RunningSandbox::origin` is then https).
pub async fn spawn_with(
    config: &SandboxConfig,
    addr: SocketAddr,
    tls: Option<tls::Acceptor>,
) -> std::io::Result<RunningSandbox> {
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let knobs = Arc::new(Knobs::new(config));
    let scheme = if tls.is_some() { "https" } else { "http" };
    let (app, shared) = router_with_knobs(config, format!("{scheme}://{addr}"), knobs.clone());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let stopped = async {
        let _ = rx.await;
    };
    tokio::spawn(async move {
        if let Err(e) = serve_on(listener, tls, app, stopped).await {
            tracing::error!(error = %e, "sandbox stopped");
        }
    });
    Ok(RunningSandbox {
        addr,
        scheme,
        shutdown: Some(tx),
        knobs,
        shared,
    })
}

/// Serves `app` on `listener`, over TLS when `tls` is given, until `shutdown` ends.
async fn serve_on(
    listener: TcpListener,
    tls: Option<tls::Acceptor>,
    app: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let app = app.into_make_service_with_connect_info::<chaos::Peer>();
    match tls {
        Some(acceptor) => {
            let listener = tls::TlsListener::new(listener, acceptor);
            axum::serve(listener, app).with_graceful_shutdown(shutdown).await
        }
        None => {
            let listener = chaos::ChaosListener(listener);
            axum::serve(listener, app).with_graceful_shutdown(shutdown).await
        }
    }
}

/// Binds `addr`, calls `on_ready` with the bound address, and serves (over TLS when `tls` is
/// given) until `shutdown` ends.
pub async fn serve(
    config: &SandboxConfig,
    addr: SocketAddr,
    tls: Option<tls::Acceptor>,
    on_ready: impl FnOnce(SocketAddr),
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    let app = router(config, format!("{scheme}://{addr}"));
    on_ready(addr);
    serve_on(listener, tls, app, shutdown).await
}
