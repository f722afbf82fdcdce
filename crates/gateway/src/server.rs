//! The gateway's HTTP side: who is asking (an agent's token), what its role lets it do, and
//! the contract's routes: reads passed on under the reseller's key, payments through
//! `payments`, and the gateway's own `gateway/me` and `gateway/journal`.

use crate::agents::{Agent, Role};
use crate::config::Settings;
use crate::index::TeamIndex;
use crate::lookup;
use crate::metrics::{Counters, Refusal};
use crate::payments;
use crate::reads::{Read, Reads};
use crate::sign_in::{self, SignIns};
use crate::store::Store;
use crate::tls::Peer;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use esimdash_api::relay::{ESIMS, ROUTES, Relayed, SEAT_HEADER, Seat};
use esimdash_api::{ApiError, Client, Endpoint, PLACE_ORDER, TOPUP};
use esimdash_domain::money::format_amount;
use rust_decimal::Decimal;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
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

pub(crate) struct Gateway {
    pub store: Store,
    pub upstream: Client,
    pub settings: Settings,
    pub reads: Reads,
    pub index: Option<Arc<TeamIndex>>,
    pub counters: Counters,
    sign_ins: SignIns,
    /// Each seat's turn to pay (`turn`).
    turns: Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>,
}

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
    let gateway = Arc::new(Gateway {
        store,
        reads: Reads::new(settings.rate_limit, settings.read_fresh),
        upstream,
        settings,
        index,
        counters: Counters::default(),
        sign_ins: SignIns::default(),
        turns: Mutex::default(),
    });
    // Unfinished payments settle in the background, each held against its caps meanwhile: a
    // replica serves at once. They are read before it serves, so none of this run's is taken.
    let unfinished = gateway
        .store
        .unsettled()
        .await
        .map_err(|e| StartError::Failed(e.to_string()))?;
    tokio::spawn(crate::settling::settle_unfinished(gateway.clone(), unfinished));
    let index_task = gateway.index.clone().map(|index| {
        let upstream = gateway.upstream.clone();
        tokio::spawn(async move { index.keep_fresh(upstream).await })
    });
    let app = router(gateway.clone());
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

fn router(gateway: Arc<Gateway>) -> Router {
    Router::new()
        .route("/api/v1/portal/topups", post(payments::topup))
        .route("/api/v1/portal/orders", post(payments::order))
        .route("/api/v1/gateway/me", get(me))
        .route("/api/v1/gateway/journal", get(payments::journal))
        .route("/api/v1/{*rest}", any(relay))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "Not found") })
        .layer(middleware::from_fn_with_state(gateway.clone(), authenticate))
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
        Ok(Err(_)) => error(
            StatusCode::PAYLOAD_TOO_LARGE,
            "The request's body is larger than any request of the API, or was cut off",
        ),
        Err(_) => error(StatusCode::REQUEST_TIMEOUT, "The request's body did not arrive in time"),
    }
}

/// The agent a request comes from, put there by `authenticate`.
#[derive(Debug, Clone)]
pub(crate) struct Caller(pub Agent);

/// Every request names an agent by its token; a revoked token is refused at once. Failed
/// sign-ins are counted by access code and by address (`sign_in`): a code being guessed waits,
/// an address failing often has its failures refused, and a valid token still signs in.
async fn authenticate(State(gateway): State<Arc<Gateway>>, mut request: Request, next: Next) -> Response {
    let ip = request
        .extensions()
        .get::<ConnectInfo<Peer>>()
        .map_or(IpAddr::from([0, 0, 0, 0]), |c| c.0.0.ip());
    let headers = request.headers();
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    let (code, secret) = (text("x-access-code"), text("x-secret-key"));
    let wait = |wait: Duration| {
        let mut response = error(
            StatusCode::TOO_MANY_REQUESTS,
            "Too many failed sign-ins: wait before trying again",
        );
        set_header(&mut response, "retry-after", &wait.as_secs().max(1).to_string());
        response
    };
    // No agent's: refused before anything is looked up or kept but the address's count.
    let (Some(code), Some(secret)) = (
        code.filter(|c| !c.is_empty() && c.len() <= sign_in::LONGEST_CODE),
        secret.filter(|s| !s.is_empty() && s.len() <= sign_in::LONGEST_SECRET),
    ) else {
        return match gateway.sign_ins.address_waits(ip) {
            Some(w) => wait(w),
            None => gateway.sign_in_failed(ip, None),
        };
    };
    if let Some(w) = gateway.sign_ins.code_waits(ip, code) {
        return wait(w);
    }
    let agent = match gateway.store.agent_by_code(code).await {
        Ok(agent) => agent,
        Err(e) => {
            tracing::error!("{e}");
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                "The gateway's store cannot be read; try again",
            );
        }
    };
    let Some(agent) = agent.filter(|a| a.holds(secret)) else {
        return match gateway.sign_ins.address_waits(ip) {
            Some(w) => wait(w),
            None => gateway.sign_in_failed(ip, Some(code)),
        };
    };
    gateway.sign_ins.signed_in(ip, code);
    if agent.is_revoked() {
        // Not the contract's "API key revoked or expired" (a client reads those words as its
        // key revoked, and sends its user to the reseller portal): the agent needs a new token
        // from the team's admin.
        return error(
            StatusCode::UNAUTHORIZED,
            "This agent's token is no longer accepted by the team gateway: ask the team's admin for a new one",
        );
    }
    gateway.counters.request(&agent.name);
    request.extensions_mut().insert(Caller(agent.clone()));
    let mut response = next.run(request).await;
    // The agent's seat on every answer: the dashboard's header shows it, at no request's cost.
    if let Some(seat) = gateway.seat(&agent).await {
        set_header(&mut response, SEAT_HEADER, &seat.header());
    }
    response
}

impl Gateway {
    /// The seat's turn to pay: one payment of a seat at a time on this replica.
    pub(crate) fn turn(&self, agent: &str) -> Arc<tokio::sync::Mutex<()>> {
        let mut turns = self.turns.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        turns.entry(agent.to_string()).or_default().clone()
    }

    /// Who the agent is, and what is left of its cap today.
    async fn seat(&self, agent: &Agent) -> Option<Seat> {
        let left = match agent.daily_cap {
            Some(cap) => {
                let (own, _) = self
                    .store
                    .held_on(&agent.name, &crate::store::day_of(crate::now()))
                    .await
                    .ok()?;
                Some((cap - own).max(Decimal::ZERO))
            }
            None => None,
        };
        Some(Seat {
            name: agent.name.clone(),
            role: agent.role.name().to_string(),
            cap: agent.daily_cap,
            left,
        })
    }

    /// A failed sign-in, counted; the answer to it.
    fn sign_in_failed(&self, ip: IpAddr, code: Option<&str>) -> Response {
        self.sign_ins.failed(ip, code);
        self.counters.failed_sign_in();
        error(StatusCode::UNAUTHORIZED, "Unauthorized")
    }
}

/// `GET /gateway/me`: who the token is, and what is left of its cap today.
async fn me(State(gateway): State<Arc<Gateway>>, axum::Extension(Caller(agent)): axum::Extension<Caller>) -> Response {
    let now = crate::now();
    let day = crate::store::day_of(now);
    let (own, team) = match gateway.store.held_on(&agent.name, &day).await {
        Ok(held) => held,
        Err(e) => return store_failed(&e),
    };
    let left = |cap: Option<Decimal>, spent: Decimal| cap.map(|c| format_amount((c - spent).max(Decimal::ZERO)));
    axum::Json(serde_json::json!({
        "agent": agent.name,
        "role": agent.role.name(),
        "dailyCap": agent.daily_cap.map(format_amount),
        "spentToday": format_amount(own),
        "leftToday": left(agent.daily_cap, own),
        "teamDailyCap": gateway.settings.team_daily_cap.map(format_amount),
        "teamLeftToday": left(gateway.settings.team_daily_cap, team),
        "resetsAt": payments::next_reset(now).to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    }))
    .into_response()
}

/// Any other route of the contract, passed on: reads for every role, the profile's change for
/// an admin only.
async fn relay(
    State(gateway): State<Arc<Gateway>>,
    axum::Extension(Caller(agent)): axum::Extension<Caller>,
    method: Method,
    uri: Uri,
    body: Bytes,
) -> Response {
    // Once: `/api/v1/api/v1/portal/topups` is no route (it would pass a payment on unchecked).
    let path = uri.path().strip_prefix("/api/v1").unwrap_or_default();
    let Some(endpoint) = ROUTES
        .into_iter()
        .filter(|e| *e != TOPUP && *e != PLACE_ORDER)
        .find(|e| e.path == path && e.method == method.as_str())
    else {
        return error(StatusCode::NOT_FOUND, "Not found");
    };
    if method != Method::GET && agent.role != Role::Admin {
        gateway.counters.refused(&agent.name, Refusal::Role);
        return forbidden(&agent, "change the company profile");
    }
    if method != Method::GET {
        return match gateway
            .upstream
            .relay(endpoint, uri.query(), Some(body.to_vec()), None)
            .await
        {
            Ok(answer) => {
                gateway.reads.forget();
                passed_on(answer, None)
            }
            Err(e) => upstream_failed(&e),
        };
    }
    if endpoint == ESIMS
        && let Some(iccid) = lookup::asked_iccid(uri.query())
    {
        return lookup::answer(&gateway, &agent.name, &iccid, uri.query()).await;
    }
    match gateway.read(&agent.name, endpoint, uri.query()).await {
        Ok(answer) => passed_on(answer, None),
        Err(refused) => refused,
    }
}

impl Gateway {
    /// A read for an agent (shared, kept or sent), counted; `Err` is the answer that refuses it.
    pub(crate) async fn read(&self, agent: &str, endpoint: Endpoint, query: Option<&str>) -> Result<Relayed, Response> {
        match self.reads.get(&self.upstream, agent, endpoint, query).await {
            Read::Answered { answer, upstream } => {
                self.counters.read(upstream, answer.as_ref().ok().map(|a| a.status));
                answer.map_err(|e| upstream_failed(&e))
            }
            Read::OverShare { wait, share } => {
                self.counters.refused(agent, Refusal::Share);
                Err(over_share(wait, share))
            }
        }
    }
}

/// An agent past its share of the key's budget waits, not the others.
pub(crate) fn over_share(wait: Duration, share: u32) -> Response {
    let mut response = error(
        StatusCode::TOO_MANY_REQUESTS,
        &format!("Rate limit exceeded: your share of the team's budget is {share} reads a minute"),
    );
    set_header(&mut response, "retry-after", &wait.as_secs().max(1).to_string());
    response
}

/// The upstream's answer as the agent gets it. A 401 is the reseller's key refused, not the
/// agent's token: said as the gateway's trouble, so that no seat takes its own token for
/// revoked.
pub(crate) fn passed_on(answer: Relayed, key: Option<&str>) -> Response {
    if answer.status == 401 {
        tracing::error!("the API refused the gateway's key (401)");
        return error(
            StatusCode::SERVICE_UNAVAILABLE,
            "The API refused the gateway's key (401): the team's admin must renew it. Nothing was sent or paid",
        );
    }
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::BAD_GATEWAY);
    let mut response = (status, answer.body).into_response();
    set_header(
        &mut response,
        "content-type",
        answer.content_type.as_deref().unwrap_or("application/json"),
    );
    if let Some(wait) = answer.retry_after {
        set_header(&mut response, "retry-after", &wait.as_secs().max(1).to_string());
    }
    if let Some(key) = key {
        set_header(&mut response, "idempotency-key", key);
    }
    response
}

pub(crate) fn set_header(response: &mut Response, name: &'static str, value: &str) {
    if let Ok(value) = HeaderValue::from_str(value) {
        response.headers_mut().insert(name, value);
    }
}

/// A request refused before anything was sent: its status and the contract's `{"error": …}`.
#[derive(Debug)]
pub(crate) struct Refused(pub StatusCode, pub String);

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        error(self.0, &self.1)
    }
}

impl Refused {
    /// The upstream could not be asked what the request needed.
    pub(crate) fn upstream(e: &ApiError) -> Refused {
        tracing::warn!("upstream: {e}");
        Refused(
            StatusCode::BAD_GATEWAY,
            format!("The gateway could not reach the API: {e}"),
        )
    }
}

/// `{"error": …}` with a status, as the contract's every error.
pub(crate) fn error(status: StatusCode, message: &str) -> Response {
    (status, axum::Json(serde_json::json!({ "error": message }))).into_response()
}

pub(crate) fn forbidden(agent: &Agent, what: &str) -> Response {
    error(
        StatusCode::FORBIDDEN,
        &format!(
            "agent {} is {} {}: that role may not {what}",
            agent.name,
            article(agent.role),
            agent.role.name()
        ),
    )
}

fn article(role: Role) -> &'static str {
    if role == Role::Admin { "an" } else { "a" }
}

pub(crate) fn upstream_failed(e: &ApiError) -> Response {
    tracing::warn!("upstream: {e}");
    error(
        StatusCode::BAD_GATEWAY,
        &format!("The gateway could not reach the API: {e}"),
    )
}

pub(crate) fn store_failed(e: &crate::store::StoreError) -> Response {
    tracing::error!("{e}");
    error(
        StatusCode::SERVICE_UNAVAILABLE,
        "The gateway's store failed; nothing was paid. Try again",
    )
}

pub(crate) fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim)
}
