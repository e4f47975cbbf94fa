//! `browser_debugger_attach`: attaches the debugger to a session tab explicitly.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{About, Category, ReadsAs};

pub use super::fields::OnTab as Params;

pub const ABOUT: About = About {
    label: "Attach debugger",
    category: Category::Session,
    description: "Attaches the debugger to a session tab (actions attach on their own; use this to reattach explicitly).",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// Always true.
    pub attached: bool,
}
