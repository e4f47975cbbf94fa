//! `browser_console`: what the page wrote to its console, and what went wrong in it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::TabId;
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Console",
    category: Category::Extract,
    description: "Lists what the page wrote to its console since the tab joined the session, with uncaught exceptions, unhandled rejections and the browser's own messages (failed loads, security warnings): each entry with its seq, level, text, source, url and line. From level (default info) up, after since (the next of an earlier call: only what came later), with text in it, at most limit (default 100). The tab keeps its latest 1000 entries; dropped counts the ones after since it let go.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};

/// How serious a console entry is, lowest first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Debug,
    #[default]
    Info,
    Warning,
    Error,
}

/// Where a console entry came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The page's `console.*` calls.
    Console,
    /// An uncaught exception or unhandled rejection.
    Exception,
    /// The browser, about a load (a 404, a refused connection).
    Network,
    /// The browser, about anything else (security, deprecations, interventions).
    Browser,
}

/// How many entries a listing gives unless told.
pub const DEFAULT_LIMIT: u32 = 100;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// The tab to read: the tabId session_start returned, or one in a click's openedTabIds.
    pub tab_id: TabId,
    /// The lowest level listed: "debug", "info", "warning" or "error".
    #[serde(default)]
    #[schemars(extend("default" = "info"))]
    pub level: Level,
    /// A seq from an earlier call (its next): only entries after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<u64>,
    /// Only entries whose text contains this.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// At most this many entries, 1 to 500.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = DEFAULT_LIMIT))]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<u32>,
}

impl Params {
    pub fn limit(&self) -> u32 {
        self.limit.unwrap_or(DEFAULT_LIMIT)
    }
}

crate::tab_action_params!(
    check = |p| {
        match p.limit() {
            1..=500 => Ok(()),
            other => Err(format!("limit must be 1 to 500, not {other}")),
        }
    }
);

/// One console entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Its number in the tab, from 1; pass the last one listed as since to go on.
    pub seq: u64,
    pub level: Level,
    pub text: String,
    pub source: Source,
    /// The script or resource it is about.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Its line there, from 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// When it was written: RFC 3339 with milliseconds.
    pub time: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// Oldest first.
    pub entries: Vec<Entry>,
    /// The seq to pass as since to go on from here.
    pub next: u64,
    /// Entries after since that the tab's buffer had already let go.
    pub dropped: u64,
}
