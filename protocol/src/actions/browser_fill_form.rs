//! `browser_fill_form`: many fields set in one action, each as a person would set it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::{DialogAnswer, Element};
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Fill form",
    category: Category::Interact,
    description: "Sets up to 100 fields in one action, in order, each as browser_type, browser_select_option or a click would set it (the page sees a person's input): a string for text fields, textareas, contenteditable and selects (value or label), true/false for checkboxes and radios, an array of strings for a <select multiple>. Then clicks submit, if given. The first field that fails ends the action: its error says which (details.field, 0-based) and which were set before it (details.filled).",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: Some(r#"{"tabId": 123, "fields": [{"ref": "e3", "value": "Ada"}, {"ref": "e5", "value": true}], "submit": {"ref": "e9"}}"#),
};

/// What a field is set to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum FieldValue {
    /// Checked or not: a checkbox or a radio.
    Checked(bool),
    /// Text typed, or the option chosen (its value or label).
    Text(String),
    /// The options of a `<select multiple>` chosen (values or labels).
    Options(Vec<String>),
}

/// One field and what it is set to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Field {
    /// The field, as browser_snapshot or browser_xpath_scan returns it (or any XPath).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xpath: Option<String>,
    /// In place of xpath: the field's ref (eN).
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub r#ref: Option<String>,
    /// A string, true/false, or an array of strings (see the description).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<FieldValue>,
    /// In place of value, for a text field: the name of a secret the browser's owner holds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
}

/// The element to click once every field is set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Submit {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xpath: Option<String>,
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub r#ref: Option<String>,
}

crate::page_params!(
    /// The fields to set, 1 to 100, in the order to set them.
    pub fields: Vec<Field>,
    /// The element to click after the last field: {"xpath"} or {"ref"}.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub submit: Option<Submit>,
    /// How to answer the JavaScript dialogs that open during this action; when absent, alert
    /// and beforeunload are accepted, confirm and prompt dismissed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialog: Option<DialogAnswer>,
);

/// How many fields one action sets at most.
pub const MAX_FIELDS: usize = 100;

crate::tab_action_params!(
    dialog,
    observe,
    check = |p| {
        if p.fields.is_empty() || p.fields.len() > MAX_FIELDS {
            return Err(format!(
                "fields takes 1 to {MAX_FIELDS} fields, not {}",
                p.fields.len()
            ));
        }
        for (index, field) in p.fields.iter().enumerate() {
            Element::required(&field.xpath, &field.r#ref).map_err(|why| format!("fields[{index}]: {why}"))?;
            match (&field.value, &field.secret) {
                (Some(_), Some(_)) => return Err(format!("fields[{index}]: give value or secret, not both")),
                (None, None) => {
                    return Err(format!(
                        "fields[{index}]: give its value (or secret: a secret's name)"
                    ))
                }
                _ => {}
            }
        }
        if let Some(submit) = &p.submit {
            Element::required(&submit.xpath, &submit.r#ref).map_err(|why| format!("submit: {why}"))?;
        }
        Ok(())
    }
);

/// A field that was set.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Filled {
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub r#ref: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xpath: Option<String>,
    /// Always true: a field that fails ends the action.
    pub ok: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// One per field, in order.
    pub filled: Vec<Filled>,
}
