//! `session_start`: opens the session's tab in the background (in its tab group where the
//! browser has groups), or reuses the session's existing tab, and navigates it. Returns once
//! the navigation committed.

use tether_protocol::actions::session_start::{Output, Params};
use tether_protocol::actions::TabId;
use tether_protocol::{ActionError, ErrorCode};

use super::{browser_navigate, Context};

/// `chrome.windows.WINDOW_ID_NONE`: what `windowId` says when the browser names no window.
const WINDOW_ID_NONE: i64 = -1;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    if let Some(why) = p.url.as_deref().and_then(|url| cx.policy.refusal(url)) {
        return Err(ActionError::new(ErrorCode::ForbiddenTarget, why));
    }
    cx.session.set_group_title(p.group_title.clone());

    let reusable = if p.reuse_existing_tab {
        existing_tab(cx).await
    } else {
        None
    };
    let (tab, opened) = match reusable {
        Some(tab) => (tab, false),
        None => {
            let title = cx.session.group_title();
            let info = cx.transport.open_tab("about:blank", title.as_deref()).await?;
            cx.session.join(info.tab_id);
            (info.tab_id, true)
        }
    };

    let committed = async {
        cx.session.prepare(tab).await?;
        if let Some(url) = &p.url {
            browser_navigate::commit(&cx.page(tab), url).await?;
        }
        Ok::<_, ActionError>(())
    }
    .await;
    if let Err(e) = committed {
        // A failed start leaves nothing behind.
        if opened {
            let _ = cx.transport.close_tab(tab).await;
            cx.session.forget(tab);
        }
        return Err(e);
    }

    let info = cx.transport.tab(tab).await?.ok_or_else(|| {
        ActionError::new(
            ErrorCode::TabNotFound,
            format!("tab {tab} closed while the session started"),
        )
    })?;
    let requested = p.url.as_deref().unwrap_or(&info.url);
    let here = browser_navigate::state(&cx.page(tab), requested).await;
    Ok(Output {
        tab_id: tab,
        window_id: info.window_id.unwrap_or(WINDOW_ID_NONE),
        group_id: info.group_id,
        url: here.url,
        title: here.title,
    })
}

/// The session's first tab that still exists.
async fn existing_tab(cx: &Context<'_>) -> Option<TabId> {
    for tab in cx.session.tabs() {
        if let Ok(Some(_)) = cx.transport.tab(tab).await {
            return Some(tab);
        }
        cx.session.forget(tab);
    }
    None
}
