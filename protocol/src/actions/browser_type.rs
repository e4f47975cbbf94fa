//! `browser_type`: types text into a field with real input events.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::{default_true, DialogAnswer, Element, TabId};
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Type text",
    category: Category::Interact,
    description: "Focuses an input, textarea or contenteditable element and types text with real input events, so the page's own handlers see it.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// The tab to act on: the tabId session_start returned, or one in a click's openedTabIds.
    pub tab_id: TabId,
    /// The field to type into, as browser_snapshot or browser_xpath_scan returns it (or any XPath).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xpath: Option<String>,
    /// In place of xpath: the element's ref (eN), as browser_snapshot or browser_xpath_scan returns it.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub r#ref: Option<String>,
    /// The text to type.
    pub text: String,
    /// Press Enter afterwards.
    #[serde(default)]
    pub submit: bool,
    /// Replace the field's content (true) or append at its end (false).
    #[serde(default = "default_true")]
    pub clear: bool,
    /// How to answer the JavaScript dialogs that open during this action; when absent, alert
    /// and beforeunload are accepted, confirm and prompt dismissed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialog: Option<DialogAnswer>,
}

crate::tab_action_params!(
    dialog,
    check = |p| { Element::required(&p.xpath, &p.r#ref).map(drop) }
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// Always true.
    pub typed: bool,
}
