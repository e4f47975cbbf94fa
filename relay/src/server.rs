//! The relay's one listener: HTTP routes (PROTOCOL.md §3) on axum.

use std::sync::Arc;

use axum::extract::ws::WebSocketUpgrade;
use axum::extract::DefaultBodyLimit;
use axum::extract::{FromRef, RawQuery, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, put};
use axum::{Json, Router};
use serde_json::json;
use tether_protocol::descriptors::{self, ActionDescriptor};

use tether_protocol::{ActionError, ErrorCode};

use crate::artifacts::ArtifactStore;
use crate::auth::{token_from, Orchestrator};
use crate::catalog_md;
use crate::config::Tokens;
use crate::connection;
use crate::registry::Registry;
use crate::routes::artifacts;

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    pub tokens: Tokens,
    pub catalog: Arc<Vec<ActionDescriptor>>,
    pub registry: Arc<Registry>,
    pub artifacts: Arc<ArtifactStore>,
}

impl AppState {
    pub fn new(tokens: Tokens, artifacts: ArtifactStore) -> Self {
        Self {
            tokens,
            artifacts: Arc::new(artifacts),
            catalog: Arc::new(descriptors::catalog()),
            registry: Arc::default(),
        }
    }
}

impl FromRef<AppState> for Tokens {
    fn from_ref(state: &AppState) -> Tokens {
        state.tokens.clone()
    }
}

pub fn router(state: AppState) -> Router {
    // Uploads may be as large as the store accepts (axum's default is 2 MB).
    let upload_limit = usize::try_from(state.artifacts.limits().max_artifact_bytes).unwrap_or(usize::MAX);
    Router::new()
        .route("/healthz", get(|| async { Json(json!({ "status": "ok" })) }))
        .route("/api/actions", get(actions))
        .route("/api/actions.md", get(actions_md))
        .route("/api/extension/extension-list", get(extension_list))
        .route("/ws", get(websocket))
        .route(
            "/artifacts",
            put(artifacts::upload).layer(DefaultBodyLimit::max(upload_limit)),
        )
        .route("/artifacts/{id}", get(artifacts::download))
        .with_state(state)
}

async fn actions(_: Orchestrator, State(state): State<AppState>) -> impl IntoResponse {
    Json(json!({ "actions": *state.catalog }))
}

async fn actions_md(_: Orchestrator, State(state): State<AppState>, headers: HeaderMap) -> impl IntoResponse {
    // The reader's own way to this relay, for ready-to-run curl lines.
    let body = catalog_md::render(&state.catalog, &base_url(&headers));
    ([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], body)
}

async fn extension_list(_: Orchestrator, State(state): State<AppState>) -> impl IntoResponse {
    Json(json!({ "clients": state.registry.list() }))
}

/// `/ws`: a token on the upgrade request must be valid (401 before any upgrade); one may also
/// come later, in `relay.join`.
async fn websocket(
    upgrade: WebSocketUpgrade,
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let token = token_from(&headers, query.as_deref());
    if let Some(token) = &token {
        if state.tokens.role_of(token).is_none() {
            let error = ActionError::new(ErrorCode::Unauthorized, "the token is not valid for this relay");
            return (StatusCode::UNAUTHORIZED, Json(error)).into_response();
        }
    }
    upgrade.on_upgrade(move |socket| connection::serve(socket, state, token))
}

/// The relay's URL as the caller reached it, for links it hands back.
pub fn base_url(headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1:17800");
    format!("http://{host}")
}
