//! `POST /api/browser/action` (docs/protocol.md §3): one curl call, one result. Every request that
//! names a session and an action gets 200 and a result payload, errors included; 400 only for
//! a body that is not such a payload.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde_json::Value;
use tether_protocol::{ActionResult, ErrorCode};

use crate::core::request::Request;
use crate::core::state::AppState;
use crate::edge::app_error::AppError;
use crate::edge::auth::Orchestrator;

pub async fn browser_action(
    _: Orchestrator,
    State(state): State<AppState>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<ActionResult>, AppError> {
    let body = body.map_err(|rejection| match rejection.status() {
        StatusCode::PAYLOAD_TOO_LARGE => AppError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::PayloadTooLarge,
            format!(
                "the request is over {} bytes; send big inputs as an artifact",
                state.settings.max_message_bytes
            ),
        ),
        status => AppError::new(status, ErrorCode::InvalidMessage, rejection.body_text()),
    })?;
    let payload: Value = serde_json::from_slice(&body).map_err(|e| {
        AppError::bad_request(ErrorCode::InvalidMessage, format!("the body is not JSON: {e}"))
    })?;
    let parsed = Request::read(&payload).map_err(|e| AppError::with_status(StatusCode::BAD_REQUEST, e))?;
    let result = super::result_of(&state, parsed)
        .await
        .map_err(|lost| AppError::with_status(StatusCode::INTERNAL_SERVER_ERROR, lost))?;
    Ok(Json(result))
}
