//! `browser_navigate`: loads a URL in the tab and waits for its load event, bounded by
//! `timeoutMs`. Only a failed navigation (refused, DNS, aborted) is `NAVIGATION_FAILED`; an
//! HTTP error page is a success that carries `httpStatus`.

use std::time::Duration;

use serde_json::{json, Value};
use tether_protocol::catalog::{NavigateParams, NavigateResult};
use tether_protocol::{ActionError, ActionOutcome, ErrorCode};

use crate::page::{deadline, Page};

/// Default bound on the wait for the load event; below the relay's 30 s action timeout, so a
/// slow page is reported as `"loading"` rather than lost to `ACTION_TIMEOUT`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(20);

/// Chromium's answer when a server sends an HTTP error with an empty body: the navigation
/// committed (to Chromium's own error page), so it is not a navigation failure.
const HTTP_ERROR_PAGE: &str = "net::ERR_HTTP_RESPONSE_CODE_FAILURE";

/// The page's own account of where it is. The HTTP status comes from its navigation timing
/// entry, or, on Chromium's error page, from the "HTTP ERROR 503" it shows: the Network domain
/// would tell it too, but enabling it slows every page load by a quarter (measured).
const PAGE_STATE: &str = r"(() => {
  const errorPage = location.protocol === 'chrome-error:';
  const entry = performance.getEntriesByType('navigation')[0];
  let status = (entry && entry.responseStatus) || null;
  if (errorPage) {
    const shown = /HTTP ERROR (\d{3})/.exec(document.body ? document.body.innerText : '');
    status = shown ? Number(shown[1]) : null;
  }
  return { url: location.href, title: document.title, status, errorPage };
})()";

pub async fn run(page: &Page<'_>, p: NavigateParams) -> ActionOutcome {
    if let Some(why) = page.engine().policy().refusal(&p.url) {
        return Err(ActionError::new(ErrorCode::ForbiddenTarget, why));
    }
    let until = deadline(p.timeout_ms, DEFAULT_TIMEOUT);
    let mut events = page.events();
    let loader = commit(page, &p.url).await?;
    // A same-document navigation (a #fragment) has no load to wait for.
    let mut loaded = loader.is_none();
    while !loaded {
        let Some((method, params)) = events.next_until(until).await? else {
            break;
        };
        loaded = method == "Page.lifecycleEvent"
            && params.get("name").and_then(Value::as_str) == Some("load")
            && params.get("loaderId").and_then(Value::as_str) == loader.as_deref();
    }
    let state = state(page, &p.url).await;
    Ok(json!(NavigateResult {
        url: state.url,
        title: state.title,
        status: if loaded { "complete" } else { "loading" }.into(),
        http_status: state.http_status,
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

/// Where a tab is, as a result reports it.
pub struct PageState {
    pub url: String,
    pub title: Option<String>,
    pub http_status: Option<u16>,
}

/// The page's URL, title and HTTP status. On Chromium's error page the URL is the one the
/// navigation asked for (`requested`), not `chrome-error://`. While the page cannot answer
/// (mid-navigation), the browser's tab list stands in.
pub async fn state(page: &Page<'_>, requested: &str) -> PageState {
    if let Ok(here) = page.evaluate(PAGE_STATE).await {
        let text = |key: &str| here.get(key).and_then(Value::as_str).map(str::to_owned);
        let error_page = here.get("errorPage").and_then(Value::as_bool).unwrap_or(false);
        return PageState {
            url: if error_page {
                requested.to_owned()
            } else {
                text("url").unwrap_or_default()
            },
            title: text("title").filter(|t| !t.is_empty()),
            http_status: here
                .get("status")
                .and_then(Value::as_u64)
                .and_then(|s| u16::try_from(s).ok()),
        };
    }
    let known = page.engine().transport().tab(page.tab).await.ok().flatten();
    PageState {
        url: known
            .as_ref()
            .map_or_else(|| requested.to_owned(), |t| t.url.clone()),
        title: known.map(|t| t.title).filter(|t| !t.is_empty()),
        http_status: None,
    }
}
