//! `browser_pdf`: the page printed to a PDF artifact.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::TabId;
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "PDF",
    category: Category::Extract,
    description: "Prints the page as the browser's print dialog would, to a PDF artifact (A4 or Letter, portrait or landscape, backgrounds printed unless told not to). The result has the artifact's url, its page count and size. UNSUPPORTED where the browser will not print for this mode.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};

/// The paper a PDF is printed on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Paper {
    #[default]
    A4,
    Letter,
}

impl Paper {
    /// Width and height in inches, portrait.
    pub fn inches(self) -> (f64, f64) {
        match self {
            Self::A4 => (8.27, 11.69),
            Self::Letter => (8.5, 11.0),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// The tab to act on: the tabId session_start returned, or one in a click's openedTabIds.
    pub tab_id: TabId,
    /// Print across the long side of the paper.
    #[serde(default)]
    pub landscape: bool,
    /// Print background colors and images.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = true))]
    pub print_background: Option<bool>,
    /// "A4" or "Letter".
    #[serde(default)]
    #[schemars(extend("default" = "A4"))]
    pub paper: Paper,
}

crate::tab_action_params!();

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// The stored artifact's id (application/pdf).
    pub artifact_id: String,
    /// Where to fetch the artifact; presigned, so it can be handed on as it is.
    pub url: String,
    /// How many pages it has.
    pub pages: u32,
    /// Its size in bytes.
    pub bytes: u64,
}
