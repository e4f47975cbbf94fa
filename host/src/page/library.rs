//! Typed calls into the in-page library (`js/*.js`): one struct per library function
//! with the arguments it takes and the reply it answers with. Arguments travel as CDP call
//! arguments (`Runtime.callFunctionOn`), never spliced into source, and a reply that does not
//! have its type's shape is an `INTERNAL` error, never a silent default.

use std::borrow::Cow;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use tether_protocol::actions::browser_scroll::{self, Direction};
use tether_protocol::actions::browser_snapshot::SnapshotScope;
use tether_protocol::actions::browser_wait_for;
use tether_protocol::actions::browser_xpath_scan::{self, ScanScope};
use tether_protocol::actions::fields::{BBox, ElementSeen};
use tether_protocol::actions::Element;

/// The in-page library: its parts, in the order they build on each other, inside one arrow
/// function whose scope they share (see `js/core.js`).
pub const SOURCE: &str = concat!(
    "() => {\n",
    include_str!("../js/core.js"),
    include_str!("../js/walk.js"),
    include_str!("../js/scan.js"),
    include_str!("../js/snapshot.js"),
    include_str!("../js/hands.js"),
    include_str!("../js/settle.js"),
    include_str!("../js/exports.js"),
    "}"
);

/// The library installed in one document: its object, in Tether's own JavaScript world of
/// that document (an isolated world: the page's scripts neither see it nor change what it
/// calls), and that world's execution context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installed {
    pub object_id: String,
    pub context: i64,
}

/// The names of the two events by which the library, in its own world, asks the page's world
/// which elements got click listeners there (`js/hooks.js`): random per host process, so a page
/// can neither listen for them nor answer in the hooks' place.
pub fn channel() -> (&'static str, &'static str) {
    static NAMES: std::sync::LazyLock<(String, String)> = std::sync::LazyLock::new(|| {
        use rand::RngCore;
        let mut bytes = [0u8; 12];
        rand::rng().fill_bytes(&mut bytes);
        let id = hex::encode(bytes);
        (format!("tether-ask-{id}"), format!("tether-answer-{id}"))
    });
    (&NAMES.0, &NAMES.1)
}

/// One function of the library: its name there, and the type of its answer.
pub trait LibraryCall: Serialize {
    const FUNCTION: &'static str;
    type Reply: DeserializeOwned;
}

/// Scrolls an element into view and finds the point a click would press, checking that the
/// element and nothing covering it is there.
#[derive(Serialize)]
pub struct ClickPoint<'a> {
    #[serde(flatten)]
    pub at: Element<'a>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

impl LibraryCall for ClickPoint<'_> {
    const FUNCTION: &'static str = "clickPoint";
    type Reply = Point;
}

/// Once the pointer rests on `x`, `y`: the point to press the element at, checked again (and
/// if the layout moved, once the element's box holds still); with `arm`, the press's target is
/// watched.
#[derive(Serialize)]
pub struct Landing<'a> {
    #[serde(flatten)]
    pub at: Element<'a>,
    pub x: f64,
    pub y: f64,
    pub arm: bool,
    /// Aim only once the element's box holds still, even if the point hits it now (a press
    /// aimed again after one that reached something else).
    pub settle: bool,
}

impl LibraryCall for Landing<'_> {
    const FUNCTION: &'static str = "landing";
    type Reply = Point;
}

/// Watches which element the next press at `x`, `y` reaches (a point no element names).
#[derive(Serialize)]
pub struct ArmPress {
    pub x: f64,
    pub y: f64,
}

impl LibraryCall for ArmPress {
    const FUNCTION: &'static str = "armPress";
    type Reply = Nothing;
}

/// The element the watched press reached, and whether it is the element pressed or inside it.
#[derive(Serialize)]
pub struct Pressed {}

#[derive(Debug, Deserialize)]
pub struct PressedReply {
    pub element: Option<ElementSeen>,
    pub inside: bool,
}

impl LibraryCall for Pressed {
    const FUNCTION: &'static str = "pressed";
    type Reply = PressedReply;
}

/// What is under a point of the viewport.
#[derive(Serialize)]
pub struct HitAt {
    pub x: f64,
    pub y: f64,
}

#[derive(Debug, Deserialize)]
pub struct Hit {
    pub element: Option<ElementSeen>,
}

impl LibraryCall for HitAt {
    const FUNCTION: &'static str = "hitAt";
    type Reply = Hit;
}

/// The point a drag releases on an element: its first box fragment's middle, in the viewport
/// as it is (not scrolled).
#[derive(Serialize)]
pub struct DropPoint<'a> {
    #[serde(flatten)]
    pub at: Element<'a>,
}

impl LibraryCall for DropPoint<'_> {
    const FUNCTION: &'static str = "dropPoint";
    type Reply = Point;
}

/// Watches for the page's next `dragstart`, which tells a drag's moves that an HTML5 drag began.
#[derive(Serialize)]
pub struct ArmDrag {}

#[derive(Debug, Deserialize)]
pub struct Nothing {}

impl LibraryCall for ArmDrag {
    const FUNCTION: &'static str = "armDrag";
    type Reply = Nothing;
}

/// Whether an HTML5 drag began (a `dragstart` the page did not cancel) since [`ArmDrag`].
#[derive(Serialize)]
pub struct DragStarted {}

#[derive(Debug, Deserialize)]
pub struct Started {
    pub started: bool,
}

impl LibraryCall for DragStarted {
    const FUNCTION: &'static str = "dragStarted";
    type Reply = Started;
}

/// Resolves once the page has drawn its next frame: the input sent before it was handled.
#[derive(Serialize)]
pub struct NextFrame {}

impl LibraryCall for NextFrame {
    const FUNCTION: &'static str = "nextFrame";
    type Reply = Nothing;
}

/// Watches for the page's next input event of `type` (`pointermove`, `wheel`, ...).
#[derive(Serialize)]
pub struct ArmInput {
    #[serde(rename = "type")]
    pub kind: &'static str,
}

impl LibraryCall for ArmInput {
    const FUNCTION: &'static str = "armInput";
    type Reply = Nothing;
}

/// Whether the page saw the event [`ArmInput`] watches for, waiting at most `within` ms.
#[derive(Serialize)]
pub struct InputSeen {
    pub within: u64,
}

#[derive(Debug, Deserialize)]
pub struct SeenInput {
    pub seen: bool,
}

impl LibraryCall for InputSeen {
    const FUNCTION: &'static str = "inputSeen";
    type Reply = SeenInput;
}

/// What kind of form field an element is, and how it stands; with `focus`, a text field is
/// focused for typing, its content selected.
#[derive(Serialize)]
pub struct FieldKind<'a> {
    #[serde(flatten)]
    pub at: Element<'a>,
    pub focus: bool,
    /// The name of the secret about to be typed into it (see [`FocusForTyping`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<&'a str>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldSort {
    Text,
    Select,
    Checkbox,
    Radio,
    Other,
}

impl FieldSort {
    /// What a field of this kind takes, as a message says it.
    pub fn takes(self, multiple: bool) -> &'static str {
        match self {
            Self::Text => "a string",
            Self::Select if multiple => "a string or an array of strings (values or labels)",
            Self::Select => "a string (an option's value or label)",
            Self::Checkbox | Self::Radio => "true or false",
            Self::Other => "no value (it is no form field: give an input, a textarea, a select or a contenteditable element)",
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct FieldKindReply {
    pub kind: FieldSort,
    #[serde(default)]
    pub multiple: bool,
    #[serde(default)]
    pub checked: bool,
    /// For a text field, now focused with its content selected: whether it had any.
    #[serde(default)]
    pub had_text: bool,
    /// The element as a message names it.
    pub name: String,
}

impl LibraryCall for FieldKind<'_> {
    const FUNCTION: &'static str = "fieldKind";
    type Reply = FieldKindReply;
}

/// Focuses a text field and selects its content (`clear`) or puts the caret at its end.
#[derive(Serialize)]
pub struct FocusForTyping<'a> {
    #[serde(flatten)]
    pub at: Element<'a>,
    pub clear: bool,
    /// The name of the secret about to be typed: the page keeps it beside the field, so a
    /// snapshot shows `<secret:name>` for its value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<&'a str>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Focused {
    pub had_text: bool,
}

impl LibraryCall for FocusForTyping<'_> {
    const FUNCTION: &'static str = "focusForTyping";
    type Reply = Focused;
}

/// Focuses an element for the keys that follow.
#[derive(Serialize)]
pub struct Focus<'a> {
    #[serde(flatten)]
    pub at: Element<'a>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub struct FocusTaken {
    pub focused: bool,
}

impl LibraryCall for Focus<'_> {
    const FUNCTION: &'static str = "focus";
    type Reply = FocusTaken;
}

/// Makes `values` the whole selection of a `<select>`, firing `input` and `change`.
#[derive(Serialize)]
pub struct SelectOption<'a> {
    #[serde(flatten)]
    pub at: Element<'a>,
    pub values: &'a [String],
}

#[derive(Debug, Clone, Deserialize)]
pub struct Selected {
    pub selected: Vec<String>,
}

impl LibraryCall for SelectOption<'_> {
    const FUNCTION: &'static str = "selectOption";
    type Reply = Selected;
}

/// Waits in the page until a condition holds, or `timeout_ms` passed.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WaitFor<'a> {
    pub condition: &'a browser_wait_for::Params,
    pub timeout_ms: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Waited {
    pub matched: bool,
    /// What kept the condition from holding, when it did not.
    #[serde(default)]
    pub seen: String,
}

impl LibraryCall for WaitFor<'_> {
    const FUNCTION: &'static str = "waitFor";
    type Reply = Waited;
}

/// An element's box (scrolled into view), in the top document's CSS pixels.
#[derive(Serialize)]
pub struct BoxOf<'a> {
    #[serde(flatten)]
    pub at: Element<'a>,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub struct ElementBox {
    pub x: f64,
    pub y: f64,
    pub width: f64,
    pub height: f64,
}

impl LibraryCall for BoxOf<'_> {
    const FUNCTION: &'static str = "boxOf";
    type Reply = ElementBox;
}

/// Where a wheel scroll goes, and how far a page of it is.
#[derive(Serialize)]
pub struct WheelAt<'a> {
    #[serde(flatten)]
    pub at: Option<Element<'a>>,
    pub direction: Direction,
}

#[derive(Debug, Clone, Copy, Deserialize)]
pub struct WheelPoint {
    pub x: f64,
    pub y: f64,
    /// 90 % of the viewport along the direction, in CSS pixels.
    pub page: f64,
}

impl LibraryCall for WheelAt<'_> {
    const FUNCTION: &'static str = "wheelAt";
    type Reply = WheelPoint;
}

/// The scroll position once a wheel's scroll has ended.
#[derive(Serialize)]
pub struct Scrolled<'a> {
    #[serde(flatten)]
    pub at: Option<Element<'a>>,
    pub direction: Direction,
}

impl LibraryCall for Scrolled<'_> {
    const FUNCTION: &'static str = "scrolled";
    type Reply = browser_scroll::Output;
}

/// Brings an element into view; the page's scroll position.
#[derive(Serialize)]
pub struct IntoView<'a> {
    #[serde(flatten)]
    pub at: Element<'a>,
    pub direction: Direction,
}

impl LibraryCall for IntoView<'_> {
    const FUNCTION: &'static str = "intoView";
    type Reply = browser_scroll::Output;
}

/// The document's HTML with its doctype, or one element's outerHTML.
#[derive(Serialize)]
pub struct Html<'a> {
    #[serde(flatten)]
    pub at: Option<Element<'a>>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct HtmlText {
    pub html: String,
}

impl LibraryCall for Html<'_> {
    const FUNCTION: &'static str = "html";
    type Reply = HtmlText;
}

/// What a person could interact with, in document order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Scan {
    pub scope: ScanScope,
    /// The lowest ref number the page may hand out (see [`RefsHanded`]).
    pub ref_floor: u64,
}

impl LibraryCall for Scan {
    const FUNCTION: &'static str = "scan";
    type Reply = RefsHanded<Scanned>;
}

/// The scan's elements as the wire names them, made from the rows the page sends, and where
/// the page's marked cross-origin frames are among them (`framed.rs`).
#[derive(Debug, Clone)]
pub struct Scanned(pub browser_xpath_scan::Output, pub Vec<FrameSpot>);

/// A marked cross-origin frame a scan met: its id, its element's XPath, how many of the
/// scan's elements come before it, and its viewport's top-left corner in the tab's.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameSpot {
    pub id: String,
    pub xpath: String,
    pub at: usize,
    pub x: f64,
    pub y: f64,
}

impl<'de> Deserialize<'de> for Scanned {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::try_from(ScanRows::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// The scan's reply as the page writes it (`js/scan.js`): a row per element, and the table of
/// the paths they are at (`js/core.js`, `nodeOf`): a path is that of the entry `back` entries
/// before it (0: none), "/", and its step; the steps come as one string, split at spaces.
/// Half the bytes of the elements themselves, which is what the browser's time to move the
/// reply goes by.
#[derive(Deserialize)]
struct ScanRows<'a> {
    back: Vec<usize>,
    #[serde(borrow)]
    steps: Cow<'a, str>,
    elements: Vec<ScanRow>,
    /// `[frame id, path, elements before it, x, y]` for each marked cross-origin frame.
    #[serde(default)]
    frames: Vec<(String, usize, usize, f64, f64)>,
}

/// `[path, ref number, text, x, y, w, h, role, name, attributes, occluded]`, with "" for no
/// text, role or name.
#[derive(Deserialize)]
struct ScanRow(
    usize,
    u64,
    String,
    f64,
    f64,
    f64,
    f64,
    String,
    String,
    Option<serde_json::Map<String, serde_json::Value>>,
    u8,
);

impl TryFrom<ScanRows<'_>> for Scanned {
    type Error = String;

    fn try_from(rows: ScanRows<'_>) -> Result<Self, String> {
        let ScanRows {
            back,
            steps,
            elements,
            frames,
        } = rows;
        // (An empty string has no steps, not one empty step.)
        let steps: Vec<&str> = steps.split_terminator(' ').collect();
        if back.len() != steps.len() {
            return Err(format!(
                "the table of paths has {} entries and {} steps",
                back.len(),
                steps.len()
            ));
        }
        // Every path continues one before it, so going back always ends.
        if let Some(n) = (0..back.len()).find(|&n| back[n] > n) {
            return Err(format!(
                "path {n} continues one {} back, before the first",
                back[n]
            ));
        }
        let some = |s: String| (!s.is_empty()).then_some(s);
        let mut chain = Vec::new();
        let elements = elements
            .into_iter()
            .map(
                |ScanRow(node, number, text, x, y, w, h, role, name, attributes, occluded)| {
                    let Some(step) = steps.get(node) else {
                        return Err(format!("an element is at path {node}, past the table's end"));
                    };
                    Ok(browser_xpath_scan::ScannedElement {
                        xpath: path(node, &back, &steps, &mut chain),
                        r#ref: format!("e{number}"),
                        tag: tag_of(step).to_owned(),
                        text: some(text),
                        bbox: Some(BBox { x, y, w, h }),
                        role: some(role),
                        name: some(name),
                        attributes,
                        occluded: (occluded != 0).then_some(true),
                    })
                },
            )
            .collect::<Result<_, String>>()?;
        let frames = frames
            .into_iter()
            .map(|(id, node, at, x, y)| match steps.get(node) {
                Some(_) => Ok(FrameSpot {
                    id,
                    xpath: path(node, &back, &steps, &mut chain),
                    at,
                    x,
                    y,
                }),
                None => Err(format!("a frame is at path {node}, past the table's end")),
            })
            .collect::<Result<_, String>>()?;
        Ok(Self(browser_xpath_scan::Output { elements }, frames))
    }
}

/// The whole path of entry `node`, written once into a string of its length: no path is
/// joined for the entries only on the way to elements. `chain` is scratch.
fn path(node: usize, back: &[usize], steps: &[&str], chain: &mut Vec<usize>) -> String {
    chain.clear();
    let mut n = node;
    loop {
        chain.push(n);
        match back[n] {
            0 => break,
            b => n -= b,
        }
    }
    let mut path = String::with_capacity(chain.iter().map(|&n| steps[n].len() + 1).sum());
    for &n in chain.iter().rev() {
        path.push('/');
        path.push_str(steps[n]);
    }
    path
}

/// The element's tag, from its step: `name`, `name[i]`, or `*[local-name()='name']`, after
/// the `#shadow-root/` or `#document/` a step into a root begins with.
fn tag_of(step: &str) -> &str {
    let step = step.rsplit('/').next().unwrap_or(step);
    match step.strip_prefix("*[local-name()='") {
        // The name ends at the last "']": the HTML parser lets a quote into an SVG tag's name.
        Some(rest) => rest.rfind("']").map_or(rest, |end| &rest[..end]),
        None => step.split('[').next().unwrap_or(step),
    }
}

/// A reply of a function that hands out refs, with the page's next ref number: the host keeps
/// the tab's highest and passes it back as `refFloor`, so that no number names two elements
/// in one tab, across navigations too. The reply is a field of its own, not flattened:
/// `serde(flatten)` buffers the whole reply once more before decoding it (a 20,000-element
/// scan's 1 MB).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RefsHanded<T> {
    pub reply: T,
    pub next_ref: u64,
}

/// The page as Markdown blocks, with what a gist says of it.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot {
    pub scope: SnapshotScope,
    pub ref_floor: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PageText {
    pub url: String,
    pub title: String,
    /// One line per block (a table row, a list item, a paragraph), in reading order.
    pub blocks: Vec<String>,
    pub gist: PageGist,
}

/// What a gist says of a page.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct PageGist {
    /// The first h1's text, else the first heading's.
    pub heading: String,
    pub links: u32,
    pub buttons: u32,
    pub inputs: u32,
    pub forms: u32,
    /// The names of the open dialogs.
    pub dialogs: Vec<String>,
    /// How far down the page the viewport is, in percent.
    pub scrolled: u32,
    /// Whether the page is longer than the viewport.
    #[serde(default)]
    pub scrollable: bool,
}

impl LibraryCall for Snapshot {
    const FUNCTION: &'static str = "snapshot";
    type Reply = RefsHanded<PageText>;
}

/// Where an XPath goes into a cross-origin frame the host marked (`framed.rs`): that frame,
/// and the rest of the path, to follow in the frame's document.
#[derive(Serialize)]
pub struct CrossFrame<'a> {
    pub xpath: &'a str,
}

#[derive(Debug, Deserialize)]
pub struct Crossing {
    pub frame: Option<String>,
    #[serde(default)]
    pub rest: String,
}

impl LibraryCall for CrossFrame<'_> {
    const FUNCTION: &'static str = "crossFrame";
    type Reply = Crossing;
}

/// The file field an upload sets: the element itself, or the field a `<label>` is for (a
/// handle, through [`crate::page::Page::call_for_node`]); for any other element, the point a
/// click presses to open the page's file chooser.
#[derive(Serialize)]
pub struct FileInput<'a> {
    #[serde(flatten)]
    pub at: Element<'a>,
    /// How many files will be set (a field without `multiple` takes one).
    pub count: usize,
}

impl LibraryCall for FileInput<'_> {
    const FUNCTION: &'static str = "fileInput";
    type Reply = Point;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scanned(reply: serde_json::Value) -> Result<Scanned, String> {
        serde_json::from_value(reply).map_err(|e| e.to_string())
    }

    #[test]
    fn a_scans_rows_become_elements_with_whole_paths() {
        let reply = serde_json::json!({
            "back": [0, 1, 1, 1, 1, 2, 3],
            "steps": "html body my-widget #shadow-root/div button[1] button[2] *[local-name()='svg']",
            "elements": [
                [5, 7, "Go", 1, 2, 3, 4, "button", "", null, 0],
                [1, 8, "", 0, 0, 10, 10, "", "Page", { "id": "b" }, 1],
                [6, 9, "", 0, 0, 10, 10, "", "", null, 0],
            ],
        });
        let elements = scanned(reply).unwrap().0.elements;
        assert_eq!(
            elements[0].xpath,
            "/html/body/my-widget/#shadow-root/div/button[2]"
        );
        assert_eq!(
            (elements[0].r#ref.as_str(), elements[0].tag.as_str()),
            ("e7", "button")
        );
        assert_eq!(elements[0].text.as_deref(), Some("Go"));
        assert_eq!(elements[0].name, None);
        assert_eq!(elements[0].occluded, None);
        assert_eq!(
            (elements[1].xpath.as_str(), elements[1].tag.as_str()),
            ("/html/body", "body")
        );
        assert_eq!(
            (elements[1].text.as_deref(), elements[1].name.as_deref()),
            (None, Some("Page"))
        );
        assert_eq!(elements[1].occluded, Some(true));
        assert_eq!(
            elements[2].xpath,
            "/html/body/my-widget/#shadow-root/div/*[local-name()='svg']"
        );
        assert_eq!(elements[2].tag, "svg");
    }

    #[test]
    fn a_scans_frames_are_placed_at_their_elements_paths() {
        let reply = serde_json::json!({
            "back": [0, 1, 1],
            "steps": "html body iframe[2]",
            "elements": [[1, 1, "", 0, 0, 1, 1, "", "", null, 0]],
            "frames": [["F1", 2, 1, 10.5, 20]],
        });
        let spots = scanned(reply).unwrap().1;
        let spot = FrameSpot {
            id: "F1".into(),
            xpath: "/html/body/iframe[2]".into(),
            at: 1,
            x: 10.5,
            y: 20.0,
        };
        assert_eq!(spots, vec![spot]);
    }

    #[test]
    fn a_tag_is_its_steps_name() {
        for (step, tag) in [
            ("a", "a"),
            ("td[12]", "td"),
            ("#shadow-root/button[2]", "button"),
            ("#document/html", "html"),
            ("*[local-name()='svg']", "svg"),
            ("*[local-name()='a'][3]", "a"),
            ("*[local-name()='x'y'][2]", "x'y"),
        ] {
            assert_eq!(tag_of(step), tag, "{step}");
        }
    }

    #[test]
    fn a_page_with_nothing_to_interact_with_scans_to_no_elements() {
        let reply = serde_json::json!({ "back": [], "steps": "", "elements": [] });
        assert!(scanned(reply).unwrap().0.elements.is_empty());
    }

    #[test]
    fn a_malformed_table_of_paths_is_an_error_not_a_panic() {
        let row = serde_json::json!([1, 1, "", 0, 0, 1, 1, "", "", null, 0]);
        for (back, steps, why) in [
            (serde_json::json!([0, 2]), "html a", "continues one 2 back"),
            (serde_json::json!([0, 1]), "html", "2 entries and 1 steps"),
            (serde_json::json!([0]), "html", "past the table's end"),
        ] {
            let reply = serde_json::json!({ "back": back, "steps": steps, "elements": [row] });
            let error = scanned(reply).unwrap_err();
            assert!(error.contains(why), "{error}");
        }
    }
}
