//! `PUT /artifacts` (hosts upload) and `GET /artifacts/{id}` (orchestrators, or anyone holding
//! a presigned URL). A bad or expired signature is 403; an unknown or expired id is 404; an
//! artifact over the cap is 413 `PAYLOAD_TOO_LARGE`.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use tether_protocol::actions::ArtifactRef;
use tether_protocol::{ActionError, ErrorCode};

use crate::artifacts::{is_id, StoreError};
use crate::auth::{self, Host, Role};
use crate::server::base_url;
use crate::state::AppState;

fn error(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Response {
    (status, Json(ActionError::new(code, message))).into_response()
}

pub async fn upload(
    _: Host,
    State(state): State<AppState>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let body = match body {
        Ok(body) => body,
        Err(rejection) if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                ErrorCode::PayloadTooLarge,
                rejection.body_text(),
            )
        }
        Err(rejection) => {
            return error(
                rejection.status(),
                ErrorCode::InvalidMessage,
                rejection.body_text(),
            )
        }
    };
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/octet-stream");
    match state.artifacts.put(&body, content_type).await {
        Ok(id) => {
            let url = format!(
                "{}/artifacts/{id}?{}",
                base_url(&headers),
                state.artifacts.presign(&id)
            );
            Json(ArtifactRef { artifact_id: id, url }).into_response()
        }
        Err(e @ StoreError::TooLarge { .. }) => error(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::PayloadTooLarge,
            e.to_string(),
        ),
        Err(e @ StoreError::Full { .. }) => error(
            StatusCode::INSUFFICIENT_STORAGE,
            ErrorCode::Internal,
            e.to_string(),
        ),
        Err(StoreError::Io(e)) if e.kind() == std::io::ErrorKind::StorageFull => {
            tracing::error!("artifact upload failed: the disk is full: {e}");
            error(
                StatusCode::INSUFFICIENT_STORAGE,
                ErrorCode::Internal,
                format!("the relay's disk is full; the artifact was not stored ({e})"),
            )
        }
        Err(e) => {
            tracing::error!("artifact upload failed: {e}");
            error(
                StatusCode::INTERNAL_SERVER_ERROR,
                ErrorCode::Internal,
                e.to_string(),
            )
        }
    }
}

#[derive(Deserialize)]
pub struct Signed {
    exp: Option<u64>,
    sig: Option<String>,
}

pub async fn download(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(signed): Query<Signed>,
    request: Request,
) -> Response {
    match (signed.exp, signed.sig.as_deref()) {
        (Some(exp), Some(sig)) => {
            if !state.artifacts.verify(&id, exp, sig) {
                return error(
                    StatusCode::FORBIDDEN,
                    ErrorCode::Forbidden,
                    "the signature is wrong or has expired",
                );
            }
        }
        _ => {
            let (parts, _) = request.into_parts();
            if let Err(refusal) = auth::require(&parts, &state.tokens, Role::Orchestrator) {
                return refusal.into_response();
            }
        }
    }
    let found = if is_id(&id) {
        state.artifacts.get(&id).await
    } else {
        None
    };
    match found {
        Some((content_type, bytes)) => ([(header::CONTENT_TYPE, content_type)], bytes).into_response(),
        None => error(
            StatusCode::NOT_FOUND,
            ErrorCode::InvalidParams,
            format!("no artifact {id} (unknown, or expired)"),
        ),
    }
}
