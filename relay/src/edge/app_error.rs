//! The one error an HTTP route answers with: a status and the wire's error payload
//! `{ code, message, details? }` (docs/protocol.md §3). Routes return `Result<_, AppError>` and
//! use `?`; a refused token, a bad body and a failed look all take this one shape.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use tether_protocol::{ActionError, ErrorCode};

#[derive(Debug)]
pub struct AppError {
    pub status: StatusCode,
    pub error: ActionError,
}

impl AppError {
    pub fn new(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            status,
            error: ActionError::new(code, message),
        }
    }

    /// An error payload the relay already has, answered with `status`.
    pub fn with_status(status: StatusCode, error: ActionError) -> Self {
        Self { status, error }
    }

    /// 400 with `code`.
    pub fn bad_request(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        (self.status, Json(self.error)).into_response()
    }
}
