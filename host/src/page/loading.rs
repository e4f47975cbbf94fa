//! Whether a prepared tab's document has finished loading, as told by the page events the host
//! receives anyway: `browser_wait_for_loaded` on a loaded page then answers without a round trip
//! to the page (in extension mode each one is a `chrome.debugger` call, ~2 ms).
//!
//! Only "complete" is ever trusted, and only until the next sign of loading; anything else
//! (never seen a load, events missed, a frame loading, a page restored from the back/forward
//! cache, which fires no load event) sends the action to ask the page. The answer is as fresh
//! as the host's reading of the tab's events, a task hop behind its connection; a navigation
//! the page has asked for but not committed yet was never seen by asking either (the question
//! reached the old, complete document).
//!
//! Navigations the page asked for are followed until they end one way or another (a new
//! document, a download, nothing at all), so an action that started one can wait for it
//! ([`Loading::requested_ended`]) before it shows the page.

use crate::cdp::ours::{EventDownloadWillBegin, EventFrameClearedScheduledNavigation};
use chromiumoxide::cdp::browser_protocol::page::{
    EventFrameDetached, EventFrameNavigated, EventFrameRequestedNavigation, EventFrameStartedLoading,
    EventFrameStoppedLoading, EventLoadEventFired, EventNavigatedWithinDocument,
};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use tokio::sync::Notify;

/// What the tab's events said last.
#[derive(Default)]
pub struct Loading {
    state: Mutex<Seen>,
    /// Told whenever a requested navigation ends.
    ended: Notify,
}

#[derive(Default)]
struct Seen {
    /// Counts the signs of loading, so an answer the page gave can be kept only if no sign
    /// came since the question was asked.
    generation: u64,
    complete: bool,
    /// The frames with a navigation requested (a link followed, a form submitted, a script's
    /// `location`) that has not yet committed, become a download or been dropped.
    requested: Vec<String>,
}

/// A moment in the tab's loading, to keep the page's own answer against
/// ([`Loading::complete_since`]).
#[derive(Clone, Copy)]
pub struct Generation(u64);

impl Loading {
    fn seen(&self) -> std::sync::MutexGuard<'_, Seen> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the document's load event fired and nothing started loading since.
    pub fn complete(&self) -> bool {
        self.seen().complete
    }

    /// Whether a navigation a frame requested has not yet committed, become a download or been
    /// dropped.
    pub fn has_requested(&self) -> bool {
        !self.seen().requested.is_empty()
    }

    /// Now, before asking the page.
    pub fn now(&self) -> Generation {
        Generation(self.seen().generation)
    }

    /// The page said its document is complete, asked at `asked`: kept unless something
    /// started loading since (its event may have been read before the page's answer was).
    pub fn complete_since(&self, asked: Generation) {
        let mut seen = self.seen();
        if seen.generation == asked.0 {
            seen.complete = true;
        }
    }

    /// Reads one of the tab's CDP events. The main frame's load event is the only sign of
    /// completion (`Page.loadEventFired` is the main frame's alone); any frame that starts
    /// loading, or a main frame that commits a new document, is a sign of loading. A frame's
    /// requested navigation ends with its commit, a download, or the frame's loading stopping
    /// or its scheduled navigation cleared (a `204`, a cancelled one).
    pub fn observe(&self, method: &str, params: &Value) {
        let frame = params["frameId"]
            .as_str()
            .or(params.pointer("/frame/id").and_then(Value::as_str));
        match method {
            EventLoadEventFired::IDENTIFIER => self.seen().complete = true,
            EventFrameStartedLoading::IDENTIFIER => self.started(),
            EventFrameNavigated::IDENTIFIER if params.pointer("/frame/parentId").is_none() => self.started(),
            EventFrameRequestedNavigation::IDENTIFIER if params["disposition"] == "currentTab" => {
                let mut seen = self.seen();
                if let Some(frame) = frame.filter(|f| !seen.requested.iter().any(|r| r == f)) {
                    seen.requested.push(frame.to_owned());
                }
            }
            _ => {}
        }
        let ends = matches!(
            method,
            EventFrameNavigated::IDENTIFIER
                | EventNavigatedWithinDocument::IDENTIFIER
                | EventDownloadWillBegin::IDENTIFIER
                | EventFrameStoppedLoading::IDENTIFIER
                | EventFrameClearedScheduledNavigation::IDENTIFIER
                | EventFrameDetached::IDENTIFIER
        );
        if let Some(frame) = frame.filter(|_| ends) {
            self.seen().requested.retain(|r| r != frame);
            self.ended.notify_waiters();
        }
    }

    /// Something may have started loading unseen (events were missed); what ended meanwhile
    /// is not known either, so no requested navigation is waited for.
    pub fn loading(&self) {
        self.started();
        let mut seen = self.seen();
        if !seen.requested.is_empty() {
            seen.requested.clear();
            self.ended.notify_waiters();
        }
    }

    fn started(&self) {
        let mut seen = self.seen();
        seen.generation += 1;
        seen.complete = false;
    }

    /// Waits, up to `limit`, until every navigation the tab's frames requested has committed,
    /// become a download or been dropped; false if one was still going at `limit`.
    pub async fn requested_ended(&self, limit: Duration) -> bool {
        tokio::time::timeout(limit, async {
            loop {
                let ended = self.ended.notified();
                if self.seen().requested.is_empty() {
                    return;
                }
                ended.await;
            }
        })
        .await
        .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn complete_only_after_the_load_event_and_until_anything_loads() {
        let loading = Loading::default();
        assert!(!loading.complete(), "unknown until told");
        loading.observe("Page.loadEventFired", &json!({}));
        assert!(loading.complete());
        loading.observe("Page.frameStartedLoading", &json!({ "frameId": "child" }));
        assert!(!loading.complete(), "a frame loading may be the page's");
        loading.observe("Page.loadEventFired", &json!({}));
        loading.observe(
            "Page.frameNavigated",
            &json!({ "frame": { "id": "child", "parentId": "main" } }),
        );
        assert!(loading.complete(), "a child frame's commit follows its start");
        loading.observe("Page.frameNavigated", &json!({ "frame": { "id": "main" } }));
        assert!(!loading.complete(), "the main frame committed a new document");
    }

    #[test]
    fn the_pages_answer_is_kept_only_if_nothing_started_loading_since_it_was_asked() {
        let loading = Loading::default();
        let asked = loading.now();
        loading.complete_since(asked);
        assert!(loading.complete());

        let asked = loading.now();
        loading.observe("Page.frameStartedLoading", &json!({ "frameId": "main" }));
        loading.complete_since(asked);
        assert!(!loading.complete(), "a navigation began after the page answered");
    }

    #[tokio::test]
    async fn a_requested_navigation_is_waited_for_until_it_commits_or_downloads() {
        let loading = Loading::default();
        let quick = Duration::from_millis(1);
        assert!(loading.requested_ended(quick).await, "nothing requested");
        let asked = |frame: &str, disposition: &str| json!({ "frameId": frame, "reason": "formSubmissionPost", "url": "http://a.test/x", "disposition": disposition });
        loading.observe("Page.frameRequestedNavigation", &asked("main", "newTab"));
        assert!(
            loading.requested_ended(quick).await,
            "another tab's is not this tab's"
        );
        loading.observe("Page.frameRequestedNavigation", &asked("main", "currentTab"));
        loading.observe("Page.frameRequestedNavigation", &asked("child", "currentTab"));
        loading.observe("Page.frameStartedLoading", &json!({ "frameId": "main" }));
        assert!(!loading.requested_ended(quick).await, "started is not ended");
        loading.observe(
            "Page.downloadWillBegin",
            &json!({ "frameId": "main", "guid": "g" }),
        );
        assert!(!loading.requested_ended(quick).await, "the child's still goes");
        let waiting = loading.requested_ended(Duration::from_secs(5));
        let ending = async {
            tokio::task::yield_now().await;
            loading.observe(
                "Page.frameNavigated",
                &json!({ "frame": { "id": "child", "parentId": "main" } }),
            );
        };
        let (ended, ()) = tokio::join!(waiting, ending);
        assert!(ended, "a commit ends it");
    }
}
