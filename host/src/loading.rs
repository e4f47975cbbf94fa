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

use std::sync::Mutex;

use serde_json::Value;

/// What the tab's events said last.
#[derive(Default)]
pub struct Loading {
    state: Mutex<Seen>,
}

#[derive(Default, Clone, Copy)]
struct Seen {
    /// Counts the signs of loading, so an answer the page gave can be kept only if no sign
    /// came since the question was asked.
    generation: u64,
    complete: bool,
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
    /// loading, or a main frame that commits a new document, is a sign of loading.
    pub fn observe(&self, method: &str, params: &Value) {
        match method {
            "Page.loadEventFired" => self.seen().complete = true,
            "Page.frameStartedLoading" => self.loading(),
            "Page.frameNavigated" if params.pointer("/frame/parentId").is_none() => self.loading(),
            _ => {}
        }
    }

    /// Something may have started loading unseen (events were missed).
    pub fn loading(&self) {
        let mut seen = self.seen();
        seen.generation += 1;
        seen.complete = false;
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
}
