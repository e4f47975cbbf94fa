//! The HTTP routes of docs/protocol.md §3 beyond the catalog and health, one module per resource.

pub mod actions;
pub mod artifacts;
pub mod console;
pub mod mcp;
pub mod screen;
pub mod sessions;
pub mod twin;

use axum::http::{header, HeaderMap};
use serde::Deserialize;
use tether_protocol::actions::browser_snapshot::Detail;
use tether_protocol::ErrorCode;

use tether_protocol::{ActionError, ActionResult};
use tokio::sync::oneshot;

use crate::core::reply::Reply;
use crate::core::request::{Refused, Request};
use crate::core::state::AppState;
use crate::edge::app_error::AppError;

/// `?detail=live|recent|gist` of a Live Screen route (seed 004's levels); live when absent.
#[derive(Deserialize)]
pub struct DetailQuery {
    detail: Option<Detail>,
}

impl DetailQuery {
    pub fn detail(&self) -> Detail {
        self.detail.unwrap_or_default()
    }
}

/// Submits an action as every caller's are (queue, confirmation, log) and waits for its one
/// result. The action runs to its end even if the caller hangs up: its result is logged and
/// kept for a retry with the same actionId.
pub async fn result_of(
    state: &AppState,
    parsed: Result<Request, Refused>,
) -> Result<ActionResult, ActionError> {
    let (tx, rx) = oneshot::channel();
    crate::core::scheduler::take(state, parsed, Reply::Channel(tx)).await;
    rx.await
        .map_err(|_| ActionError::internal("the relay lost this action's result"))
}

/// The answer to a `?detail=` that is none of the levels.
pub fn bad_detail() -> AppError {
    AppError::bad_request(ErrorCode::InvalidParams, "detail is one of live, recent, gist")
}

/// The relay's URL as the caller reached it, for links it hands back. Behind a TLS proxy
/// that says so (`X-Forwarded-Proto: https`), the links are https too.
pub fn base_url(headers: &HeaderMap) -> String {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1:17800");
    let scheme = match headers.get("x-forwarded-proto").and_then(|v| v.to_str().ok()) {
        Some("https") => "https",
        _ => "http",
    };
    format!("{scheme}://{host}")
}
