//! `browser_screenshot`: the viewport or the whole page, stored as an image artifact.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::{Element, ImageFormat, TabId};
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Screenshot",
    category: Category::Extract,
    description: "Captures the visible part of the page (or all of it), without scrollbars, and stores it as an artifact.",
    waits_for: None,
    reads_as: ReadsAs::Image,
    example: None,
};

/// JPEG quality when `quality` is absent.
pub const DEFAULT_JPEG_QUALITY: u8 = 80;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// The tab to act on: the tabId session_start returned, or one in a click's openedTabIds.
    pub tab_id: TabId,
    /// Capture the whole page, not just the viewport.
    #[serde(default)]
    pub full_page: bool,
    /// "png" or "jpeg".
    #[serde(default)]
    pub format: ImageFormat,
    /// JPEG quality, 0-100 (jpeg only).
    #[serde(default)]
    #[schemars(extend("default" = DEFAULT_JPEG_QUALITY))]
    #[schemars(range(max = 100))]
    pub quality: Option<u8>,
    /// Scale the image down to at most this many pixels wide; full size when absent.
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub max_width: Option<u32>,
    /// Capture just this element's box (any XPath), scrolled into view; the part of it the
    /// viewport shows.
    #[serde(default)]
    pub xpath: Option<String>,
    /// In place of xpath: the element's ref (eN), as browser_snapshot or browser_xpath_scan returns it.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub r#ref: Option<String>,
}

crate::tab_action_params!(
    check = |p| {
        if let Some(q) = p.quality {
            if q > 100 {
                return Err(format!("quality must be 0-100, got {q}"));
            }
            if p.format != ImageFormat::Jpeg {
                return Err("quality applies to format \"jpeg\" only".into());
            }
        }
        if Element::named(&p.xpath, &p.r#ref)?.is_some() && p.full_page {
            return Err("fullPage and an element do not go together: capture the page or one element".into());
        }
        match p.max_width {
            Some(0) => Err("maxWidth must be at least 1".into()),
            _ => Ok(()),
        }
    }
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// The stored artifact's id.
    pub artifact_id: String,
    /// Where to fetch the artifact; presigned, so it can be handed on as it is.
    pub url: String,
    /// Width of the returned image in pixels.
    pub width: u32,
    /// Height of the returned image in pixels.
    pub height: u32,
    /// "png" or "jpeg".
    pub format: ImageFormat,
    /// Size of the image in bytes.
    pub bytes: u64,
}
