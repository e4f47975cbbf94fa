//! `browser_hover`: rests the pointer on an element, once nothing covers it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::{DialogAnswer, Element, TabId};
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Hover",
    category: Category::Interact,
    description: "Scrolls the element into view and moves the pointer onto its centre with a real mouse event, so what opens on hover (menus, tooltips) opens and stays open until the next pointer action. If something covers it: ELEMENT_NOT_INTERACTABLE saying what, with details.coveredBy.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// The tab to act on: the tabId session_start returned, or one in a click's openedTabIds.
    pub tab_id: TabId,
    /// The element to hover, as browser_snapshot or browser_xpath_scan returns it (or any XPath).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xpath: Option<String>,
    /// In place of xpath: the element's ref (eN), as browser_snapshot or browser_xpath_scan returns it.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub r#ref: Option<String>,
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
    pub hovered: bool,
}
