//! `/mcp` (PROTOCOL.md §11): MCP over streamable HTTP, served by the official SDK's service and
//! guarded like every orchestrator route (Bearer token: 401 without, 403 for a host's). Its
//! tool calls are `browser_action`s submitted to the scheduler, so they queue, log, confirm
//! and notify observers exactly as HTTP and WebSocket actions do.
//!
//! DNS rebinding: the SDK refuses (403) a `Host`, and an `Origin` when one is sent, that is
//! not loopback or one of `--mcp-allowed-host`.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use axum::extract::{Request as HttpRequest, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::Value;
use tether_mcp::{Browser, McpSessions};
use tether_protocol::actions::ArtifactRef;
use tether_protocol::messages::ActionRequest;
use tether_protocol::{ActionError, ActionName, ActionResult};
use tokio::sync::oneshot;

use crate::auth::{self, Role};
use crate::reply::Reply;
use crate::request::Request;
use crate::scheduler;
use crate::state::AppState;

/// How long an idle MCP session lives: an agent may think for minutes between calls (the
/// SDK's default is 5 minutes).
const IDLE_SESSION: Duration = Duration::from_secs(3600);

const LOOPBACK: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// The `/mcp` routes, ready to merge into the relay's router.
pub fn routes(state: AppState) -> Router<AppState> {
    let sessions = McpSessions::new(Arc::new(RelayBrowser(state.clone())));
    let mut manager = LocalSessionManager::default();
    manager.session_config.keep_alive = Some(IDLE_SESSION);
    let hosts: Vec<String> = LOOPBACK
        .iter()
        .map(|h| (*h).to_owned())
        .chain(state.settings.mcp_allowed_hosts.iter().cloned())
        .collect();
    let origins: Vec<String> = hosts
        .iter()
        .flat_map(|h| {
            let h = if h.contains(':') {
                format!("[{h}]")
            } else {
                h.clone()
            };
            [
                format!("http://{h}"),
                format!("https://{h}"),
                format!("http://{h}:*"),
                format!("https://{h}:*"),
            ]
        })
        .collect();
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_allowed_origins(origins);
    let service = StreamableHttpService::new(move || Ok(sessions.session()), Arc::new(manager), config);
    Router::new()
        .route_service("/mcp", service)
        .layer(middleware::from_fn_with_state(state, orchestrators_only))
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
        scheduler::submit(&self.0, parsed, Reply::Channel(tx));
        rx.await.unwrap_or_else(|_| {
            let lost = ActionError::internal("the relay lost this action's result");
            ActionResult::unsent(session_id, action.as_str(), lost)
        })
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
