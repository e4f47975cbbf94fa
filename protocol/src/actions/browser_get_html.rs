//! `browser_get_html`: the live DOM's HTML, stored as an artifact.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::{Element, TabId};
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Get HTML",
    category: Category::Extract,
    description:
        "Stores the live DOM's HTML (the whole document, or one element's outerHTML) as a text/html artifact; HTML of at most 8 KiB also comes in the result itself (html).",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// The tab to act on: the tabId session_start returned, or one in a click's openedTabIds.
    pub tab_id: TabId,
    /// One element instead of the whole document.
    #[serde(default)]
    pub xpath: Option<String>,
    /// In place of xpath: the element's ref (eN), as browser_snapshot or browser_xpath_scan returns it.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub r#ref: Option<String>,
}

crate::tab_action_params!(check = |p| { Element::named(&p.xpath, &p.r#ref).map(drop) });

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// The stored artifact's id.
    pub artifact_id: String,
    /// Where to fetch the artifact; presigned, so it can be handed on as it is.
    pub url: String,
    /// Size of the HTML in bytes.
    pub bytes: u64,
    /// The HTML itself, when it is at most [`INLINE_LIMIT`] bytes: a small document or element
    /// is in the caller's hands without a second request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub html: Option<String>,
}

/// The largest HTML a result carries itself (8 KiB): enough for an element or a small page,
/// little enough that results kept for replay stay small.
pub const INLINE_LIMIT: usize = 8 * 1024;
