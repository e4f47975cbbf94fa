//! `browser_secrets`: the names of the secrets the browser's owner holds, and where each may
//! be typed. Never a value.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::TabId;
use super::{About, ActionParams, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Secrets",
    category: Category::Session,
    description: "Lists the secrets (passwords, tokens) the browser's owner holds for agents: each name with the origins it may be typed into. Type one with browser_type or browser_fill_form, giving secret: its name in place of the text; the value is typed only into a page of one of its origins and never appears in any result, log or snapshot.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {}

impl ActionParams for Params {
    fn tab_id(&self) -> Option<TabId> {
        None
    }
}

/// A secret as an agent may know it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Named {
    /// What browser_type and browser_fill_form take as secret.
    pub name: String,
    /// The origins (such as https://example.com) whose pages it may be typed into.
    pub origins: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// Each secret's name and origins.
    pub secrets: Vec<Named>,
}
