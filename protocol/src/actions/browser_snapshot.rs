//! `browser_snapshot`: the page's Live Screen (docs/protocol.md §10), the page as compact Markdown
//! with every element a person could act on written in place as `[eN] role "name"`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::TabId;
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Snapshot (Live Screen)",
    category: Category::Extract,
    description: "The page as an agent should read it: compact Markdown with headings, condensed text, lists and small tables, and every element a person could act on written in place as [eN] role \"name\" with its state (= \"value\", checked, disabled, covered, a link's href). Pass a ref (eN) as ref to any element action. detail \"recent\" answers only what changed since this session's previous snapshot of the tab; \"gist\" a few lines. Hidden content and password values are never shown.",
    waits_for: None,
    reads_as: ReadsAs::Markdown,
    example: None,
};

/// `maxChars` when absent.
pub const DEFAULT_MAX_CHARS: u32 = 24_000;

/// The shortest `maxChars` that leaves room for a header and the closing line.
pub const MIN_MAX_CHARS: u32 = 200;

/// How much of the page a snapshot covers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SnapshotScope {
    #[default]
    Document,
    Viewport,
}

/// How much a snapshot says (seed 004's levels).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Detail {
    /// The page as it is now.
    #[default]
    Live,
    /// What changed since the session's previous snapshot of the tab.
    Recent,
    /// A few lines: title, URL, main heading, counts, where the viewport is.
    Gist,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// The tab to act on: the tabId session_start returned, or one in a click's openedTabIds.
    pub tab_id: TabId,
    /// "document" (the whole page) or "viewport" (what is on screen).
    #[serde(default)]
    pub scope: SnapshotScope,
    /// "live" (the page now), "recent" (changes since this session's previous snapshot of the tab) or "gist" (a few lines).
    #[serde(default)]
    pub detail: Detail,
    /// Cut the Markdown at a block boundary past this many characters, with a closing line saying what was left out.
    #[serde(default)]
    #[schemars(extend("default" = DEFAULT_MAX_CHARS))]
    #[schemars(range(min = MIN_MAX_CHARS))]
    pub max_chars: Option<u32>,
}

impl Params {
    pub fn max_chars(&self) -> usize {
        self.max_chars.unwrap_or(DEFAULT_MAX_CHARS) as usize
    }
}

crate::tab_action_params!(
    check = |p| {
        match p.max_chars {
            Some(n) if n < MIN_MAX_CHARS => Err(format!(
            "maxChars must be at least {MIN_MAX_CHARS}, got {n}; omit it for the default {DEFAULT_MAX_CHARS}"
        )),
            _ => Ok(()),
        }
    }
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// The snapshot as Markdown.
    pub markdown: String,
    /// The tab's URL.
    pub url: String,
    /// The page's title.
    pub title: String,
    /// How many refs (eN) the Markdown names.
    pub refs: u32,
    /// Grows with each snapshot of the tab.
    pub version: u64,
    /// Whether the Markdown was cut at maxChars.
    pub truncated: bool,
}
