//! `/mcp` (docs/protocol.md §11): MCP over streamable HTTP, served by the official SDK's service and
//! guarded like every orchestrator route (Bearer token: 401 without, 403 for a host's). Its
//! tool calls are `browser_action`s submitted to the scheduler, so they queue, log, confirm
//! and notify observers exactly as HTTP and WebSocket actions do.
//!
//! DNS rebinding: the SDK refuses (403) a `Host`, and an `Origin` when one is sent, that is
//! not loopback on the relay's own port or one of `--mcp-allowed-host`.
//!
//! Bounded (docs/protocol.md §15): at most `--mcp-max-sessions` MCP sessions at once (an
//! `initialize` past it is refused with a JSON-RPC error saying so), each ended after 30
//! minutes without a request. An idle session holds ~64 KiB of the SDK's channels.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use axum::extract::{Request as HttpRequest, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{json, Value};
use tether_mcp::{Browser, McpSessions};
use tether_protocol::actions::ArtifactRef;
use tether_protocol::messages::ActionRequest;
use tether_protocol::{ActionError, ActionName, ActionResult, ErrorCode};
use tokio::sync::oneshot;

use crate::core::reply::Reply;
use crate::core::request::Request;
use crate::core::scheduler;
use crate::core::state::AppState;
use crate::edge::auth::{self, Role};

/// How long an idle MCP session lives: an agent may think for minutes between calls (the
/// SDK's default is 5 minutes).
const IDLE_SESSION: Duration = Duration::from_secs(30 * 60);

const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The header that names an MCP session.
const SESSION_HEADER: &str = "mcp-session-id";

/// The `/mcp` routes, ready to merge into the relay's router (once the listener is bound: the
/// allowed origins name its port).
pub fn routes(state: AppState) -> Router<AppState> {
    let sessions = McpSessions::new(Arc::new(RelayBrowser(state.clone())));
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(IDLE_SESSION);
    let manager = Arc::new(manager);
    let (hosts, origins) = allowed(state.origins.port(), &state.settings.mcp_allowed_hosts);
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins);
    let cap = Cap {
        manager: manager.clone(),
        max: state.settings.mcp_max_sessions,
        body_limit: state.settings.max_message_bytes,
        opening: Arc::default(),
    };
    let service = StreamableHttpService::new(move || Ok(sessions.session()), manager, config);
    Router::new()
        .route_service("/mcp", service)
        .layer(middleware::from_fn_with_state(cap, capped))
        .layer(middleware::from_fn_with_state(state, orchestrators_only))
}

/// The `Host` and `Origin` values `/mcp` accepts: loopback on the relay's port, and each
/// `--mcp-allowed-host` (a proxy's name, on any port).
fn allowed(port: Option<u16>, extra: &[String]) -> (Vec<String>, Vec<String>) {
    let bracket = |h: &str| {
        if h.parse::<std::net::Ipv6Addr>().is_ok() {
            format!("[{h}]")
        } else {
            h.to_owned()
        }
    };
    let (mut hosts, mut origins) = (Vec::new(), Vec::new());
    for h in LOOPBACK.iter().map(|h| bracket(h)) {
        match port {
            Some(port) => {
                hosts.push(format!("{h}:{port}"));
                origins.push(format!("http://{h}:{port}"));
                origins.push(format!("https://{h}:{port}"));
                if port == 80 {
                    hosts.push(h.clone());
                }
            }
            None => {
                hosts.push(h.clone());
                origins.push(format!("http://{h}:*"));
            }
        }
    }
    for h in extra {
        hosts.push(h.clone());
        let h = bracket(h);
        origins.push(format!("http://{h}:*"));
        origins.push(format!("https://{h}:*"));
    }
    (hosts, origins)
}

/// What the session cap needs: the SDK's sessions, the cap, and the `initialize`s in flight.
#[derive(Clone)]
struct Cap {
    manager: Arc<LocalSessionManager>,
    max: usize,
    body_limit: usize,
    opening: Arc<AtomicUsize>,
}

/// Refuses an `initialize` (a POST with no `Mcp-Session-Id`) past the cap, as a JSON-RPC
/// error an MCP client passes to its caller. Only callers past the token check get here.
async fn capped(State(cap): State<Cap>, request: HttpRequest, next: Next) -> Response {
    let opens =
        request.method() == axum::http::Method::POST && !request.headers().contains_key(SESSION_HEADER);
    if !opens {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, cap.body_limit).await else {
        let error = ActionError::new(ErrorCode::PayloadTooLarge, "the MCP request is too large");
        return (StatusCode::PAYLOAD_TOO_LARGE, axum::Json(error)).into_response();
    };
    let message: Value = serde_json::from_slice(&bytes).unwrap_or_default();
    let request = HttpRequest::from_parts(parts, axum::body::Body::from(bytes));
    if message["method"] != "initialize" {
        return next.run(request).await;
    }
    let opening = Opening::new(&cap.opening);
    if cap.manager.sessions.read().await.len() + opening.count > cap.max {
        let refusal = json!({
            "jsonrpc": "2.0",
            "id": message["id"],
            "error": { "code": -32000, "message": format!(
                "this relay serves at most {} MCP sessions at once (--mcp-max-sessions); end one (DELETE /mcp) or try again later",
                cap.max
            ) },
        });
        return (StatusCode::SERVICE_UNAVAILABLE, axum::Json(refusal)).into_response();
    }
    next.run(request).await
}

/// One `initialize` in flight, counted until it is answered (its session is in the SDK's
/// table by then).
struct Opening<'a> {
    counter: &'a AtomicUsize,
    count: usize,
}

impl<'a> Opening<'a> {
    fn new(counter: &'a AtomicUsize) -> Self {
        let count = counter.fetch_add(1, Ordering::SeqCst) + 1;
        Self { counter, count }
    }
}

impl Drop for Opening<'_> {
    fn drop(&mut self) {
        self.counter.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The token check, before the SDK sees the request.
async fn orchestrators_only(State(state): State<AppState>, request: HttpRequest, next: Next) -> Response {
    let token = auth::token_from(request.headers(), None);
    match auth::require_one_of(token, &state.tokens, &[Role::Orchestrator]) {
        Ok(_) => next.run(request).await,
        Err(refusal) => refusal.into_response(),
    }
}

/// The relay as the MCP server's browser: each call is submitted like `POST /api/browser/action`.
struct RelayBrowser(AppState);

#[async_trait]
impl Browser for RelayBrowser {
    async fn act(&self, session_id: &str, action: ActionName, params: Value) -> ActionResult {
        let wire = ActionRequest {
            session_id: session_id.to_owned(),
            client_id: None,
            action_id: None,
            action_name: action.as_str().to_owned(),
            params,
            timeout_ms: None,
            peek: false,
        };
        let parsed = match Request::accept(wire) {
            Ok(parsed) => parsed,
            // Only an empty session id is no action at all, and MCP sessions are never empty.
            Err(error) => return ActionResult::unsent(session_id, action.as_str(), error),
        };
        let (tx, rx) = oneshot::channel();
        scheduler::take(&self.0, parsed, Reply::Channel(tx)).await;
        rx.await.unwrap_or_else(|_| {
            let lost = ActionError::internal("the relay lost this action's result");
            ActionResult::unsent(session_id, action.as_str(), lost)
        })
    }

    /// The secrets of the browser the session is bound to, or would be bound to: the one
    /// browser online, when only one is.
    fn secret_names(&self, session_id: &str) -> Vec<String> {
        let state = &self.0;
        let client = state.sessions.state(session_id).client_id.or_else(|| {
            let online = state.registry.online();
            (online.len() == 1).then(|| online[0].clone())
        });
        client.map_or_else(Vec::new, |client| state.registry.secret_names(&client))
    }

    async fn artifact(&self, artifact: &ArtifactRef) -> Result<Vec<u8>, ActionError> {
        match self.0.artifacts.get(&artifact.artifact_id).await {
            Some((_, _, bytes)) => Ok(bytes),
            None => Err(ActionError::internal(format!(
                "artifact {} is gone from the relay's store",
                artifact.artifact_id
            ))),
        }
    }
}
