//! `browser_scroll`: scrolls the page or an element with the mouse wheel, or brings an
//! element into view.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::Element;
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Scroll",
    category: Category::Interact,
    description: "Scrolls with real mouse-wheel events over the page (or over the element at xpath), so lists that load on scroll load; or, with intoView, brings the element into view. Returns the scroll position afterwards and whether there is nothing more to scroll that way.",
    waits_for: Some("is scrolling and waiting for more to load"),
    reads_as: ReadsAs::Json,
    example: None,
};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    #[default]
    Down,
    Up,
    Left,
    Right,
}

crate::page_params!(
    /// The element to scroll (any XPath); the page when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xpath: Option<String>,
    /// In place of xpath: the element's ref (eN), as browser_snapshot or browser_xpath_scan returns it.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub r#ref: Option<String>,
    /// "down", "up", "left" or "right".
    #[serde(default)]
    #[schemars(extend("default" = "down"))]
    pub direction: Direction,
    /// How far, in CSS pixels; 90 % of the viewport's height (or width) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub amount: Option<f64>,
    /// Bring the element (xpath or ref) into view instead of scrolling it.
    #[serde(default)]
    pub into_view: bool,
);

crate::tab_action_params!(
    observe,
    check = |p| {
        if Element::named(&p.xpath, &p.r#ref)?.is_none() && p.into_view {
            return Err("intoView needs the element to bring into view: its xpath or ref".into());
        }
        match p.amount {
            Some(a) if !(a.is_finite() && a > 0.0) => {
                Err(format!("amount must be a positive number of CSS pixels, not {a}"))
            }
            _ => Ok(()),
        }
    }
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// The horizontal scroll position afterwards (of the element, when one was scrolled).
    pub scroll_x: f64,
    /// The vertical scroll position afterwards.
    pub scroll_y: f64,
    /// Nothing more to scroll that way.
    pub at_end: bool,
}
