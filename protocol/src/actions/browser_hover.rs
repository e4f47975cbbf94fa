//! `browser_hover`: rests the pointer on an element, once nothing covers it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::{check_xpath, TabId};
use super::{About, ActionParams, Category};

pub const ABOUT: About = About {
    label: "Hover",
    category: Category::Interact,
    description: "Scrolls the element into view and moves the pointer onto its centre with a real mouse event, so what opens on hover (menus, tooltips) opens and stays open until the next pointer action. If something covers it: ELEMENT_NOT_INTERACTABLE saying what, with details.coveredBy.",
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// The tab to act on: the tabId session_start returned, or one in a click's openedTabIds.
    pub tab_id: TabId,
    /// The element to hover, as browser_xpath_scan returns it (or any XPath).
    pub xpath: String,
}

impl ActionParams for Params {
    fn tab_id(&self) -> Option<TabId> {
        Some(self.tab_id)
    }

    fn check(&self) -> Result<(), String> {
        check_xpath(&self.xpath)
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// Always true.
    pub hovered: bool,
}
