//! `browser_wait_for_loaded`: waits until the page finished loading.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::{check_timeout, TabId};
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Wait for page load",
    category: Category::Page,
    description: "Waits until the page finished loading (document.readyState complete, load event fired). Past timeoutMs: ACTION_TIMEOUT.",
    waits_for: Some("is waiting for the page to finish loading"),
    reads_as: ReadsAs::Json,
    example: None,
};

/// The wait when `timeoutMs` is absent.
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// The tab to act on: the tabId session_start returned, or one in a click's openedTabIds.
    pub tab_id: TabId,
    /// How long to wait.
    #[serde(default)]
    #[schemars(extend("default" = DEFAULT_TIMEOUT_MS))]
    #[schemars(range(min = 1, max = crate::actions::fields::MAX_TIMEOUT_MS))]
    pub timeout_ms: Option<u64>,
}

crate::tab_action_params!(check = |p| { check_timeout(p.timeout_ms) });

/// Only ever `complete`: a page that does not load in time is `ACTION_TIMEOUT`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Loaded {
    Complete,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// Always "complete".
    pub status: Loaded,
}
