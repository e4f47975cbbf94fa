//! `browser_hover`: rests the pointer on an element, once nothing covers it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Hover",
    category: Category::Interact,
    description: "Scrolls the element into view and moves the pointer onto it (the middle of its first box fragment) with a real mouse event, so what opens on hover (menus, tooltips) opens and stays open until the next pointer action. If something covers it, before or once the pointer is there: ELEMENT_NOT_INTERACTABLE saying what, with details.coveredBy.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};

crate::element_params!(
    xpath = "The element to hover, as browser_snapshot or browser_xpath_scan returns it (or any XPath).",
);

crate::tab_action_params!(dialog, observe, element);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// Always true.
    pub hovered: bool,
}
