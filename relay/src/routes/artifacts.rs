//! `PUT /artifacts` (hosts upload; orchestrators upload named files, `?name=`) and
//! `GET /artifacts/{id}` (orchestrators, hosts fetching files to upload, or anyone holding a
//! presigned URL). A bad or expired signature is 403; an unknown or expired id is 404; an
//! artifact over the cap is 413 `PAYLOAD_TOO_LARGE`.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, RawQuery, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use tether_protocol::actions::{is_plain_file_name, ArtifactRef, MAX_FILE_NAME_BYTES};
use tether_protocol::{ActionError, ErrorCode};

use crate::artifacts::{is_id, StoreError};
use crate::auth::{self, Role};
use crate::server::base_url;
use crate::state::AppState;

fn error(status: StatusCode, code: ErrorCode, message: impl Into<String>) -> Response {
    (status, Json(ActionError::new(code, message))).into_response()
}

/// `?name=`: the file name an orchestrator uploads a file under (for `browser_upload_file`).
#[derive(Deserialize)]
pub struct Named {
    name: Option<String>,
}

pub async fn upload(
    State(state): State<AppState>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
    Query(named): Query<Named>,
    body: Result<Bytes, BytesRejection>,
) -> Response {
    let token = auth::token_from(&headers, query.as_deref());
    let role = match auth::require_one_of(token, &state.tokens, &[Role::Host, Role::Orchestrator]) {
        Ok(role) => role,
        Err(refusal) => return refusal.into_response(),
    };
    if let Err(why) = check_name(role, named.name.as_deref()) {
        return error(StatusCode::BAD_REQUEST, ErrorCode::InvalidParams, why);
    }
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
    match state
        .artifacts
        .put_named(body.clone(), content_type, named.name.as_deref())
        .await
    {
        Ok(id) => {
            if let Err(e) = share(&state, &id, &body).await {
                tracing::error!("cannot share an artifact with the deployment: {e}");
                return error(
                    StatusCode::SERVICE_UNAVAILABLE,
                    ErrorCode::Internal,
                    format!("the artifact could not be shared with the other relays: {e}"),
                );
            }
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

/// An orchestrator uploads files for a page, so it names them; a name is a plain file name.
fn check_name(role: Role, name: Option<&str>) -> Result<(), String> {
    match name {
        None if role == Role::Orchestrator => {
            Err("name the file: PUT /artifacts?name=<file name> (the page sees that name)".into())
        }
        None => Ok(()),
        Some(name) if name.is_empty() || name.len() > MAX_FILE_NAME_BYTES => {
            Err(format!("a file name is 1 to {MAX_FILE_NAME_BYTES} bytes"))
        }
        Some(name) if !is_plain_file_name(name) => Err(format!(
            "{name:?} is not a plain file name (no slashes or control characters)"
        )),
        Some(_) => Ok(()),
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
            // Hosts fetch the files an upload hands a page (browser_upload_file).
            let (parts, _) = request.into_parts();
            let token = auth::token_of(&parts);
            let readers = [Role::Orchestrator, Role::Host, Role::Observer];
            if let Err(refusal) = auth::require_one_of(token, &state.tokens, &readers) {
                return refusal.into_response();
            }
        }
    }
    let found = if is_id(&id) {
        match state.artifacts.get(&id).await {
            Some(found) => Some(found),
            None => from_deployment(&state, &id).await,
        }
    } else {
        None
    };
    match found {
        Some((content_type, name, bytes)) => {
            let mut response = ([(header::CONTENT_TYPE, content_type)], bytes).into_response();
            if let Some(disposition) = name.and_then(|n| attachment(&n)) {
                response
                    .headers_mut()
                    .insert(header::CONTENT_DISPOSITION, disposition);
            }
            response
        }
        None => error(
            StatusCode::NOT_FOUND,
            ErrorCode::InvalidParams,
            format!("no artifact {id} (unknown, or expired)"),
        ),
    }
}

/// In a deployment, an artifact is stored where every relay finds it too (PROTOCOL.md §14).
async fn share(state: &AppState, id: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let (Some(cluster), Some(description)) = (&state.cluster, state.artifacts.description(id)) else {
        return Ok(());
    };
    cluster.share_artifact(id, description, bytes).await
}

/// An artifact another relay of the deployment stored.
async fn from_deployment(state: &AppState, id: &str) -> Option<(String, Option<String>, Vec<u8>)> {
    let (description, bytes) = state.cluster.as_ref()?.fetch_artifact(id).await?;
    crate::artifacts::ArtifactStore::described(&description, bytes)
}

/// `attachment; filename*=UTF-8''<name>` (RFC 6266), so a download keeps the file's name.
fn attachment(name: &str) -> Option<header::HeaderValue> {
    let encoded: String = name
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'-' | b'_' => (b as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect();
    header::HeaderValue::from_str(&format!("attachment; filename*=UTF-8''{encoded}")).ok()
}
