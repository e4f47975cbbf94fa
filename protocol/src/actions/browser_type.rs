//! `browser_type`: types text into a field with real input events.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::default_true;
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Type text",
    category: Category::Interact,
    description: "Focuses an input, textarea or contenteditable element and types text with real input events, so the page's own handlers see it.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};

crate::element_params!(
    xpath = "The field to type into, as browser_snapshot or browser_xpath_scan returns it (or any XPath).",
    /// The text to type.
    pub text: String,
    /// Press Enter afterwards.
    #[serde(default)]
    pub submit: bool,
    /// Replace the field's content (true) or append at its end (false).
    #[serde(default = "default_true")]
    pub clear: bool,
);

crate::tab_action_params!(dialog, observe, element);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// Always true.
    pub typed: bool,
}
