//! `browser_click`: presses an element with real mouse events, once nothing covers it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::{Element, ElementSeen, TabId};
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Click",
    category: Category::Interact,
    description: "Scrolls the element into view, moves the pointer onto it and clicks it with real mouse events (any button, 1-3 clicks, with modifiers held), or clicks at x, y in the viewport. The point is the middle of the element's first box fragment (a wrapped link is pressed on its text), checked again once the pointer rests there. If something covers the element, nothing is clicked: ELEMENT_NOT_INTERACTABLE says what, with details.coveredBy. The result names the element the press reached (pressed).",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MouseButton {
    #[default]
    Left,
    Right,
    Middle,
}

impl MouseButton {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Left => "left",
            Self::Right => "right",
            Self::Middle => "middle",
        }
    }

    /// Its bit in a mouse event's `buttons`.
    pub fn bit(self) -> u32 {
        match self {
            Self::Left => 1,
            Self::Right => 2,
            Self::Middle => 4,
        }
    }
}

/// A modifier key held during the click.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ModifierKey {
    Alt,
    Control,
    Meta,
    Shift,
}

impl ModifierKey {
    /// Its bit in CDP's `modifiers` field.
    pub fn bit(self) -> u32 {
        match self {
            Self::Alt => 1,
            Self::Control => 2,
            Self::Meta => 4,
            Self::Shift => 8,
        }
    }
}

crate::element_params!(
    xpath = "The element to click, as browser_snapshot or browser_xpath_scan returns it (or any XPath); or give x and y.",
    /// "left", "right" or "middle".
    #[serde(default)]
    #[schemars(extend("default" = "left"))]
    pub button: MouseButton,
    /// 1 to 3 (2 is a double click).
    #[serde(default = "one")]
    #[schemars(range(min = 1, max = 3))]
    pub click_count: u8,
    /// Keys held during the click: "Alt", "Control", "Meta", "Shift".
    #[serde(default)]
    pub modifiers: Vec<ModifierKey>,
    /// With y, in place of xpath or ref: a point in the viewport, in CSS pixels.
    #[serde(default)]
    pub x: Option<f64>,
    /// With x.
    #[serde(default)]
    pub y: Option<f64>,
);

fn one() -> u8 {
    1
}

impl Params {
    /// The modifiers as CDP's bit field.
    pub fn modifier_bits(&self) -> u32 {
        self.modifiers.iter().fold(0, |bits, m| bits | m.bit())
    }
}

crate::tab_action_params!(
    dialog,
    observe,
    check = |p| {
        if !(1..=3).contains(&p.click_count) {
            return Err(format!("clickCount must be 1 to 3, not {}", p.click_count));
        }
        match (Element::named(&p.xpath, &p.r#ref)?, p.x, p.y) {
            (Some(_), None, None) => Ok(()),
            (None, Some(x), Some(y)) if x >= 0.0 && y >= 0.0 && x.is_finite() && y.is_finite() => Ok(()),
            (None, Some(_), Some(_)) => Err("x and y are CSS pixels in the viewport: 0 or more".into()),
            _ => Err("give the element (its xpath or ref), or x and y, not both".into()),
        }
    }
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// Always true.
    pub clicked: bool,
    /// Tabs the click opened (they join the session).
    pub opened_tab_ids: Vec<TabId>,
    /// The element the press reached: for an element target, that element or one inside it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pressed: Option<ElementSeen>,
}
