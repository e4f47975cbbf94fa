//! `browser_readability_extract`: the page's main content as text and Markdown.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{About, Category, ReadsAs};

pub use super::fields::OnTab as Params;

pub const ABOUT: About = About {
    label: "Extract article",
    category: Category::Extract,
    description: "Finds the page's main content as Mozilla Readability would, in the live DOM, and returns it as plain text and Markdown, without navigation, sidebars, ads or footers.",
    waits_for: None,
    reads_as: ReadsAs::Article,
    example: None,
};

/// How much of `text` a result carries inline; the whole text goes to an artifact past it.
pub const INLINE_TEXT_LIMIT: usize = 256 * 1024;

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// The article's title.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The article as plain text, one line per block, blank lines between paragraphs; its first 256 KiB when longer.
    pub text: String,
    /// The article as Markdown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub markdown: Option<String>,
    /// The author line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byline: Option<String>,
    /// A short summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
    /// When text is over 256 KiB: the whole text as a text/plain artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_id: Option<String>,
    /// Where to fetch that artifact.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}
