//! `browser_navigate`: loads a URL in the tab and waits for its load event, bounded by
//! `timeoutMs`. Only a failed navigation (refused, DNS, aborted) is `NAVIGATION_FAILED`; an
//! HTTP error page is a success that carries `httpStatus`.

use std::time::Duration;

use tokio::time::Instant;

use chromiumoxide::cdp::browser_protocol::page::{
    EventFrameNavigated, EventLifecycleEvent, EventNavigatedWithinDocument, NavigateParams,
};
use serde::Deserialize;
use serde_json::{json, Value};
use tether_protocol::actions::browser_navigate::{LoadStatus, Output, Params, DEFAULT_TIMEOUT_MS};
use tether_protocol::{ActionError, ErrorCode};

use super::Context;
use crate::page::{deadline, Page, TabEvents};

const DEFAULT_TIMEOUT: Duration = Duration::from_millis(DEFAULT_TIMEOUT_MS);

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

pub async fn run(cx: &Context<'_>, p: Params) -> Result<Output, ActionError> {
    if let Some(why) = cx.rules.refusal(&p.url) {
        return Err(ActionError::new(ErrorCode::ForbiddenTarget, why));
    }
    let page = cx.page(p.tab_id);
    let until = deadline(p.timeout_ms, DEFAULT_TIMEOUT);
    let mut events = page.events();
    let loader = commit(&page, &p.url).await?;
    // A same-document navigation (a #fragment) has no load to wait for.
    let mut loaded = loader.is_none();
    while !loaded {
        let Some((method, params)) = events.next_until(until).await? else {
            break;
        };
        loaded = method == EventLifecycleEvent::IDENTIFIER
            && params.get("name").and_then(Value::as_str) == Some("load")
            && params.get("loaderId").and_then(Value::as_str) == loader.as_deref();
    }
    Ok(outcome(&page, loaded, &p.url).await)
}

/// The result of a navigation that `loaded` (or not, within its wait), as the page reports it.
pub async fn outcome(page: &Page<'_>, loaded: bool, requested: &str) -> Output {
    let state = state(page, requested).await;
    Output {
        url: state.url,
        title: state.title,
        status: if loaded {
            LoadStatus::Complete
        } else {
            LoadStatus::Loading
        },
        http_status: state.http_status,
    }
}

/// Follows a navigation the page makes itself (history, reload) until `until`: waits for the
/// main frame to commit a document, then for its load. A same-document navigation, or a page
/// restored from the back-forward cache, has no load to wait for. Whether it loaded in time.
pub async fn follow(events: &mut TabEvents, until: Instant) -> Result<bool, ActionError> {
    let mut loader: Option<String> = None;
    while let Some((method, params)) = events.next_until(until).await? {
        match method.as_str() {
            EventNavigatedWithinDocument::IDENTIFIER if loader.is_none() => return Ok(true),
            EventFrameNavigated::IDENTIFIER if params.pointer("/frame/parentId").is_none() => {
                if params.get("type").and_then(Value::as_str) == Some("BackForwardCacheRestore") {
                    return Ok(true);
                }
                loader = params
                    .pointer("/frame/loaderId")
                    .and_then(Value::as_str)
                    .map(str::to_owned);
            }
            EventLifecycleEvent::IDENTIFIER => {
                let load = params.get("name").and_then(Value::as_str) == Some("load");
                if load
                    && loader.is_some()
                    && params.get("loaderId").and_then(Value::as_str) == loader.as_deref()
                {
                    return Ok(true);
                }
            }
            _ => {}
        }
    }
    Ok(false)
}

/// Starts a navigation and returns once it committed, with its loader id (`None` for a
/// same-document navigation).
pub async fn commit(page: &Page<'_>, url: &str) -> Result<Option<String>, ActionError> {
    let reply = page.command(NavigateParams::new(url)).await?;
    match reply.error_text.as_deref() {
        Some(error) if !error.is_empty() && error != HTTP_ERROR_PAGE => Err(ActionError::new(
            ErrorCode::NavigationFailed,
            format!("navigation to {url} failed: {error}"),
        )
        .with_details(json!({ "errorText": error }))),
        _ => Ok(reply.loader_id.map(|id| id.inner().clone())),
    }
}

/// Where a tab is, as a result reports it.
pub struct PageState {
    pub url: String,
    pub title: Option<String>,
    pub http_status: Option<u16>,
}

/// What `PAGE_STATE` answers.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Here {
    url: String,
    title: String,
    status: Option<u16>,
    error_page: bool,
}

/// The page's URL, title and HTTP status. On Chromium's error page the URL is the one the
/// navigation asked for (`requested`), not `chrome-error://`. While the page cannot answer
/// (mid-navigation), the browser's tab list stands in.
pub async fn state(page: &Page<'_>, requested: &str) -> PageState {
    let answer = page.evaluate(PAGE_STATE).await;
    if let Ok(here) = answer
        .and_then(|v| serde_json::from_value::<Here>(v).map_err(|e| ActionError::internal(e.to_string())))
    {
        return PageState {
            url: if here.error_page {
                requested.to_owned()
            } else {
                here.url
            },
            title: Some(here.title).filter(|t| !t.is_empty()),
            http_status: here.status,
        };
    }
    let known = page.transport().tab(page.tab).await.ok().flatten();
    PageState {
        url: known
            .as_ref()
            .map_or_else(|| requested.to_owned(), |t| t.url.clone()),
        title: known.map(|t| t.title).filter(|t| !t.is_empty()),
        http_status: None,
    }
}
