//! `browser_select_option`: picks options of a `<select>` as a person would.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Select option",
    category: Category::Interact,
    description: "Makes values the whole selection of a <select> (option values, or visible labels where no value matches) and fires input and change as a person's pick does. An option that does not exist is INVALID_PARAMS listing the options; an element that is not a select is ELEMENT_NOT_INTERACTABLE.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};

crate::element_params!(
    xpath = "The <select>, as browser_snapshot or browser_xpath_scan returns it (or any XPath).",
    /// The new selection: one value for a plain select, any number for a multiple one.
    pub values: Vec<String>,
);

crate::tab_action_params!(dialog, observe, element);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// The values of the options selected now.
    pub selected: Vec<String>,
}
