//! `browser_debugger_attach`: attaches the debugger to a session tab explicitly.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::TabId;
use super::{About, ActionParams, Category};

pub const ABOUT: About = About {
    label: "Attach debugger",
    category: Category::Session,
    description: "Attaches the debugger to a session tab (actions attach on their own; use this to reattach explicitly).",
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// The tab to act on: the tabId session_start returned, or one in a click's openedTabIds.
    pub tab_id: TabId,
}

impl ActionParams for Params {
    fn tab_id(&self) -> Option<TabId> {
        Some(self.tab_id)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// Always true.
    pub attached: bool,
}
