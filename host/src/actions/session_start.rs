//! `session_start`: opens the session's tab in the background (in its tab group where the
//! browser has groups), or reuses the session's existing tab, and navigates it. Returns once
//! the navigation committed.

use tether_protocol::actions::session_start::{Output, Params};
use tether_protocol::actions::TabId;
use tether_protocol::twin::WINDOW_ID_NONE;
use tether_protocol::{ActionError, ErrorCode};

use super::{browser_navigate, browser_storage_state, Context};
use crate::browser::contexts::Wanted;

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    if let Some(why) = p.url.as_deref().and_then(|url| cx.rules.refusal(url)) {
        return Err(ActionError::new(ErrorCode::ForbiddenTarget, why));
    }
    // A proxy at a place the session may not open would serve it that place's pages under
    // any site's name: judged as its address would be, whatever scheme it speaks.
    if let Some(why) = p
        .proxy
        .as_ref()
        .and_then(|proxy| proxy_refusal(cx, &proxy.server))
    {
        return Err(ActionError::new(ErrorCode::ForbiddenTarget, why));
    }
    cx.session.set_group_title(p.group_title.clone());
    let wanted = Wanted {
        profile: p.profile.as_deref(),
        proxy: p.proxy.as_ref(),
    };
    let restore = cx
        .contexts
        .for_session(cx.transport, cx.session.id, wanted)
        .await?;
    if let Some(kept) = restore {
        // What only a page of each origin can put back, before the session's first page.
        let origins: Vec<_> = kept
            .origins
            .into_iter()
            .filter(|o| cx.rules.refusal(&o.origin).is_none())
            .collect();
        if let Err(e) = browser_storage_state::put_origins(cx, &origins).await {
            tracing::warn!(
                session_id = cx.session.id,
                "a profile's storage was not put back: {e}"
            );
        }
    }

    let reusable = if p.reuse_existing_tab {
        existing_tab(cx).await
    } else {
        None
    };
    let tab = match reusable {
        Some(tab) => {
            cx.session.prepare(tab).await?;
            if let Some(url) = &p.url {
                browser_navigate::commit(&cx.page(tab), url).await?;
            }
            tab
        }
        None => match open(cx, p.url.as_deref()).await {
            Ok(tab) => tab,
            Err(e) => {
                // A session left with no tab keeps no context either (its next start makes one).
                if cx.session.tabs().is_empty() {
                    cx.contexts.release(cx.transport.as_ref(), cx.session.id).await;
                }
                return Err(e);
            }
        },
    };

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
        profile: cx.contexts.profile_of(cx.session.id),
    })
}

/// Opens a tab of the session in the background, in its group, and starts loading `url` in
/// it; returns once the navigation committed. A tab that fails to get there is closed again:
/// a failed open leaves nothing behind.
pub(super) async fn open(cx: &Context<'_>, url: Option<&str>) -> Result<TabId, ActionError> {
    let info = cx.open_tab("about:blank").await?;
    let tab = info.tab_id;
    cx.session.join(tab);
    let committed = async {
        cx.session.prepare(tab).await?;
        if let Some(url) = url {
            browser_navigate::commit(&cx.page(tab), url).await?;
        }
        Ok::<_, ActionError>(())
    }
    .await;
    if let Err(e) = committed {
        let _ = cx.transport.close_tab(tab).await;
        cx.session.forget(tab);
        return Err(e);
    }
    Ok(tab)
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

/// Why the session may not go through the proxy at `server`: the refusal its address would
/// get as an http page.
fn proxy_refusal(cx: &Context<'_>, server: &str) -> Option<String> {
    let parsed = url::Url::parse(server).ok()?;
    let port = parsed
        .port_or_known_default()
        .map_or(String::new(), |p| format!(":{p}"));
    let address = format!("http://{}{port}/", parsed.host_str()?);
    cx.rules
        .refusal(&address)
        .map(|why| format!("proxy.server {server}: {why}"))
}
