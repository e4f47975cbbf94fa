//! `browser_tabs`: the session's own tabs, in the order they joined. `open` opens one as
//! `session_start` does (background, the session's group) and it joins; `close` closes one
//! the engine has already checked is the session's. A tab that closed meanwhile is forgotten
//! and not listed.

use tether_protocol::actions::browser_tabs::{Output, Params, SessionTab, TabsAction};
use tether_protocol::{ActionError, ErrorCode};

use super::{session_start, Context};
use crate::cdp::CdpError;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let opened = match (p.action, p.tab_id) {
        (TabsAction::Open, _) => {
            if let Some(why) = p.url.as_deref().and_then(|url| cx.policy.refusal(url)) {
                return Err(ActionError::new(ErrorCode::ForbiddenTarget, why));
            }
            Some(session_start::open(cx, p.url.as_deref()).await?)
        }
        (TabsAction::Close, Some(tab)) => {
            match cx.transport.close_tab(tab).await {
                Ok(()) | Err(CdpError::TabGone(_)) => {}
                Err(e) => return Err(e.into()),
            }
            cx.session.forget(tab);
            None
        }
        (TabsAction::Close, None) => {
            return Err(ActionError::invalid_params("close needs the tabId to close"))
        }
        (TabsAction::List, _) => None,
    };
    Ok(Output {
        tabs: listed(cx).await?,
        tab_id: opened,
    })
}

async fn listed(cx: &Context<'_>) -> Result<Vec<SessionTab>, ActionError> {
    let mut tabs = Vec::new();
    for tab in cx.session.tabs() {
        let Some(info) = cx.transport.tab(tab).await? else {
            cx.session.forget(tab);
            continue;
        };
        tabs.push(SessionTab {
            tab_id: tab,
            status: status(cx, tab).await,
            url: info.url,
            title: info.title,
            opener_tab_id: info.opener_tab_id,
        });
    }
    Ok(tabs)
}

/// Whether the tab's document has loaded, as the page says (a tab the debugger is not on, or
/// that cannot answer mid-navigation, is loading).
async fn status(cx: &Context<'_>, tab: i64) -> String {
    let ready = if cx.transport.is_attached(tab) {
        cx.page(tab).evaluate("document.readyState").await.ok()
    } else {
        None
    };
    match ready.as_ref().and_then(|v| v.as_str()) {
        Some("complete") => "complete".into(),
        _ => "loading".into(),
    }
}
