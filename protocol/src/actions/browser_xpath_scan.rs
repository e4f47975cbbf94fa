//! `browser_xpath_scan`: what a person could interact with, each with an XPath to act on.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::fields::{BBox, TabId};
use super::{About, ActionParams, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Scan interactive elements",
    category: Category::Extract,
    description: "Lists what a person could interact with (links, buttons, inputs, selects, textareas, contenteditable, clickable elements, interactive ARIA roles), rendered ones only, in document order, each with an XPath and a ref (eN) that every element action accepts. Iframes (cross-origin ones too: their XPaths go through the frame's element) and open shadow roots are included.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ScanScope {
    #[default]
    Viewport,
    Document,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// The tab to act on: the tabId session_start returned, or one in a click's openedTabIds.
    pub tab_id: TabId,
    /// "viewport" (what is on screen) or "document" (the whole page).
    #[serde(default)]
    pub scope: ScanScope,
}

impl ActionParams for Params {
    fn tab_id(&self) -> Option<TabId> {
        Some(self.tab_id)
    }
}

/// One element a person could interact with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScannedElement {
    pub xpath: String,
    /// The element's ref (eN): accepted in place of xpath for as long as the element stays in
    /// its document.
    #[serde(rename = "ref")]
    pub r#ref: String,
    pub tag: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bbox: Option<BBox>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attributes: Option<Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occluded: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// Each { xpath, tag, text?, bbox? {x,y,w,h} in CSS pixels of the viewport, role?, name?, attributes?, occluded? (true when something covers its centre) }.
    pub elements: Vec<ScannedElement>,
}
