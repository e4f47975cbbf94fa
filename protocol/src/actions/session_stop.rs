//! `session_stop`: ends the session, closing its tabs or leaving them for a later start.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::{default_true, TabId};
use super::{About, ActionParams, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Stop session",
    category: Category::Session,
    description: "Ends the session: closes its tabs, or with closeTab false leaves them open and detached for a later session_start with reuseExistingTab.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// Close the session's tabs.
    #[serde(default = "default_true")]
    pub close_tab: bool,
}

impl ActionParams for Params {
    fn tab_id(&self) -> Option<TabId> {
        None
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// Always true.
    pub stopped: bool,
}
