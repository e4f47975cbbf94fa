//! `GET /api/sessions/{sessionId}/screen.md` (docs/protocol.md §10): a session's Live Screen, taken
//! fresh at the request: its tabs, then the snapshot of its current tab (the last one an
//! action ran on or opened), `?detail=live|recent|gist`. A look reads the page, so it passes
//! the same gate as an agent's `browser_snapshot` (docs/protocol.md §15): it waits its turn in the
//! session's queue, under `--confirm` a person approves it, and it is in the session's log. It
//! does not count as the session's previous snapshot. A session without a browser, a tab or a
//! connected host gets Markdown saying so.

use std::fmt::Write;
use std::time::Duration;

use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};
use tether_protocol::actions::browser_snapshot::Detail;
use tether_protocol::actions::browser_tabs::Output as Tabs;
use tether_protocol::actions::TabId;
use tether_protocol::{ActionError, ActionName};

use super::{bad_detail, DetailQuery};
use crate::core::request::{Named, Request};
use crate::core::state::AppState;
use crate::edge::app_error::AppError;
use crate::edge::auth::Reader;

/// How long a look may take: a person is waiting for the page.
const LOOK_TIMEOUT: Duration = Duration::from_secs(10);

pub async fn get(
    _: Reader,
    State(state): State<AppState>,
    Path(session_id): Path<String>,
    query: Result<Query<DetailQuery>, QueryRejection>,
) -> Result<Response, AppError> {
    let Query(query) = query.map_err(|_| bad_detail())?;
    let body = screen(&state, &session_id, query.detail()).await;
    Ok(([(header::CONTENT_TYPE, "text/markdown; charset=utf-8")], body).into_response())
}

async fn screen(state: &AppState, session_id: &str, detail: Detail) -> String {
    let mut out = format!("## Session `{session_id}`\n\n");
    let (client, current) = state.sessions.screen_of(session_id);
    let Some(client) = client else {
        out.push_str("No browser yet: bind one (POST /api/sessions/{sessionId}/bind) or run an action.\n");
        return out;
    };
    let _ = writeln!(out, "Browser `{client}`.\n");
    let tabs = look(
        state,
        session_id,
        &client,
        ActionName::BrowserTabs,
        json!({ "action": "list" }),
    )
    .await;
    match tabs
        .and_then(|v| serde_json::from_value::<Tabs>(v).map_err(|e| ActionError::internal(e.to_string())))
    {
        Ok(tabs) if tabs.tabs.is_empty() => out.push_str("No tabs: run session_start.\n"),
        Ok(tabs) => {
            out.push_str("### Tabs\n");
            for tab in &tabs.tabs {
                let mark = if Some(tab.tab_id) == current {
                    " (current)"
                } else {
                    ""
                };
                let title: String = tab.title.split_whitespace().collect::<Vec<_>>().join(" ");
                let _ = writeln!(out, "- tab {} {title:?} {}{mark}", tab.tab_id, tab.url);
            }
            out.push('\n');
        }
        Err(error) => {
            let _ = writeln!(
                out,
                "The tabs are unknown: {} ({}).\n",
                error.message,
                error.code.as_str()
            );
        }
    }
    let Some(tab) = current else {
        out.push_str("No current tab: no action has run on a tab yet.\n");
        return out;
    };
    out.push_str(&snapshot(state, session_id, &client, tab, detail).await);
    out
}

async fn snapshot(state: &AppState, session_id: &str, client: &str, tab: TabId, detail: Detail) -> String {
    let params = json!({ "tabId": tab, "detail": detail });
    match look(state, session_id, client, ActionName::BrowserSnapshot, params).await {
        Ok(output) => match output.get("markdown").and_then(Value::as_str) {
            Some(markdown) => format!("### Tab {tab}\n{markdown}"),
            None => format!("### Tab {tab}\nThe browser answered without a snapshot.\n"),
        },
        Err(error) => format!(
            "### Tab {tab}\nNo snapshot: {} ({}).\n",
            error.message,
            error.code.as_str()
        ),
    }
}

async fn look(
    state: &AppState,
    session_id: &str,
    client: &str,
    action: ActionName,
    params: Value,
) -> Result<Value, ActionError> {
    let request = Request {
        session_id: session_id.to_owned(),
        client_id: Some(client.to_owned()),
        action_id: format!("look-{}", crate::parts::ids::random_hex(8)),
        action: Named::Action(action),
        params,
        timeout: Some(LOOK_TIMEOUT),
        peek: true,
    };
    let result = super::result_of(state, Ok(request)).await?;
    match (result.error, result.result) {
        (Some(error), _) => Err(error),
        (None, output) => Ok(output.map(|o| o.value()).unwrap_or_default()),
    }
}
