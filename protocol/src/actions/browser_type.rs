//! `browser_type`: types text into a field with real input events.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::default_true;
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Type text",
    category: Category::Interact,
    description: "Focuses an input, textarea or contenteditable element and types text with real input events, so the page's own handlers see it. For a password or another secret the browser's owner holds, give secret (its name, from browser_secrets) in place of text: it is typed only into a page of one of its origins, and its value never appears in any result.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: Some(r#"{"tabId": 123, "ref": "e3", "text": "hello"}"#),
};

crate::element_params!(
    xpath = "The field to type into, as browser_snapshot or browser_xpath_scan returns it (or any XPath).",
    /// The text to type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// In place of text: the name of a secret the browser's owner holds (browser_secrets lists
    /// them), typed only into a page of one of its origins; its value is never shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// Press Enter afterwards.
    #[serde(default)]
    pub submit: bool,
    /// Replace the field's content (true) or append at its end (false).
    #[serde(default = "default_true")]
    pub clear: bool,
);

crate::tab_action_params!(
    dialog,
    observe,
    check = |p| {
        super::fields::Element::required(&p.xpath, &p.r#ref)?;
        match (&p.text, &p.secret) {
            (Some(_), Some(_)) => Err("give text or secret, not both".into()),
            (None, None) => Err("give the text to type (or secret: the name of a secret)".into()),
            _ => Ok(()),
        }
    }
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// Always true.
    pub typed: bool,
}
