//! The relay's one listener: every HTTP route of docs/protocol.md §3 and `/ws`, on axum. The
//! top floor below `main`: uses the edge's routes and sockets, and the floors under them.

use axum::extract::ws::WebSocketUpgrade;
use axum::extract::DefaultBodyLimit;
use axum::extract::{RawQuery, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Extension, Json, Router};
use std::sync::Arc;
use tether_protocol::messages::Catalog;
use tether_protocol::ErrorCode;

use crate::core::state::AppState;
use crate::edge::app_error::AppError;
use crate::edge::auth::{token_from, MetricsReader, Reader};
use crate::edge::listener::{self, Bounds, ReadBudget};
use crate::edge::routes::{actions, artifacts, base_url, console, mcp, screen, sessions, twin};
use crate::edge::ws;
use crate::edge::{agent_docs, catalog_md};
use crate::parts::metrics::Now;

const SOCKET_BUFFER: usize = 4 * 1024;

/// Serves the relay on `listener` until `shutdown` resolves.
pub async fn serve(
    listener: tokio::net::TcpListener,
    state: AppState,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    if let Ok(addr) = listener.local_addr() {
        state.origins.listening_on(addr);
    }
    // A relay that serves keeps itself the size of what it serves, for as long as it serves.
    let upkeep = tokio::spawn(crate::core::housekeeping::run(state.0.clone()));
    let _stop_upkeep = AbortOnDrop(upkeep);
    let bounds = Bounds {
        max_connections: state.settings.max_connections,
    };
    listener::serve(listener, router(state), bounds, shutdown).await
}

/// Ends a task when dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

pub fn router(state: AppState) -> Router {
    // Uploads may be as large as the store accepts (axum's default is 2 MB).
    let upload_limit = usize::try_from(state.artifacts.limits().max_artifact_bytes).unwrap_or(usize::MAX);
    Router::new()
        .route("/", get(console::index))
        .route("/console.css", get(console::style))
        .route("/console.js", get(console::script))
        .route("/favicon.svg", get(console::icon))
        .route("/healthz", get(listener::healthz))
        .route("/metrics", get(metrics))
        .route("/api/actions", get(actions_json))
        .route("/api/actions.md", get(actions_md))
        .route("/api/agent.md", get(agent_md))
        .route("/api/extension/extension-list", get(extension_list))
        .route(
            "/api/browser/action",
            post(actions::browser_action).layer(DefaultBodyLimit::max(state.settings.max_message_bytes)),
        )
        .route("/api/sessions", get(sessions::list))
        .route("/api/sessions/{session_id}", get(sessions::get))
        .route("/api/sessions/{session_id}/actions", get(sessions::actions))
        .route("/api/sessions/{session_id}/bind", post(sessions::bind))
        .route("/api/sessions/{session_id}/messages", post(sessions::message))
        .route("/api/sessions/{session_id}/events", get(sessions::events))
        .route("/api/sessions/{session_id}/screen.md", get(screen::get))
        .route("/api/twin/{client_id}", get(twin::get))
        .route("/ws", get(websocket))
        .route(
            "/artifacts",
            put(artifacts::upload).layer(DefaultBodyLimit::max(upload_limit)),
        )
        .route("/artifacts/{id}", get(artifacts::download))
        .merge(mcp::routes(state.clone()))
        .with_state(state)
}

async fn actions_json(_: Reader, State(state): State<AppState>) -> impl IntoResponse {
    Json(Catalog {
        actions: state.catalog.to_vec(),
    })
}

async fn actions_md(_: Reader, State(state): State<AppState>, headers: HeaderMap) -> impl IntoResponse {
    // The reader's own way to this relay, for ready-to-run curl lines.
    let body = catalog_md::render(state.catalog, &base_url(&headers));
    ([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], body)
}

async fn agent_md(_: Reader, State(state): State<AppState>, headers: HeaderMap) -> impl IntoResponse {
    let body = agent_docs::render(state.catalog, &base_url(&headers));
    ([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], body)
}

async fn extension_list(_: Reader, State(state): State<AppState>) -> impl IntoResponse {
    Json(state.clients())
}

async fn metrics(_: MetricsReader, State(state): State<AppState>) -> impl IntoResponse {
    let (artifacts, artifact_bytes) = state.artifacts.usage();
    let now = Now {
        hosts_online: state.registry.online().len(),
        queued: state.sessions.queued(),
        sessions: state.sessions.by_status(),
        artifacts,
        artifact_bytes,
        subscribers: state.events.subscribers(),
        store_bytes: state.sessions.store().bytes(),
        nats: state.deployment.nats_link(),
    };
    let text = state.metrics.render(now);
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        text,
    )
}

/// `/ws`: a token on the upgrade request must be valid (401 before any upgrade); one may also
/// come later, in `relay.join`.
async fn websocket(
    upgrade: WebSocketUpgrade,
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    budget: Option<Extension<Arc<ReadBudget>>>,
) -> Result<Response, AppError> {
    let origin = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok());
    if !state.origins.admits(origin) {
        return Err(AppError::new(
            StatusCode::FORBIDDEN,
            ErrorCode::Forbidden,
            format!(
                "pages of {} may not open the relay's socket; the relay's own console may, and the origins given with --allowed-origin",
                origin.unwrap_or_default()
            ),
        ));
    }
    let token = token_from(&headers, query.as_deref());
    if token.as_ref().is_some_and(|t| state.tokens.role_of(t).is_none()) {
        return Err(AppError::new(
            StatusCode::UNAUTHORIZED,
            ErrorCode::Unauthorized,
            "the token is not valid for this relay",
        ));
    }
    // Most peers are idle hosts: small socket buffers keep a thousand of them cheap (the
    // default 128 KiB each way cost ~140 KiB per host); large frames still pass, in chunks.
    let cap = state.settings.max_message_bytes;
    Ok(upgrade
        .read_buffer_size(SOCKET_BUFFER)
        .write_buffer_size(SOCKET_BUFFER)
        .max_message_size(cap)
        .max_frame_size(cap)
        .on_upgrade(move |socket| {
            let budget = budget.map_or_else(ReadBudget::detached, |Extension(b)| b);
            // What a peer may send before it has joined: its relay.join, and no flood.
            budget.allow_only(ws::PRE_JOIN_BYTES);
            ws::serve(socket, state, token, budget)
        }))
}
