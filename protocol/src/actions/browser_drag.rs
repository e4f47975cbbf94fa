//! `browser_drag`: presses at one place, moves as a person's hand does, and releases at another.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::{Element, ElementSeen, Point};
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Drag",
    category: Category::Interact,
    description: "Drags with real pointer events: presses at the start (an element by xpath or ref, scrolled into view and hit-tested, or x, y in the viewport), moves in steps to the end (an element by toXpath or toRef, or toX, toY, or dx, dy from the start) and releases there. Sliders, sortable lists, resize handles, canvases and HTML5 drag and drop (draggable, dragstart/drop) all see a person's drag. The result says where it pressed and released, and what was under the pointer at the release (dropTarget).",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: Some(r#"{"tabId": 123, "ref": "e3", "toRef": "e7"}"#),
};

/// How many pointer moves a drag makes between press and release, unless told.
pub const DEFAULT_STEPS: u32 = 12;

crate::element_params!(
    xpath = "The element to press on, as browser_snapshot or browser_xpath_scan returns it (or any XPath); or give x and y.",
    /// With y, in place of xpath or ref: where to press, in viewport CSS pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub x: Option<f64>,
    /// With x.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub y: Option<f64>,
    /// The element to release on; or give toRef, toX and toY, or dx and dy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_xpath: Option<String>,
    /// In place of toXpath: the element's ref (eN).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_ref: Option<String>,
    /// With toY: where to release, in viewport CSS pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_x: Option<f64>,
    /// With toX.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to_y: Option<f64>,
    /// With dy: where to release, as an offset from the start in CSS pixels.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dx: Option<f64>,
    /// With dx.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dy: Option<f64>,
    /// Pointer moves between press and release, 1 to 100.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = DEFAULT_STEPS))]
    #[schemars(range(min = 1, max = 100))]
    pub steps: Option<u32>,
    /// A pause after the press, 0 to 2000 ms (for widgets that start a drag on a long press).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = 0))]
    #[schemars(range(max = 2000))]
    pub hold_ms: Option<u64>,
);

/// Where a drag starts or ends, once its params are read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Spot<'a> {
    At(Element<'a>),
    Point(f64, f64),
    /// Only an end: an offset from the start.
    By(f64, f64),
}

impl Params {
    /// Where the drag starts.
    pub fn start(&self) -> Result<Spot<'_>, String> {
        match (
            Element::named(&self.xpath, &self.r#ref)?,
            point("x", self.x, "y", self.y)?,
        ) {
            (Some(at), None) => Ok(Spot::At(at)),
            (None, Some((x, y))) => Ok(Spot::Point(x, y)),
            _ => Err("give the start once: xpath, ref, or x and y".into()),
        }
    }

    /// Where the drag ends.
    pub fn end(&self) -> Result<Spot<'_>, String> {
        let at =
            Element::named(&self.to_xpath, &self.to_ref).map_err(|why| format!("toXpath/toRef: {why}"))?;
        let point = point("toX", self.to_x, "toY", self.to_y)?;
        let by = offset(self.dx, self.dy)?;
        match (at, point, by) {
            (Some(at), None, None) => Ok(Spot::At(at)),
            (None, Some((x, y)), None) => Ok(Spot::Point(x, y)),
            (None, None, Some((dx, dy))) => Ok(Spot::By(dx, dy)),
            _ => Err("give the end once: toXpath, toRef, toX and toY, or dx and dy".into()),
        }
    }

    pub fn steps(&self) -> u32 {
        self.steps.unwrap_or(DEFAULT_STEPS)
    }
}

/// A point given as two params, both or neither; CSS pixels in the viewport.
fn point(x_name: &str, x: Option<f64>, y_name: &str, y: Option<f64>) -> Result<Option<(f64, f64)>, String> {
    match (x, y) {
        (None, None) => Ok(None),
        (Some(x), Some(y)) if x >= 0.0 && y >= 0.0 && x.is_finite() && y.is_finite() => Ok(Some((x, y))),
        (Some(_), Some(_)) => Err(format!(
            "{x_name} and {y_name} are CSS pixels in the viewport: 0 or more"
        )),
        (Some(_), None) => Err(format!("{x_name} needs {y_name}")),
        (None, Some(_)) => Err(format!("{y_name} needs {x_name}")),
    }
}

fn offset(dx: Option<f64>, dy: Option<f64>) -> Result<Option<(f64, f64)>, String> {
    match (dx, dy) {
        (None, None) => Ok(None),
        (Some(dx), Some(dy)) if dx.is_finite() && dy.is_finite() => Ok(Some((dx, dy))),
        (Some(_), Some(_)) => Err("dx and dy are CSS pixels: finite numbers".into()),
        (Some(_), None) => Err("dx needs dy".into()),
        (None, Some(_)) => Err("dy needs dx".into()),
    }
}

crate::tab_action_params!(
    dialog,
    observe,
    check = |p| {
        p.start()?;
        p.end()?;
        if !(1..=100).contains(&p.steps()) {
            return Err(format!("steps must be 1 to 100, not {}", p.steps()));
        }
        match p.hold_ms {
            Some(hold) if hold > 2000 => Err(format!("holdMs must be 0 to 2000, not {hold}")),
            _ => Ok(()),
        }
    }
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// Always true.
    pub dragged: bool,
    /// Where the press was.
    pub from: Point,
    /// Where the release was.
    pub to: Point,
    /// What was under the pointer just before the release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_target: Option<ElementSeen>,
}
