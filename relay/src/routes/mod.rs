//! The HTTP routes of docs/protocol.md §3 beyond the catalog and health, one module per resource.

pub mod actions;
pub mod artifacts;
pub mod console;
pub mod mcp;
pub mod screen;
pub mod sessions;
pub mod twin;

use serde::Deserialize;
use tether_protocol::actions::browser_snapshot::Detail;
use tether_protocol::ErrorCode;

use crate::app_error::AppError;

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
pub fn bad_detail() -> AppError {
    AppError::bad_request(ErrorCode::InvalidParams, "detail is one of live, recent, gist")
}
