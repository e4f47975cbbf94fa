//! `browser_select_option`: picks options of a `<select>` as a person would.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::{DialogAnswer, Element, TabId};
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Select option",
    category: Category::Interact,
    description: "Makes values the whole selection of a <select> (option values, or visible labels where no value matches) and fires input and change as a person's pick does. An option that does not exist is INVALID_PARAMS listing the options; an element that is not a select is ELEMENT_NOT_INTERACTABLE.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// The tab to act on: the tabId session_start returned, or one in a click's openedTabIds.
    pub tab_id: TabId,
    /// The <select>, as browser_snapshot or browser_xpath_scan returns it (or any XPath).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xpath: Option<String>,
    /// In place of xpath: the element's ref (eN), as browser_snapshot or browser_xpath_scan returns it.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub r#ref: Option<String>,
    /// The new selection: one value for a plain select, any number for a multiple one.
    pub values: Vec<String>,
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
    /// The values of the options selected now.
    pub selected: Vec<String>,
}
