//! `browser_storage_state`: the browser's cookies (`Network.getAllCookies` / `setCookies`, sent
//! through a tab of the session: its context's) and some origins' localStorage and IndexedDB
//! (`js/origin_state.js`), saved to a JSON artifact in Playwright's `storageState` shape, or put
//! back from one. An origin's storage is read or written in a throwaway background tab whose one request to the origin the host answers
//! itself with an empty page (`Fetch`): no request reaches the site, and no page of the site
//! runs. No value is ever logged or put in a result.

use std::time::Duration;

use base64::Engine;
use chromiumoxide::cdp::browser_protocol::fetch::{
    EnableParams, EventRequestPaused, FulfillRequestParams, HeaderEntry, RequestId, RequestPattern,
    RequestStage,
};
use chromiumoxide::cdp::browser_protocol::page::NavigateParams;
use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use serde_json::Value;
use tether_protocol::actions::browser_storage_state::{
    origin_of, Cookie, Direction, OriginStorage, OriginsDone, Output, Params, StorageState,
};
use tether_protocol::actions::TabId;
use tether_protocol::{ActionError, ErrorCode};

use super::Context;
use crate::browser::profiles::{self, cookie_param};
use crate::cdp::ours::{GetAllCookies, SetCookies};
use crate::cdp::{typed, BrowserEvent};

const REFUSED: &str = "browser_storage_state is off on this browser: save and load reach the person's own logins (every site's cookies), so the browser's owner allows them in the Tether extension's popup (\"Let agents save and load logins\"). A worker's own browser needs no such permission.";

/// The largest storage state a load reads.
const MAX_STATE_BYTES: u64 = 16 * 1024 * 1024;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    if !cx.rules.allows_storage_state() {
        return Err(ActionError::new(ErrorCode::Forbidden, REFUSED));
    }
    let tab = *cx.session.tabs().first().ok_or_else(|| {
        ActionError::invalid_params(
            "the session has no tab to reach the browser's cookies through: session_start first",
        )
    })?;
    cx.session.prepare(tab).await?;
    match p.action {
        Direction::Save => save(cx, tab, p.origins).await,
        Direction::Load => load(cx, tab, p.artifact_id.as_deref().unwrap_or_default()).await,
    }
}

async fn save(cx: &Context<'_>, tab: TabId, origins: Option<Vec<String>>) -> Result<Output, ActionError> {
    let cookies = all_cookies(cx, tab).await?;
    let origins = match origins {
        Some(named) => named.iter().filter_map(|o| origin_of(o).ok()).collect(),
        None => session_origins(cx).await,
    };
    let mut state = StorageState {
        cookies,
        origins: Vec::new(),
    };
    for origin in &origins {
        let answer = in_origin(cx, origin, profiles::read_origin()).await?;
        let saved = profiles::origin_read(origin.clone(), &answer).map_err(ActionError::internal)?;
        state.origins.push(saved);
    }
    let bytes = serde_json::to_vec(&state).map_err(|e| ActionError::internal(e.to_string()))?;
    let stored = cx.artifacts.put(bytes, "application/json").await?;
    Ok(Output {
        artifact_id: Some(stored.artifact_id),
        url: Some(stored.url),
        cookies: state.cookies.len() as u64,
        origins: OriginsDone::Saved(origins),
    })
}

async fn load(cx: &Context<'_>, tab: TabId, artifact_id: &str) -> Result<Output, ActionError> {
    let file = cx.artifacts.file(artifact_id, cx.session.id).await?;
    if file.bytes > MAX_STATE_BYTES {
        return Err(not_a_state(
            artifact_id,
            &format!("it is {} bytes, over {MAX_STATE_BYTES}", file.bytes),
        ));
    }
    let bytes = tokio::fs::read(&file.path)
        .await
        .map_err(|e| ActionError::internal(format!("cannot read artifact {artifact_id}: {e}")))?;
    let state: StorageState =
        serde_json::from_slice(&bytes).map_err(|e| not_a_state(artifact_id, &e.to_string()))?;
    for saved in &state.origins {
        let origin = origin_of(&saved.origin).map_err(|why| not_a_state(artifact_id, &why))?;
        refuse_if_forbidden(cx, &origin)?;
    }
    let cookies: Vec<Value> = state.cookies.iter().map(cookie_param).collect();
    cx.page(tab).command(SetCookies { cookies }).await?;
    put_origins(cx, &state.origins).await?;
    Ok(Output {
        artifact_id: None,
        url: None,
        cookies: state.cookies.len() as u64,
        origins: OriginsDone::Loaded(state.origins.len() as u64),
    })
}

/// Puts each origin's saved localStorage and IndexedDB back, through a page of the origin in
/// the session's context that no request to the site made.
pub(crate) async fn put_origins(cx: &Context<'_>, origins: &[OriginStorage]) -> Result<(), ActionError> {
    for saved in origins {
        in_origin(cx, &saved.origin, profiles::write_origin(saved)).await?;
    }
    Ok(())
}

/// How long a save waits for the cookies a page just set to reach the browser's cookie store.
const COOKIES_SETTLE: Duration = Duration::from_secs(1);

/// Every cookie of the browser, once those the session's pages see have reached its store: a
/// page's `document.cookie = ...` reaches it a moment after the page goes on (the renderer
/// sends it on without waiting), so a save right after a page set one would miss it.
async fn all_cookies(cx: &Context<'_>, tab: TabId) -> Result<Vec<Cookie>, ActionError> {
    let mut seen = std::collections::HashSet::new();
    for tab in cx.session.tabs() {
        let mut read = EvaluateParams::new("document.cookie");
        read.return_by_value = Some(true);
        if let Ok(cookie) = cx.page(tab).command_json(read).await {
            let text = cookie
                .pointer("/result/value")
                .and_then(Value::as_str)
                .unwrap_or_default();
            seen.extend(
                text.split(';')
                    .filter_map(|c| c.split_once('='))
                    .map(|(name, _)| name.trim().to_owned()),
            );
        }
    }
    let settled = tokio::time::Instant::now() + COOKIES_SETTLE;
    loop {
        let all = cx.page(tab).command(GetAllCookies {}).await?;
        let cookies: Vec<Cookie> = serde_json::from_value(Value::Array(all.cookies)).map_err(|e| {
            ActionError::internal(format!(
                "the browser's cookies are not as CDP describes them: {e}"
            ))
        })?;
        let stored = seen.iter().all(|name| cookies.iter().any(|c| &c.name == name));
        if stored || tokio::time::Instant::now() >= settled {
            return Ok(cookies);
        }
        // The store says nothing when it has taken a cookie: it is asked again.
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn not_a_state(artifact_id: &str, why: &str) -> ActionError {
    ActionError::invalid_params(format!(
        "artifact {artifact_id} is not a storage state ({{cookies, origins}} as browser_storage_state save writes it): {why}"
    ))
}

fn refuse_if_forbidden(cx: &Context<'_>, origin: &str) -> Result<(), ActionError> {
    match cx.rules.refusal(&format!("{origin}/")) {
        Some(why) => Err(ActionError::new(ErrorCode::ForbiddenTarget, why)),
        None => Ok(()),
    }
}

/// The http(s) origins the session's tabs show, each once.
async fn session_origins(cx: &Context<'_>) -> Vec<String> {
    let mut origins: Vec<String> = Vec::new();
    for tab in cx.session.tabs() {
        let Ok(Some(info)) = cx.transport.tab(tab).await else {
            continue;
        };
        let Ok(url) = url::Url::parse(&info.url) else {
            continue;
        };
        if let Ok(origin) = origin_of(&url.origin().ascii_serialization()) {
            if !origins.contains(&origin) {
                origins.push(origin);
            }
        }
    }
    origins
}

/// Runs `expression` in a page of `origin` that no request to the site made: a background tab
/// whose navigation to the origin the host answers with an empty document, closed after.
async fn in_origin(cx: &Context<'_>, origin: &str, expression: String) -> Result<Value, ActionError> {
    refuse_if_forbidden(cx, origin)?;
    let tab = cx.open_tab("about:blank").await?;
    let ran = run_in_origin(cx, tab.tab_id, origin, expression).await;
    if let Err(e) = cx.transport.close_tab(tab.tab_id).await {
        tracing::debug!(tab = tab.tab_id, "the storage tab did not close: {e}");
    }
    ran
}

async fn run_in_origin(
    cx: &Context<'_>,
    tab: TabId,
    origin: &str,
    expression: String,
) -> Result<Value, ActionError> {
    let transport = cx.transport;
    let mut events = transport.events();
    transport.attach(tab).await?;
    let pattern = RequestPattern {
        url_pattern: Some(format!("{origin}/*")),
        resource_type: None,
        request_stage: Some(RequestStage::Request),
    };
    let fetch = EnableParams {
        patterns: Some(vec![pattern]),
        handle_auth_requests: None,
    };
    typed::command(transport.as_ref(), tab, fetch).await?;
    let navigate = typed::command(transport.as_ref(), tab, NavigateParams::new(format!("{origin}/")));
    let navigated = tokio::select! {
        navigated = navigate => navigated?,
        failed = answer_requests(cx, tab, &mut events) => return Err(failed),
    };
    if let Some(error) = navigated.error_text {
        return Err(ActionError::new(
            ErrorCode::NavigationFailed,
            format!("cannot open {origin} to reach its localStorage: {error}"),
        ));
    }
    let evaluated = typed::command_json(transport.as_ref(), tab, typed::evaluation(expression)).await?;
    if let Some(thrown) = evaluated.get("exceptionDetails") {
        let why = thrown
            .pointer("/exception/description")
            .and_then(Value::as_str)
            .unwrap_or("an exception");
        return Err(ActionError::internal(format!(
            "{origin}'s localStorage refused: {why}"
        )));
    }
    Ok(evaluated.pointer("/result/value").cloned().unwrap_or(Value::Null))
}

/// Answers each request the tab makes to the origin with an empty document, until that fails
/// (the tab went away): why it did.
async fn answer_requests(
    cx: &Context<'_>,
    tab: TabId,
    events: &mut tokio::sync::broadcast::Receiver<BrowserEvent>,
) -> ActionError {
    loop {
        match events.recv().await {
            Ok(BrowserEvent::Cdp {
                tab: t,
                method,
                params,
            }) if t == tab && method == EventRequestPaused::IDENTIFIER => {
                let request = params["requestId"].as_str().unwrap_or_default();
                let empty = FulfillRequestParams {
                    request_id: RequestId::new(request),
                    response_code: 200,
                    response_headers: Some(vec![HeaderEntry::new("Content-Type", "text/html")]),
                    binary_response_headers: None,
                    body: Some(
                        base64::engine::general_purpose::STANDARD
                            .encode("<!doctype html>")
                            .into(),
                    ),
                    response_phrase: None,
                };
                if let Err(e) = typed::command(cx.transport.as_ref(), tab, empty).await {
                    return e.into();
                }
            }
            Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
            Err(_) => return ActionError::internal("the browser's events ended"),
        }
    }
}
