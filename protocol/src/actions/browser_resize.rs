//! `browser_resize`: the viewport a tab's page sees: its size, pixel ratio, a phone's touch and
//! layout, a color scheme; or all of that undone.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::TabId;
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Resize viewport",
    category: Category::Page,
    description: "Sets the viewport the page sees: width and height (CSS pixels, 200-4000), deviceScaleFactor, mobile (touch, and a phone's layout: a page without a viewport meta tag lays out 980 px wide), colorScheme (light or dark, for prefers-color-scheme). Holds for the tab until reset: true, or until the session lets go of it. The result says what the page now sees.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: Some(r#"{"tabId": 123, "width": 390, "height": 844, "mobile": true}"#),
};

/// `prefers-color-scheme` as the page sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ColorScheme {
    Light,
    Dark,
}

impl ColorScheme {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Light => "light",
            Self::Dark => "dark",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// The tab to act on: the tabId session_start returned, or one in a click's openedTabIds.
    pub tab_id: TabId,
    /// The viewport's width in CSS pixels, 200 to 4000 (with height).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 200, max = 4000))]
    pub width: Option<u32>,
    /// The viewport's height in CSS pixels, 200 to 4000 (with width).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 200, max = 4000))]
    pub height: Option<u32>,
    /// Device pixels per CSS pixel, above 0 and at most 4.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 1))]
    #[schemars(range(max = 4))]
    pub device_scale_factor: Option<f64>,
    /// A phone: touch events, and the layout of a mobile viewport.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = false))]
    pub mobile: Option<bool>,
    /// "light" or "dark", as `prefers-color-scheme` answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color_scheme: Option<ColorScheme>,
    /// true: undo everything this action set on the tab (give no other params).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset: Option<bool>,
}

const SIZES: std::ops::RangeInclusive<u32> = 200..=4000;

crate::tab_action_params!(
    check = |p| {
        let set = [
            p.width.is_some(),
            p.height.is_some(),
            p.device_scale_factor.is_some(),
            p.mobile.is_some(),
            p.color_scheme.is_some(),
        ];
        if p.reset == Some(true) {
            return match set.iter().any(|given| *given) {
                true => Err("reset undoes everything; give it alone, with tabId".into()),
                false => Ok(()),
            };
        }
        match (p.width, p.height) {
            (Some(w), Some(h)) if SIZES.contains(&w) && SIZES.contains(&h) => {}
            (Some(w), Some(h)) => {
                let (name, bad) = if SIZES.contains(&w) {
                    ("height", h)
                } else {
                    ("width", w)
                };
                return Err(format!("{name} must be 200 to 4000 CSS pixels, not {bad}"));
            }
            (Some(_), None) => return Err("width needs height".into()),
            (None, Some(_)) => return Err("height needs width".into()),
            (None, None) => return Err("give width and height, or reset: true".into()),
        }
        match p.device_scale_factor {
            Some(scale) if !(scale > 0.0 && scale <= 4.0) => Err(format!(
                "deviceScaleFactor must be above 0 and at most 4, not {scale}"
            )),
            _ => Ok(()),
        }
    }
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// The page's `innerWidth` now.
    pub width: u32,
    /// The page's `innerHeight` now.
    pub height: u32,
    /// The page's `devicePixelRatio` now.
    pub device_scale_factor: f64,
}
