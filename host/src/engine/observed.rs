//! What happened in an action's tab while it ran (docs/protocol.md §17's `observed`): console
//! errors and warnings, requests that failed, downloads begun, and a navigation of the page; and, when the
//! action was asked to `observe`, the page once it settled (`screen`). Marked when the action starts, read when
//! it ends, once the tab's watcher has taken every event the browser sent before the action's
//! last answer.

use std::time::Duration;

use serde_json::{json, Map, Value};

use tether_protocol::actions::browser_snapshot::{self, Detail};
use tether_protocol::actions::fields::Observe;
use tether_protocol::actions::{browser_wait_for_loaded, TabId};

use crate::actions::{self, Context};
use crate::page::tab_state::TabState;

/// How long a `screen` waits for a load the action started.
const LOAD_WAIT_MS: u64 = 10_000;

/// How many failed requests a result names at most.
const FAILED_REPORTED: usize = 5;

/// Where the tab's records stood when the action started.
#[derive(Debug, Clone, Copy)]
pub struct Mark {
    console: u64,
    navigations: u64,
    requests: u64,
    downloads: u64,
}

pub fn mark(state: &TabState) -> Mark {
    Mark {
        console: state.console.last(),
        navigations: state.navigations().0,
        requests: state.network.last(),
        downloads: state.downloads.last(),
    }
}

/// What happened since `mark`, or `None` when nothing did.
pub async fn since(state: &TabState, mark: Mark) -> Option<Value> {
    state.caught_up().await;
    let mut observed = Map::new();
    let (errors, warnings, first) = state.console.errors_and_warnings_after(mark.console);
    if errors + warnings > 0 {
        let mut console = json!({ "errors": errors, "warnings": warnings });
        if let Some(first) = first {
            console["first"] = json!(first);
        }
        observed.insert("console".into(), console);
    }
    let failed: Vec<Value> = state
        .network
        .failed_after(mark.requests, FAILED_REPORTED)
        .into_iter()
        .map(|r| json!({ "url": r.url, "status": r.status, "failed": r.failed }))
        .map(without_nulls)
        .collect();
    if !failed.is_empty() {
        observed.insert("failedRequests".into(), Value::Array(failed));
    }
    let downloads = state.downloads.after(mark.downloads);
    if !downloads.is_empty() {
        observed.insert(
            "downloads".into(),
            serde_json::to_value(downloads).unwrap_or_default(),
        );
    }
    let (navigations, url) = state.navigations();
    if navigations > mark.navigations {
        observed.insert("navigated".into(), json!({ "url": url }));
    }
    (!observed.is_empty()).then_some(Value::Object(observed))
}

/// Waits for the navigations the tab's frames asked for to commit (or end otherwise), then, if
/// its document is still loading, for its load event; each wait at most `limit()` as it begins.
/// Whether there was a navigation to wait for.
pub async fn loads_ended(cx: &Context<'_>, tab: TabId, limit: impl Fn() -> Duration) -> bool {
    let state = cx.session.tab_state(tab);
    let requested = state.loading.has_requested();
    state.loading.requested_ended(limit()).await;
    if state.loading.complete() {
        return requested;
    }
    let wait = browser_wait_for_loaded::Params {
        tab_id: tab,
        timeout_ms: Some(limit().as_millis().max(1) as u64),
    };
    let _ = actions::browser_wait_for_loaded::run(cx, wait).await;
    true
}

fn without_nulls(mut value: Value) -> Value {
    if let Value::Object(fields) = &mut value {
        fields.retain(|_, v| !v.is_null());
    }
    value
}

/// The page once the action settled, as `observe` asks: a load the action started (or one still
/// going) is waited for first, up to its load event; then the session's snapshot of the tab at
/// that detail, which counts as its latest. `None` when the page cannot be read (the tab closed).
pub async fn screen(cx: &Context<'_>, tab: TabId, (how, max_chars): (Observe, u32)) -> Option<String> {
    loads_ended(cx, tab, || Duration::from_millis(LOAD_WAIT_MS)).await;
    let detail = match how {
        Observe::Gist => Detail::Gist,
        Observe::Recent | Observe::None => Detail::Recent,
    };
    let look = browser_snapshot::Params {
        tab_id: tab,
        scope: Default::default(),
        detail,
        max_chars: Some(max_chars),
    };
    match actions::browser_snapshot::run(cx, look).await {
        Ok(seen) => Some(seen.markdown),
        Err(e) => {
            tracing::debug!(tab, "cannot show the page the action left: {e}");
            None
        }
    }
}
