//! `browser_evaluate`: runs the agent's own JavaScript in the page, when the host allows it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::fields::{check_timeout, DialogAnswer};
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Evaluate JavaScript",
    category: Category::Extract,
    description: "Evaluates expression as a page script (a returned Promise is awaited) and returns its JSON value and its typeof; a value over 256 KiB is stored as an artifact instead. A thrown error or rejected Promise is CDP_ERROR carrying its text, as is a value with no JSON form (a cycle). Off unless the host allows it (tether-host worker --allow-evaluate, or the browser owner's option in the extension): otherwise FORBIDDEN. Prefer the other actions: they act as a person would.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};

/// The wait when `timeoutMs` is absent.
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;

/// A value whose JSON is longer than this many bytes is stored as an artifact.
pub const MAX_INLINE_BYTES: usize = 256 * 1024;

crate::page_params!(
    /// JavaScript evaluated as a page script, e.g. "document.title" or "fetch('/api/me').then(r => r.json())".
    pub expression: String,
    /// How long it may run (a Promise included).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = DEFAULT_TIMEOUT_MS))]
    #[schemars(range(min = 1, max = crate::actions::fields::MAX_TIMEOUT_MS))]
    pub timeout_ms: Option<u64>,
    /// How to answer the JavaScript dialogs that open during this action; when absent, alert
    /// and beforeunload are accepted, confirm and prompt dismissed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialog: Option<DialogAnswer>,
);

crate::tab_action_params!(
    dialog,
    observe,
    check = |p| {
        if p.expression.trim().is_empty() {
            return Err("expression must not be empty".into());
        }
        check_timeout(p.timeout_ms)
    }
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// Any JSON value: the value as the browser returns it by value (undefined is null, a DOM
    /// node or function an empty object); absent when it was stored as an artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// JavaScript's typeof of the value (of the awaited value, for a Promise).
    #[serde(rename = "type")]
    pub kind: String,
    /// The stored JSON, when it was over 256 KiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_id: Option<String>,
    /// Where to fetch it; presigned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}
