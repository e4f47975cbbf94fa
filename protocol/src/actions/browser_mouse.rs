//! `browser_mouse`: one low-level pointer step at a point of the viewport, for canvases and
//! widgets that no element names.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::browser_click::MouseButton;
use super::fields::DialogAnswer;
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Mouse",
    category: Category::Interact,
    description: "One pointer step at x, y (viewport CSS pixels) with a real mouse event: move, down, up or wheel (deltaX, deltaY). The pointer stays where it was left and a button stays held until its up (an up for a button not held does nothing), so down, moves and up draw a stroke on a canvas as a person's hand would. For elements, browser_click, browser_hover and browser_drag aim for you.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: Some(r#"{"tabId": 123, "action": "move", "x": 200, "y": 150}"#),
};

/// What the pointer does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum MouseStep {
    Move,
    Down,
    Up,
    Wheel,
}

crate::page_params!(
    /// "move", "down", "up" or "wheel".
    pub action: MouseStep,
    /// Viewport CSS pixels from the left.
    pub x: f64,
    /// Viewport CSS pixels from the top.
    pub y: f64,
    /// The button pressed or released: "left", "right" or "middle".
    #[serde(default)]
    #[schemars(extend("default" = "left"))]
    pub button: MouseButton,
    /// For wheel: CSS pixels to scroll right (negative: left).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_x: Option<f64>,
    /// For wheel: CSS pixels to scroll down (negative: up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta_y: Option<f64>,
    /// How to answer the JavaScript dialogs that open during this action; when absent, alert
    /// and beforeunload are accepted, confirm and prompt dismissed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialog: Option<DialogAnswer>,
);

crate::tab_action_params!(
    dialog,
    observe,
    check = |p| {
        if !(p.x >= 0.0 && p.y >= 0.0 && p.x.is_finite() && p.y.is_finite()) {
            return Err("x and y are CSS pixels in the viewport: 0 or more".into());
        }
        let deltas = [p.delta_x, p.delta_y];
        match p.action {
            MouseStep::Wheel if deltas.iter().all(Option::is_none) => {
                Err("wheel needs deltaX or deltaY (CSS pixels to scroll)".into())
            }
            MouseStep::Wheel if deltas.iter().flatten().any(|d| !d.is_finite()) => {
                Err("deltaX and deltaY are CSS pixels: finite numbers".into())
            }
            MouseStep::Wheel => Ok(()),
            _ if deltas.iter().any(Option::is_some) => Err("deltaX and deltaY are for wheel only".into()),
            _ => Ok(()),
        }
    }
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// Always true.
    pub done: bool,
}
