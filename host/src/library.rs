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
use tether_protocol::actions::fields::BBox;
use tether_protocol::actions::Element;

/// The in-page library: its parts, in the order they build on each other, inside one arrow
/// function whose scope they share (see `js/core.js`).
pub const SOURCE: &str = concat!(
    "() => {\n",
    include_str!("js/core.js"),
    include_str!("js/walk.js"),
    include_str!("js/scan.js"),
    include_str!("js/snapshot.js"),
    include_str!("js/hands.js"),
    include_str!("js/exports.js"),
    "}"
);

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

/// Focuses a text field and selects its content (`clear`) or puts the caret at its end.
#[derive(Serialize)]
pub struct FocusForTyping<'a> {
    #[serde(flatten)]
    pub at: Element<'a>,
    pub clear: bool,
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

/// The scan's elements as the wire names them, made from the rows the page sends.
#[derive(Debug, Clone)]
pub struct Scanned(pub browser_xpath_scan::Output);

impl<'de> Deserialize<'de> for Scanned {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::try_from(ScanRows::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

/// The scan's reply as the page writes it (`js/scan.js`): a row per element, and the table of
/// the paths they are at (`js/core.js`, `nodeOf`): a path is its parent's (-1: none), "/", and
/// its step. Half the bytes of the elements themselves, which is what the browser's time to
/// move the reply goes by.
#[derive(Deserialize)]
struct ScanRows<'a> {
    parents: Vec<i64>,
    #[serde(borrow)]
    steps: Vec<Cow<'a, str>>,
    elements: Vec<ScanRow>,
}

/// `[path, ref number, tag, text, x, y, w, h, role, name, attributes, occluded]`, with "" for
/// no text, role or name.
#[derive(Deserialize)]
struct ScanRow(
    usize,
    u64,
    String,
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
            parents,
            steps,
            elements,
        } = rows;
        if parents.len() != steps.len() {
            return Err("the table of paths has parents and steps of different lengths".into());
        }
        // Every path continues one before it, so following parents always ends.
        if let Some(n) = (0..parents.len()).find(|&n| parents[n] >= n as i64) {
            return Err(format!(
                "path {n} continues path {}, not one before it",
                parents[n]
            ));
        }
        // Each element's path is written once, into a string of its length: joining every
        // path of the table first, and copying an element's, took twice as long.
        let mut chain = Vec::new();
        let path_of = |node: usize, chain: &mut Vec<usize>| {
            chain.clear();
            let mut n = node as i64;
            while n >= 0 {
                chain.push(n as usize);
                n = parents[n as usize];
            }
            let mut path = String::with_capacity(chain.iter().map(|&n| steps[n].len() + 1).sum());
            for &n in chain.iter().rev() {
                path.push('/');
                path.push_str(&steps[n]);
            }
            path
        };
        let some = |s: String| (!s.is_empty()).then_some(s);
        let elements = elements
            .into_iter()
            .map(
                |ScanRow(node, number, tag, text, x, y, w, h, role, name, attributes, occluded)| {
                    if node >= steps.len() {
                        return Err(format!("an element is at path {node}, past the table's end"));
                    }
                    Ok(browser_xpath_scan::ScannedElement {
                        xpath: path_of(node, &mut chain),
                        r#ref: format!("e{number}"),
                        tag,
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
        Ok(Self(browser_xpath_scan::Output { elements }))
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
}

impl LibraryCall for Snapshot {
    const FUNCTION: &'static str = "snapshot";
    type Reply = RefsHanded<PageText>;
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
            "parents": [-1, 0, 1, 2, 3, 3],
            "steps": ["html", "body", "my-widget", "#shadow-root/div", "button[1]", "button[2]"],
            "elements": [
                [5, 7, "button", "Go", 1, 2, 3, 4, "button", "", null, 0],
                [1, 8, "body", "", 0, 0, 10, 10, "", "Page", { "id": "b" }, 1],
            ],
        });
        let elements = scanned(reply).unwrap().0.elements;
        assert_eq!(
            elements[0].xpath,
            "/html/body/my-widget/#shadow-root/div/button[2]"
        );
        assert_eq!(elements[0].r#ref, "e7");
        assert_eq!(elements[0].text.as_deref(), Some("Go"));
        assert_eq!(elements[0].name, None);
        assert_eq!(elements[0].occluded, None);
        assert_eq!(elements[1].xpath, "/html/body");
        assert_eq!(
            (elements[1].text.as_deref(), elements[1].name.as_deref()),
            (None, Some("Page"))
        );
        assert_eq!(elements[1].occluded, Some(true));
    }

    #[test]
    fn a_malformed_table_of_paths_is_an_error_not_a_panic() {
        let row = serde_json::json!([1, 1, "a", "", 0, 0, 1, 1, "", "", null, 0]);
        for (parents, steps, why) in [
            (
                serde_json::json!([-1, 1]),
                serde_json::json!(["html", "a"]),
                "continues path 1",
            ),
            (
                serde_json::json!([-1, 0]),
                serde_json::json!(["html"]),
                "different lengths",
            ),
            (
                serde_json::json!([-1]),
                serde_json::json!(["html"]),
                "past the table's end",
            ),
        ] {
            let reply = serde_json::json!({ "parents": parents, "steps": steps, "elements": [row] });
            let error = scanned(reply).unwrap_err();
            assert!(error.contains(why), "{error}");
        }
    }
}
