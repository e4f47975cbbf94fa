//! `POST /api/browser/action` (docs/protocol.md §3): one curl call, one result. Every request that
//! names a session and an action gets 200 and a result payload, errors included; 400 only for
//! a body that is not such a payload.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::Value;
use tether_protocol::{ActionError, ErrorCode};
use tokio::sync::oneshot;

use crate::auth::Orchestrator;
use crate::cluster;
use crate::reply::Reply;
use crate::request::Request;
use crate::state::AppState;

pub async fn browser_action(
    _: Orchestrator,
    State(state): State<AppState>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            let error = ActionError::new(
                ErrorCode::PayloadTooLarge,
                format!(
                    "the request is over {} bytes; send big inputs as an artifact",
                    state.settings.max_message_bytes
                ),
            );
            return (StatusCode::PAYLOAD_TOO_LARGE, Json(error)).into_response();
        }
        Err(rejection) => {
            let error = ActionError::new(ErrorCode::InvalidMessage, rejection.body_text());
            return (rejection.status(), Json(error)).into_response();
        }
    };
    let payload: Value = match serde_json::from_slice(&body) {
        Ok(payload) => payload,
        Err(e) => {
            return bad_request(ActionError::new(
                ErrorCode::InvalidMessage,
                format!("the body is not JSON: {e}"),
            ))
        }
    };
    let parsed = match Request::read(&payload) {
        Ok(parsed) => parsed,
        Err(not_an_action) => return bad_request(not_an_action),
    };
    let (tx, rx) = oneshot::channel();
    // The action runs to its end even if this caller hangs up: its result is logged and kept
    // for a retry with the same actionId.
    cluster::submit(&state, parsed, Reply::Channel(tx)).await;
    match rx.await {
        Ok(result) => Json(result).into_response(),
        Err(_) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(ActionError::internal("the relay lost this action's result")),
        )
            .into_response(),
    }
}

fn bad_request(error: ActionError) -> Response {
    (StatusCode::BAD_REQUEST, Json(error)).into_response()
}
