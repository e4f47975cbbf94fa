//! `browser_navigate`: loads a URL in the tab and waits for its load event.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::{check_timeout, check_url, DialogAnswer};
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Navigate",
    category: Category::Page,
    description: "Loads a URL in the tab and waits for its load event. An HTTP error page is a success carrying httpStatus; only a navigation that fails (refused, DNS, aborted) is NAVIGATION_FAILED.",
    waits_for: Some("is waiting for the page to load"),
    reads_as: ReadsAs::Json,
    example: None,
};

/// The wait for the load event when `timeoutMs` is absent: below the relay's 30 s action
/// timeout, so a slow page is reported as `"loading"` rather than lost to `ACTION_TIMEOUT`.
pub const DEFAULT_TIMEOUT_MS: u64 = super::fields::LOAD_TIMEOUT_MS;

crate::page_params!(
    /// The page to open: an absolute URL, or an address as typed into the address bar
    /// (example.com, localhost:8080/a).
    #[serde(deserialize_with = "crate::actions::fields::typed_url")]
    pub url: String,
    /// How long to wait for the load event; past it the result says status "loading".
    #[serde(default)]
    #[schemars(extend("default" = DEFAULT_TIMEOUT_MS))]
    #[schemars(range(min = 1, max = crate::actions::fields::MAX_TIMEOUT_MS))]
    pub timeout_ms: Option<u64>,
    /// How to answer the JavaScript dialogs that open during this action; when absent, alert
    /// and beforeunload are accepted, confirm and prompt dismissed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialog: Option<DialogAnswer>,
);

crate::tab_action_params!(
    dialog,
    observe,
    check = |p| {
        check_url(&p.url)?;
        check_timeout(p.timeout_ms)
    }
);

/// Whether the load event came within the wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LoadStatus {
    Complete,
    Loading,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// The URL the tab shows.
    pub url: String,
    /// The page title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// "complete", or "loading" when the load event had not come within timeoutMs.
    pub status: LoadStatus,
    /// The HTTP status of the page's response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
}
