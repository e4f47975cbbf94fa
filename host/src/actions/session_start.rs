//! `session_start`: opens the session's tab in the background (in its tab group where the
//! browser has groups), or reuses the session's existing tab, and navigates it. Returns once
//! the navigation committed.

use serde_json::json;
use tether_protocol::catalog::{SessionStartParams, SessionStartResult};
use tether_protocol::{ActionError, ActionOutcome, ErrorCode};

use super::browser_navigate;
use crate::engine::Engine;
use crate::page::Page;

/// `chrome.windows.WINDOW_ID_NONE`: what `windowId` says when the browser names no window.
const WINDOW_ID_NONE: i64 = -1;

pub async fn run(engine: &Engine, session_id: &str, p: SessionStartParams) -> ActionOutcome {
    if let Some(why) = p.url.as_deref().and_then(|url| engine.policy().refusal(url)) {
        return Err(ActionError::new(ErrorCode::ForbiddenTarget, why));
    }
    engine
        .sessions()
        .set_group_title(session_id, p.group_title.clone());
    let transport = engine.transport();

    let reusable = if p.reuse_existing_tab {
        existing_tab(engine, session_id).await
    } else {
        None
    };
    let (tab, opened) = match reusable {
        Some(tab) => (tab, false),
        None => {
            let group_title = engine
                .sessions()
                .get(session_id)
                .and_then(|s| s.group_title.clone());
            let info = transport.open_tab("about:blank", group_title.as_deref()).await?;
            engine.sessions().join(session_id, info.tab_id);
            (info.tab_id, true)
        }
    };

    let committed = async {
        engine.prepare(tab).await?;
        if let Some(url) = &p.url {
            browser_navigate::commit(&Page::new(engine, tab), url).await?;
        }
        Ok::<_, ActionError>(())
    }
    .await;
    if let Err(e) = committed {
        // A failed start leaves nothing behind.
        if opened {
            let _ = transport.close_tab(tab).await;
            engine.forget(tab);
        }
        return Err(e);
    }

    let info = transport.tab(tab).await?.ok_or_else(|| {
        ActionError::new(
            ErrorCode::TabNotFound,
            format!("tab {tab} closed while the session started"),
        )
    })?;
    let requested = p.url.as_deref().unwrap_or(&info.url);
    let here = browser_navigate::state(&Page::new(engine, tab), requested).await;
    Ok(json!(SessionStartResult {
        tab_id: tab,
        window_id: info.window_id.unwrap_or(WINDOW_ID_NONE),
        group_id: info.group_id,
        url: here.url,
        title: here.title,
    }))
}

/// The session's first tab that still exists.
async fn existing_tab(engine: &Engine, session_id: &str) -> Option<i64> {
    let tabs = engine
        .sessions()
        .get(session_id)
        .map(|s| s.tabs.clone())
        .unwrap_or_default();
    for tab in tabs {
        if let Ok(Some(_)) = engine.transport().tab(tab).await {
            return Some(tab);
        }
        engine.forget(tab);
    }
    None
}
