//! `session_start`: opens the session's tab in the background, in its tab group, and
//! navigates it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::{check_url, TabId};
use super::{About, ActionParams, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Start session",
    category: Category::Session,
    description: "Opens the session's tab in the background (the user's tab keeps the focus), in a tab group where the browser has groups, and navigates it. Returns once the navigation committed; call browser_wait_for_loaded before reading the page.",
    waits_for: Some("is opening the session's tab"),
    reads_as: ReadsAs::Json,
    example: Some(r#"{"url": "https://example.com"}"#),
};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// The page to open; about:blank when absent.
    #[serde(default, deserialize_with = "super::fields::typed_url_opt")]
    pub url: Option<String>,
    /// Reuse the session's tab if it is still open, instead of opening another.
    #[serde(default)]
    pub reuse_existing_tab: bool,
    /// Title of the tab group the session's tabs go in.
    #[serde(default)]
    pub group_title: Option<String>,
}

impl ActionParams for Params {
    fn tab_id(&self) -> Option<TabId> {
        None
    }

    fn check(&self) -> Result<(), String> {
        self.url.as_deref().map_or(Ok(()), check_url)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// The session's tab: pass it to every other action.
    pub tab_id: TabId,
    /// The tab's window (-1 when the browser names none).
    pub window_id: i64,
    /// The tab group, where the browser has groups.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<i64>,
    /// The URL the tab shows.
    pub url: String,
    /// The page title, when it already has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}
