//! Self-describing actions (PROTOCOL.md §3, ActionDescriptor): what each action does, its
//! params and its result, for orchestrators and for the LLM agents behind them. Tests hold
//! these to the params types of `catalog`, so a param cannot be renamed in one and not the
//! other.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::catalog::ActionName;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Category {
    Session,
    Page,
    Interact,
    Extract,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FieldType {
    String,
    Number,
    Boolean,
    Object,
    Array,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FieldDescriptor {
    #[serde(rename = "type")]
    pub kind: FieldType,
    pub description: String,
    /// Absent means false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionDescriptor {
    pub name: String,
    pub label: String,
    pub category: Category,
    pub description: String,
    pub params: BTreeMap<String, FieldDescriptor>,
    pub result: BTreeMap<String, FieldDescriptor>,
}

/// Every action's descriptor, in catalog order.
pub fn catalog() -> Vec<ActionDescriptor> {
    ActionName::ALL.iter().map(|name| name.descriptor()).collect()
}

struct Field(&'static str, FieldDescriptor);

fn field(name: &'static str, kind: FieldType, description: &str) -> Field {
    Field(
        name,
        FieldDescriptor {
            kind,
            description: description.to_owned(),
            required: None,
            default: None,
        },
    )
}

impl Field {
    fn required(mut self) -> Self {
        self.1.required = Some(true);
        self
    }

    fn default(mut self, value: Value) -> Self {
        self.1.default = Some(value);
        self
    }
}

use FieldType::{Array, Boolean, Number, String as Text};

fn tab() -> Field {
    field(
        "tabId",
        Number,
        "The tab to act on: the tabId session_start returned, or one in a click's openedTabIds.",
    )
    .required()
}

fn xpath(what: &str) -> Field {
    field(
        "xpath",
        Text,
        &format!("{what}, as browser_xpath_scan returns it (or any XPath)."),
    )
    .required()
}

fn artifact() -> [Field; 2] {
    [
        field("artifactId", Text, "The stored artifact's id."),
        field(
            "url",
            Text,
            "Where to fetch the artifact; presigned, so it can be handed on as it is.",
        ),
    ]
}

fn describe(
    name: ActionName,
    label: &str,
    category: Category,
    description: &str,
    params: impl IntoIterator<Item = Field>,
    result: impl IntoIterator<Item = Field>,
) -> ActionDescriptor {
    ActionDescriptor {
        name: name.as_str().to_owned(),
        label: label.to_owned(),
        category,
        description: description.to_owned(),
        params: by_name(params),
        result: by_name(result),
    }
}

fn by_name(fields: impl IntoIterator<Item = Field>) -> BTreeMap<String, FieldDescriptor> {
    fields
        .into_iter()
        .map(|Field(name, d)| (name.to_owned(), d))
        .collect()
}

impl ActionName {
    pub fn descriptor(self) -> ActionDescriptor {
        use Category::*;
        match self {
            Self::SessionStart => describe(
                self,
                "Start session",
                Session,
                "Opens the session's tab in the background (the user's tab keeps the focus), in a tab group where the browser has groups, and navigates it. Returns once the navigation committed; call browser_wait_for_loaded before reading the page.",
                [
                    field("url", Text, "The page to open; about:blank when absent."),
                    field("reuseExistingTab", Boolean, "Reuse the session's tab if it is still open, instead of opening another.").default(json!(false)),
                    field("groupTitle", Text, "Title of the tab group the session's tabs go in."),
                ],
                [
                    field("tabId", Number, "The session's tab: pass it to every other action.").required(),
                    field("windowId", Number, "The tab's window (-1 when the browser names none).").required(),
                    field("groupId", Number, "The tab group, where the browser has groups."),
                    field("url", Text, "The URL the tab shows.").required(),
                    field("title", Text, "The page title, when it already has one."),
                ],
            ),
            Self::SessionStop => describe(
                self,
                "Stop session",
                Session,
                "Ends the session: closes its tabs, or with closeTab false leaves them open and detached for a later session_start with reuseExistingTab.",
                [field("closeTab", Boolean, "Close the session's tabs.").default(json!(true))],
                [field("stopped", Boolean, "Always true.").required()],
            ),
            Self::BrowserDebuggerAttach => describe(
                self,
                "Attach debugger",
                Session,
                "Attaches the debugger to a session tab (actions attach on their own; use this to reattach explicitly).",
                [tab()],
                [field("attached", Boolean, "Always true.").required()],
            ),
            Self::BrowserNavigate => describe(
                self,
                "Navigate",
                Page,
                "Loads a URL in the tab and waits for its load event. An HTTP error page is a success carrying httpStatus; only a navigation that fails (refused, DNS, aborted) is NAVIGATION_FAILED.",
                [
                    tab(),
                    field("url", Text, "An absolute URL.").required(),
                    field("timeoutMs", Number, "How long to wait for the load event; past it the result says status \"loading\".").default(json!(20000)),
                ],
                [
                    field("url", Text, "The URL the tab shows.").required(),
                    field("title", Text, "The page title."),
                    field("status", Text, "\"complete\", or \"loading\" when the load event had not come within timeoutMs.").required(),
                    field("httpStatus", Number, "The HTTP status of the page's response."),
                ],
            ),
            Self::BrowserWaitForLoaded => describe(
                self,
                "Wait for page load",
                Page,
                "Waits until the page finished loading (document.readyState complete, load event fired). Past timeoutMs: ACTION_TIMEOUT.",
                [tab(), field("timeoutMs", Number, "How long to wait.").default(json!(10000))],
                [field("status", Text, "Always \"complete\".").required()],
            ),
            Self::BrowserScreenshot => describe(
                self,
                "Screenshot",
                Extract,
                "Captures the visible part of the page (or all of it), without scrollbars, and stores it as an artifact.",
                [
                    tab(),
                    field("fullPage", Boolean, "Capture the whole page, not just the viewport.").default(json!(false)),
                    field("format", Text, "\"png\" or \"jpeg\".").default(json!("png")),
                    field("quality", Number, "JPEG quality, 0-100 (jpeg only).").default(json!(80)),
                    field("maxWidth", Number, "Scale the image down to at most this many pixels wide; full size when absent."),
                ],
                artifact().into_iter().map(Field::required).chain([
                    field("width", Number, "Width of the returned image in pixels.").required(),
                    field("height", Number, "Height of the returned image in pixels.").required(),
                    field("format", Text, "\"png\" or \"jpeg\".").required(),
                    field("bytes", Number, "Size of the image in bytes.").required(),
                ]),
            ),
            Self::BrowserReadabilityExtract => describe(
                self,
                "Extract article",
                Extract,
                "Finds the page's main content as Mozilla Readability would, in the live DOM, and returns it as plain text and Markdown, without navigation, sidebars, ads or footers.",
                [tab()],
                [
                    field("title", Text, "The article's title."),
                    field("text", Text, "The article as plain text, one line per block, blank lines between paragraphs; its first 256 KiB when longer.").required(),
                    field("markdown", Text, "The article as Markdown."),
                    field("byline", Text, "The author line."),
                    field("excerpt", Text, "A short summary."),
                    field("artifactId", Text, "When text is over 256 KiB: the whole text as a text/plain artifact."),
                    field("url", Text, "Where to fetch that artifact."),
                ],
            ),
            Self::BrowserXpathScan => describe(
                self,
                "Scan interactive elements",
                Extract,
                "Lists what a person could interact with (links, buttons, inputs, selects, textareas, contenteditable, clickable elements, interactive ARIA roles), rendered ones only, in document order, each with an XPath that browser_click and browser_type accept. Same-origin iframes and open shadow roots are included.",
                [tab(), field("scope", Text, "\"viewport\" (what is on screen) or \"document\" (the whole page).").default(json!("viewport"))],
                [field(
                    "elements",
                    Array,
                    "Each { xpath, tag, text?, bbox? {x,y,w,h} in CSS pixels of the viewport, role?, name?, attributes?, occluded? (true when something covers its centre) }.",
                )
                .required()],
            ),
            Self::BrowserClick => describe(
                self,
                "Click",
                Interact,
                "Scrolls the element into view and clicks it with real mouse events. If something covers it, nothing is clicked: ELEMENT_NOT_INTERACTABLE says what, with details.coveredBy.",
                [tab(), xpath("The element to click")],
                [
                    field("clicked", Boolean, "Always true.").required(),
                    field("openedTabIds", Array, "Tabs the click opened (they join the session).").required(),
                ],
            ),
            Self::BrowserType => describe(
                self,
                "Type text",
                Interact,
                "Focuses an input, textarea or contenteditable element and types text with real input events, so the page's own handlers see it.",
                [
                    tab(),
                    xpath("The field to type into"),
                    field("text", Text, "The text to type.").required(),
                    field("submit", Boolean, "Press Enter afterwards.").default(json!(false)),
                    field("clear", Boolean, "Replace the field's content (true) or append at its end (false).").default(json!(true)),
                ],
                [field("typed", Boolean, "Always true.").required()],
            ),
            Self::BrowserGetHtml => describe(
                self,
                "Get HTML",
                Extract,
                "Stores the live DOM's HTML (the whole document, or one element's outerHTML) as a text/html artifact.",
                [tab(), field("xpath", Text, "One element instead of the whole document.")],
                artifact()
                    .into_iter()
                    .map(Field::required)
                    .chain([field("bytes", Number, "Size of the HTML in bytes.").required()]),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::ActionCall;

    fn sample(kind: FieldType) -> Value {
        match kind {
            FieldType::String => json!("x"),
            FieldType::Number => json!(1),
            FieldType::Boolean => json!(true),
            FieldType::Object => json!({}),
            FieldType::Array => json!([]),
        }
    }

    fn mismatch(error: &str) -> bool {
        error.contains("unknown field") || error.contains("missing field")
    }

    #[test]
    fn every_action_is_described_once_in_catalog_order() {
        let names: Vec<String> = catalog().into_iter().map(|d| d.name).collect();
        let expected: Vec<&str> = ActionName::ALL.iter().map(|a| a.as_str()).collect();
        assert_eq!(names, expected);
    }

    #[test]
    fn described_params_are_the_params_the_host_parses() {
        for d in catalog() {
            // Every described param is a real field, and nothing else is needed.
            let all: serde_json::Map<String, Value> = d
                .params
                .iter()
                .map(|(n, f)| (n.clone(), f.default.clone().unwrap_or(sample(f.kind))))
                .collect();
            let parsed = ActionCall::parse(&d.name, Value::Object(all.clone()));
            if let Err(e) = &parsed {
                assert!(!mismatch(&e.message), "{}: {}", d.name, e.message);
            }
            // The required ones are exactly the fields serde cannot do without.
            for (name, f) in &d.params {
                let mut without = all.clone();
                without.remove(name);
                let missing = ActionCall::parse(&d.name, Value::Object(without))
                    .err()
                    .is_some_and(|e| e.message.contains(&format!("missing field `{name}`")));
                assert_eq!(
                    missing,
                    f.required == Some(true),
                    "{}.{name}: required is wrong",
                    d.name
                );
            }
            // And every field of the params type is described.
            if let Ok(call) = parsed {
                let fields = call.params_json();
                for key in fields.as_object().unwrap().keys() {
                    assert!(d.params.contains_key(key), "{}.{key} is not described", d.name);
                }
            }
        }
    }

    #[test]
    fn descriptors_serialise_in_the_spec_shape() {
        let click = serde_json::to_value(ActionName::BrowserClick.descriptor()).unwrap();
        assert_eq!(click["category"], "interact");
        assert_eq!(click["params"]["xpath"]["type"], "string");
        assert_eq!(click["params"]["xpath"]["required"], true);
        let start = serde_json::to_value(ActionName::SessionStart.descriptor()).unwrap();
        assert!(
            start["params"]["url"].get("required").is_none(),
            "absent means false"
        );
        assert_eq!(start["params"]["reuseExistingTab"]["default"], false);
    }
}
