//! `browser_tabs`: the session's own tabs, in the order they joined. `open` opens one as
//! `session_start` does (background, the session's group) and it joins; `select` answers the
//! tab it names as the one to go on with; `close` closes one the engine has already checked is
//! the session's. A tab that closed meanwhile is forgotten
//! and not listed.

use tether_protocol::actions::browser_tabs::{Output, Params, SessionTab, TabsAction};
use tether_protocol::{ActionError, ErrorCode};

use super::{session_start, Context};
use crate::cdp::CdpError;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    let opened = match (p.action, p.tab_id) {
        (TabsAction::Open, _) => {
            if let Some(why) = p.url.as_deref().and_then(|url| cx.rules.refusal(url)) {
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
        // The engine checked it is the session's; the caller (MCP) follows the tabId answered.
        (TabsAction::Select, Some(tab)) => Some(tab),
        (TabsAction::Select, None) => {
            return Err(ActionError::invalid_params(
                "select needs the tabId to make current",
            ))
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
        let page = now(cx, tab).await;
        tabs.push(SessionTab {
            tab_id: tab,
            status: page.status.into(),
            url: page.url.unwrap_or(info.url),
            title: page.title.unwrap_or(info.title),
            opener_tab_id: info.opener_tab_id,
        });
    }
    Ok(tabs)
}

/// A tab as its page says it is now: the browser's own list can lag behind a load (the title
/// from before it).
struct Now {
    status: &'static str,
    url: Option<String>,
    title: Option<String>,
}

/// Whether the tab's document has loaded, with its title and URL, as the page says (a tab the
/// debugger is not on, or that cannot answer mid-navigation, is loading, as the browser lists it).
async fn now(cx: &Context<'_>, tab: i64) -> Now {
    let said = match cx.transport.is_attached(tab) {
        true => cx
            .page(tab)
            .evaluate("[document.readyState, document.title, location.href]")
            .await
            .ok(),
        false => None,
    };
    let text = |at: usize| {
        said.as_ref()
            .and_then(|v| v.get(at))
            .and_then(|v| v.as_str())
            .map(str::to_owned)
    };
    match text(0).as_deref() {
        Some("complete") => Now {
            status: "complete",
            url: text(2),
            title: text(1),
        },
        _ => Now {
            status: "loading",
            url: None,
            title: None,
        },
    }
}
