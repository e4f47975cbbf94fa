//! `PUT /artifacts` (hosts upload; orchestrators upload named files, `?name=`) and
//! `GET /artifacts/{id}` (orchestrators, hosts fetching files to upload, or anyone holding a
//! presigned URL). A bad or expired signature is 403; an unknown or expired id is 404; an
//! artifact over the cap is 413 `PAYLOAD_TOO_LARGE`. The token is checked before the body is
//! read.
//!
//! An artifact is whatever a page or an uploader made of it, served from the relay's own
//! origin, where the console keeps its token: it never runs there (docs/protocol.md §15). Its type
//! is one of a fixed list, and it is served sandboxed, unsniffed, and as a download unless it
//! is a type a browser only shows.

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, Query, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use tether_protocol::actions::{is_plain_file_name, ArtifactRef, MAX_FILE_NAME_BYTES};
use tether_protocol::ErrorCode;

use super::base_url;
use crate::core::state::AppState;
use crate::edge::app_error::AppError;
use crate::edge::auth::{self, Role, Uploader};
use crate::stores::artifacts::{is_id, StoreError};

/// `?name=`: the file name an orchestrator uploads a file under (for `browser_upload_file`).
#[derive(Deserialize)]
pub struct Named {
    name: Option<String>,
}

pub async fn upload(
    Uploader(role): Uploader,
    State(state): State<AppState>,
    headers: HeaderMap,
    Query(named): Query<Named>,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<ArtifactRef>, AppError> {
    check_name(role, named.name.as_deref())
        .map_err(|why| AppError::bad_request(ErrorCode::InvalidParams, why))?;
    let body = body.map_err(|rejection| {
        let code = match rejection.status() {
            StatusCode::PAYLOAD_TOO_LARGE => ErrorCode::PayloadTooLarge,
            _ => ErrorCode::InvalidMessage,
        };
        AppError::new(rejection.status(), code, rejection.body_text())
    })?;
    let content_type = stored_type(
        headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default(),
    );
    let id = state
        .artifacts
        .put_named(body.clone(), content_type, named.name.as_deref())
        .await
        .map_err(not_stored)?;
    share(&state, &id, &body).await.map_err(|e| {
        tracing::error!("cannot share an artifact with the deployment: {e}");
        AppError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            ErrorCode::Internal,
            format!("the artifact could not be shared with the other relays: {e}"),
        )
    })?;
    let url = format!(
        "{}/artifacts/{id}?{}",
        base_url(&headers),
        state.artifacts.presign(&id)
    );
    Ok(Json(ArtifactRef { artifact_id: id, url }))
}

/// Why the store did not take an upload, as the uploader is told.
fn not_stored(e: StoreError) -> AppError {
    match e {
        e @ StoreError::TooLarge { .. } => AppError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::PayloadTooLarge,
            e.to_string(),
        ),
        e @ StoreError::Full { .. } => AppError::new(
            StatusCode::INSUFFICIENT_STORAGE,
            ErrorCode::Internal,
            e.to_string(),
        ),
        StoreError::Io(e) if e.kind() == std::io::ErrorKind::StorageFull => {
            tracing::error!("artifact upload failed: the disk is full: {e}");
            AppError::new(
                StatusCode::INSUFFICIENT_STORAGE,
                ErrorCode::Internal,
                format!("the relay's disk is full; the artifact was not stored ({e})"),
            )
        }
        e => {
            tracing::error!("artifact upload failed: {e}");
            AppError::new(
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
) -> Result<Response, AppError> {
    match (signed.exp, signed.sig.as_deref()) {
        (Some(exp), Some(sig)) if !state.artifacts.verify(&id, exp, sig) => {
            return Err(AppError::new(
                StatusCode::FORBIDDEN,
                ErrorCode::Forbidden,
                "the signature is wrong or has expired",
            ));
        }
        (Some(_), Some(_)) => {}
        _ => {
            // Hosts fetch the files an upload hands a page (browser_upload_file).
            let (parts, _) = request.into_parts();
            let readers = [Role::Orchestrator, Role::Host, Role::Observer];
            auth::require_one_of(auth::token_of(&parts)?, &state.tokens, &readers)?;
        }
    }
    let found = match is_id(&id) {
        true => match state.artifacts.get(&id).await {
            Some(found) => Some(found),
            None => from_deployment(&state, &id).await,
        },
        false => None,
    };
    let (content_type, name, bytes) = found.ok_or_else(|| {
        AppError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::InvalidParams,
            format!("no artifact {id} (unknown, or expired)"),
        )
    })?;
    Ok(served(&id, &content_type, name.as_deref(), bytes))
}

/// In a deployment, an artifact is stored where every relay finds it too (docs/protocol.md §14).
async fn share(state: &AppState, id: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let Some(description) = state.artifacts.description(id) else {
        return Ok(());
    };
    state.deployment.share_artifact(id, description, bytes).await
}

/// An artifact another relay of the deployment stored.
async fn from_deployment(state: &AppState, id: &str) -> Option<(String, Option<String>, Vec<u8>)> {
    let (description, bytes) = state.deployment.fetch_artifact(id).await?;
    crate::stores::artifacts::ArtifactStore::described(&description, bytes)
}

/// The types an artifact may have, each with its file extension and whether a browser shows it
/// (`inline`) and never runs it; the others download. Anything else is stored as
/// `application/octet-stream`.
const TYPES: &[(&str, &str, bool)] = &[
    ("image/png", "png", true),
    ("image/jpeg", "jpg", true),
    ("image/webp", "webp", true),
    ("text/plain", "txt", true),
    ("application/json", "json", true),
    ("application/pdf", "pdf", true),
    ("text/html", "html", false),
    ("text/csv", "csv", false),
    ("text/markdown", "md", false),
    ("application/zip", "zip", false),
    ("application/octet-stream", "bin", false),
];

/// The type an upload is stored as: its media type (parameters dropped, case ignored) when it
/// is one of [`TYPES`], else `application/octet-stream`.
pub fn stored_type(given: &str) -> &'static str {
    known(given).0
}

/// The entry of [`TYPES`] for a media type, parameters dropped and case ignored.
fn known(given: &str) -> (&'static str, &'static str, bool) {
    let essence = given.split(';').next().unwrap_or_default().trim();
    TYPES
        .iter()
        .find(|(t, _, _)| t.eq_ignore_ascii_case(essence))
        .copied()
        .unwrap_or(("application/octet-stream", "bin", false))
}

/// An artifact's response: a fixed type (text in UTF-8), never sniffed, sandboxed with nothing
/// allowed to load, `inline` only for the types a browser just shows.
fn served(id: &str, content_type: &str, name: Option<&str>, bytes: Vec<u8>) -> Response {
    let (kind, extension, shown) = known(content_type);
    let type_header = if kind.starts_with("text/") {
        format!("{kind}; charset=utf-8")
    } else {
        kind.to_owned()
    };
    let disposition = if shown { "inline" } else { "attachment" };
    let file_name = name.map_or_else(|| format!("{id}.{extension}"), str::to_owned);
    let mut response = bytes.into_response();
    let headers = response.headers_mut();
    let mut set = |name: header::HeaderName, value: &str| {
        if let Ok(value) = header::HeaderValue::from_str(value) {
            headers.insert(name, value);
        }
    };
    set(header::CONTENT_TYPE, &type_header);
    set(header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(header::CONTENT_SECURITY_POLICY, "sandbox; default-src 'none'");
    set(
        header::CONTENT_DISPOSITION,
        &content_disposition(disposition, &file_name),
    );
    response
}

/// `<disposition>; filename="<ASCII name>"; filename*=UTF-8''<name>` (RFC 6266): a download
/// keeps the file's name, and no character of it can break out of the header.
fn content_disposition(disposition: &str, name: &str) -> String {
    let plain: String = name
        .chars()
        .map(|c| match c {
            ' '..='~' if c != '"' && c != '\\' => c,
            _ => '_',
        })
        .collect();
    let encoded: String = name
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'.' | b'-' | b'_' => (b as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect();
    format!("{disposition}; filename=\"{plain}\"; filename*=UTF-8''{encoded}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_listed_types_are_kept() {
        assert_eq!(stored_type("text/html; charset=utf-8"), "text/html");
        assert_eq!(stored_type("IMAGE/PNG"), "image/png");
        assert_eq!(stored_type("image/svg+xml"), "application/octet-stream");
        assert_eq!(stored_type("text/javascript"), "application/octet-stream");
        assert_eq!(stored_type(""), "application/octet-stream");
    }

    #[test]
    fn names_cannot_break_the_header() {
        let header = content_disposition("attachment", "a\"b\r\n.html");
        assert_eq!(
            header,
            "attachment; filename=\"a_b__.html\"; filename*=UTF-8''a%22b%0D%0A.html"
        );
    }
}
