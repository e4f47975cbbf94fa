//! The relay's one listener: HTTP routes (PROTOCOL.md §3) on axum.

use std::sync::Arc;

use axum::extract::{FromRef, State};
use axum::http::{header, HeaderMap};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;
use tether_protocol::descriptors::{self, ActionDescriptor};

use crate::auth::Orchestrator;
use crate::catalog_md;
use crate::config::Tokens;

/// What every handler can reach.
#[derive(Clone)]
pub struct AppState {
    pub tokens: Tokens,
    pub catalog: Arc<Vec<ActionDescriptor>>,
}

impl AppState {
    pub fn new(tokens: Tokens) -> Self {
        Self {
            tokens,
            catalog: Arc::new(descriptors::catalog()),
        }
    }
}

impl FromRef<AppState> for Tokens {
    fn from_ref(state: &AppState) -> Tokens {
        state.tokens.clone()
    }
}

pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/healthz", get(|| async { Json(json!({ "status": "ok" })) }))
        .route("/api/actions", get(actions))
        .route("/api/actions.md", get(actions_md))
        .with_state(state)
}

async fn actions(_: Orchestrator, State(state): State<AppState>) -> impl IntoResponse {
    Json(json!({ "actions": *state.catalog }))
}

async fn actions_md(_: Orchestrator, State(state): State<AppState>, headers: HeaderMap) -> impl IntoResponse {
    // The reader's own way to this relay, for ready-to-run curl lines.
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1:17800");
    let body = catalog_md::render(&state.catalog, &format!("http://{host}"));
    ([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], body)
}
