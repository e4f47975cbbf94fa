//! `GET /api/twin/{clientId}` (the twin as JSON) and `GET /api/twin/{clientId}.md` (as a Live
//! Screen block, `?detail=live|recent|gist`).

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use tether_protocol::ErrorCode;

use super::{bad_detail, DetailQuery};
use crate::core::state::AppState;
use crate::edge::app_error::AppError;
use crate::edge::auth::Reader;
use crate::edge::twin_md::{self, Browser};

pub async fn get(
    _: Reader,
    State(state): State<AppState>,
    Path(name): Path<String>,
    query: Result<Query<DetailQuery>, QueryRejection>,
) -> Result<Response, AppError> {
    // A clientId is taken as it is when known; otherwise a trailing `.md` asks for Markdown.
    let (client_id, markdown) = match name.strip_suffix(".md") {
        Some(stripped) if !state.knows_client(&name) => (stripped.to_owned(), true),
        _ => (name, false),
    };
    let (meta, online) = state.client_meta(&client_id).ok_or_else(|| {
        AppError::new(
            StatusCode::NOT_FOUND,
            ErrorCode::InvalidParams,
            format!("no browser with clientId {client_id:?} has joined this relay"),
        )
    })?;
    let twin = state.twins.get(&client_id).unwrap_or_default();
    if !markdown {
        return Ok(Json(twin.payload(&client_id)).into_response());
    }
    let Query(query) = query.map_err(|_| bad_detail())?;
    let detail = query.detail();
    let browser = Browser {
        client_id: &client_id,
        online,
        meta: &meta,
    };
    let body = twin_md::render(&browser, &twin, detail);
    Ok(([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], body).into_response())
}
