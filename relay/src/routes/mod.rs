//! The HTTP routes of docs/protocol.md §3 beyond the catalog and health, one module per resource.

pub mod actions;
pub mod artifacts;
pub mod console;
pub mod mcp;
pub mod screen;
pub mod sessions;
pub mod twin;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use tether_protocol::actions::browser_snapshot::Detail;
use tether_protocol::{ActionError, ErrorCode};

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

/// The answer to a `?detail=` that is none of the levels.
pub fn bad_detail() -> Response {
    let error = ActionError::new(ErrorCode::InvalidParams, "detail is one of live, recent, gist");
    (StatusCode::BAD_REQUEST, Json(error)).into_response()
}
