//! `browser_downloads`: the files the session's tabs downloaded, each stored as an artifact.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::{check_timeout, TabId};
use super::{About, ActionParams, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Downloads",
    category: Category::Extract,
    description: "Lists the files the session's tabs downloaded (or one tab's, with tabId), oldest first: each with its name, size, the URL it came from, its state (complete, failed, in_progress) and, once complete, the artifact holding it. With wait true it waits (up to timeoutMs, default 30 s) for the downloads in progress to end, or for the next one to start and end when none is in progress. A file over the artifact limit is listed failed, with the limit in error.",
    waits_for: Some("is waiting for a download to finish"),
    reads_as: ReadsAs::Json,
    example: Some(r#"{"wait": true}"#),
};

/// How long `wait` waits unless told.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// Only this tab's downloads; all the session's tabs' when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab_id: Option<TabId>,
    /// Wait for the downloads in progress to end, or for the next one to start and end.
    #[serde(default)]
    pub wait: bool,
    /// How long wait waits, in ms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = DEFAULT_TIMEOUT_MS))]
    #[schemars(range(min = 1, max = crate::actions::fields::MAX_TIMEOUT_MS))]
    pub timeout_ms: Option<u64>,
}

impl ActionParams for Params {
    fn tab_id(&self) -> Option<TabId> {
        self.tab_id
    }

    fn check(&self) -> Result<(), String> {
        check_timeout(self.timeout_ms)
    }
}

/// Where a download stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum State {
    InProgress,
    Complete,
    Failed,
}

/// One download.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Download {
    /// The file's name, as the page or the server named it.
    pub name: String,
    /// Its size so far (all of it once complete).
    pub bytes: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Where the page downloaded it from.
    pub url: String,
    /// The artifact holding the file, once complete.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_id: Option<String>,
    /// Where to fetch that artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_url: Option<String>,
    pub state: State,
    /// Why a failed download failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// Oldest first.
    pub downloads: Vec<Download>,
}
