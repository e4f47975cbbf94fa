//! `browser_navigate`: loads a URL in the tab and waits for its load event, bounded by
//! `timeoutMs`. Only a failed navigation (refused, DNS, aborted) is `NAVIGATION_FAILED`; an
//! HTTP error page is a success that carries `httpStatus`.

use std::time::Duration;

use serde_json::{json, Value};
use tether_protocol::catalog::{NavigateParams, NavigateResult};
use tether_protocol::{ActionError, ActionOutcome, ErrorCode};

use crate::cdp::TabInfo;
use crate::page::{deadline, Page};

/// Default bound on the wait for the load event; below the relay's 30 s action timeout, so a
/// slow page is reported as `"loading"` rather than lost to `ACTION_TIMEOUT`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);

/// Chromium's answer when a server sends an HTTP error with an empty body: the navigation
/// committed (to an error page), so it is not a navigation failure.
const HTTP_ERROR_PAGE: &str = "net::ERR_HTTP_RESPONSE_CODE_FAILURE";

pub async fn run(page: &Page<'_>, p: NavigateParams) -> ActionOutcome {
    if let Some(why) = page.engine().policy().refusal(&p.url) {
        return Err(ActionError::new(ErrorCode::ForbiddenTarget, why));
    }
    let until = deadline(p.timeout_ms, DEFAULT_TIMEOUT);
    let mut events = page.events();
    let navigation = commit(page, &p.url).await;
    let outcome = async {
        let loader = navigation?;
        let mut http_status = None;
        let mut loaded = loader.is_none(); // a same-document navigation has no load to wait for
        while !loaded {
            let Some((method, params)) = events.next_until(until).await? else {
                break;
            };
            let ours =
                loader.is_some() && params.get("loaderId").and_then(Value::as_str) == loader.as_deref();
            match method.as_str() {
                "Network.responseReceived"
                    if ours && params.get("type").and_then(Value::as_str) == Some("Document") =>
                {
                    http_status = params
                        .pointer("/response/status")
                        .and_then(Value::as_u64)
                        .map(|s| s as u16);
                }
                "Page.lifecycleEvent"
                    if ours && params.get("name").and_then(Value::as_str) == Some("load") =>
                {
                    loaded = true;
                }
                _ => {}
            }
        }
        Ok::<_, ActionError>((loaded, http_status))
    }
    .await;
    let (loaded, http_status) = outcome?;

    let info = page
        .engine()
        .transport()
        .tab(page.tab)
        .await?
        .unwrap_or_else(|| TabInfo {
            tab_id: page.tab,
            window_id: None,
            group_id: None,
            opener_tab_id: None,
            url: p.url.clone(),
            title: String::new(),
        });
    let (url, title) = location(page, &info).await;
    Ok(json!(NavigateResult {
        url,
        title,
        status: if loaded { "complete" } else { "loading" }.into(),
        http_status,
    }))
}

/// Starts a navigation and returns once it committed, with its loader id (`None` for a
/// same-document navigation).
pub async fn commit(page: &Page<'_>, url: &str) -> Result<Option<String>, ActionError> {
    let reply = page.cdp("Page.navigate", json!({ "url": url })).await?;
    match reply.get("errorText").and_then(Value::as_str) {
        Some(error) if !error.is_empty() && error != HTTP_ERROR_PAGE => Err(ActionError::new(
            ErrorCode::NavigationFailed,
            format!("navigation to {url} failed: {error}"),
        )
        .with_details(json!({ "errorText": error }))),
        _ => Ok(reply.get("loaderId").and_then(Value::as_str).map(str::to_owned)),
    }
}

/// The page's URL and title, from the page itself, or from the browser's tab list while the
/// page cannot answer (mid-navigation).
pub async fn location(page: &Page<'_>, info: &TabInfo) -> (String, Option<String>) {
    let here = page
        .evaluate("({ url: location.href, title: document.title })")
        .await
        .ok();
    let text = |key: &str| {
        here.as_ref()
            .and_then(|h| h.get(key))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let url = text("url").unwrap_or_else(|| info.url.clone());
    let title = text("title")
        .or_else(|| Some(info.title.clone()))
        .filter(|t| !t.is_empty());
    (url, title)
}
