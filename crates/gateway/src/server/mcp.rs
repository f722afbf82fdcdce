//! `/mcp`: an agent's assistant reaches the same tools as `esimdash mcp` over MCP's streamable
//! HTTP, signed in with the agent's own token like every route. The tools are the binary's
//! (`Assistant`); each agent's are given a client of this gateway under that agent's token, on
//! a loopback listener of its own, so every read and proposal they make is the agent's: its
//! role, its share of the budget, its cap, counted as its requests. Stateless: each request
//! stands alone, and none outlives its answer.

use super::caller::Caller;
use crate::agents::{Deed, hash_secret};
use crate::state::Gateway;
use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use esimdash_api::{BaseUrl, Client, ClientOptions, Credentials};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The tools an agent's assistant is served: made for a client under the agent's token.
pub trait Assistant: Send + Sync + 'static {
    type Tools: rmcp::ServerHandler + Send + 'static;
    /// The tools for `client`; `pays`: the agent's role may pay for something (else no tool
    /// that proposes a payment is offered).
    fn tools(&self, client: Client, pays: bool) -> Self::Tools;
}

/// The most agents whose tools are kept ready at once (past it, all are made again).
const MOST_KEPT: usize = 1_000;

/// `/mcp` for every signed-in agent: each agent's service, made once and kept.
pub(crate) struct Mcp<A: Assistant> {
    assistant: Arc<A>,
    /// The gateway's own loopback address, for the agents' clients.
    base: BaseUrl,
    options: ClientOptions,
    services: Mutex<HashMap<String, StreamableHttpService<A::Tools, NeverSessionManager>>>,
}

impl<A: Assistant> Mcp<A> {
    pub(crate) fn new(assistant: A, base: BaseUrl, options: ClientOptions) -> Self {
        Self {
            assistant: Arc::new(assistant),
            base,
            options,
            services: Mutex::default(),
        }
    }

    /// The agent's service: its tools over a client under its token.
    fn service(
        &self,
        gateway: &Gateway,
        agent: &crate::agents::Agent,
        secret: &str,
    ) -> Result<StreamableHttpService<A::Tools, NeverSessionManager>, String> {
        let key = format!("{}\0{}", agent.access_code, hash_secret(secret));
        let mut services = esimdash_domain::sync::lock(&self.services);
        if let Some(service) = services.get(&key) {
            return Ok(service.clone());
        }
        let client = Client::new(
            self.base.clone(),
            &Credentials::pair(&agent.access_code, secret),
            self.options.clone(),
        )
        .map_err(|e| e.to_string())?;
        let can_buy = gateway.settings.support_can_buy;
        let pays = agent.role.may(Deed::TopUp, can_buy) || agent.role.may(Deed::Buy, can_buy);
        let assistant = self.assistant.clone();
        // Stateless, answers as JSON: a request stands alone, as every other route's does; the
        // token (checked on each request) is the guard, not the Host header.
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .disable_allowed_hosts();
        let service = StreamableHttpService::new(
            move || Ok(assistant.tools(client.clone(), pays)),
            Arc::new(NeverSessionManager::default()),
            config,
        );
        if services.len() >= MOST_KEPT {
            services.clear();
        }
        services.insert(key, service.clone());
        Ok(service)
    }
}

/// The route: the signed-in agent's request handed to its service.
pub(crate) async fn serve<A: Assistant>(
    State((gateway, mcp)): State<(Arc<Gateway>, Arc<Mcp<A>>)>,
    Caller(agent): Caller,
    request: Request,
) -> Response {
    let secret = request
        .headers()
        .get("x-secret-key")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let service = match mcp.service(&gateway, &agent, &secret) {
        Ok(service) => service,
        Err(e) => {
            return crate::refused::Refused::new(http::StatusCode::INTERNAL_SERVER_ERROR, e).into_response();
        }
    };
    match tower::ServiceExt::oneshot(service, request).await {
        Ok(response) => response.into_response(),
        Err(never) => match never {},
    }
}
