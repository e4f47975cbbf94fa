//! Pieces that several actions' params and results share: tab ids, artifact references, image
//! formats, the dialogs an action answered, and the checks that serde's types cannot express.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A browser tab, as Chrome numbers it (`chrome.tabs`), or as the worker numbers CDP targets.
pub type TabId = i64;

/// Upper bound on any `timeoutMs` in params; longer waits belong to the orchestrator.
pub const MAX_TIMEOUT_MS: u64 = 10 * 60 * 1000;

/// A stored blob (screenshot, HTML, long text), referenced instead of inlined.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactRef {
    pub artifact_id: String,
    pub url: String,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ImageFormat {
    #[default]
    Png,
    Jpeg,
}

impl ImageFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Png => "png",
            Self::Jpeg => "jpeg",
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Self::Png => "image/png",
            Self::Jpeg => "image/jpeg",
        }
    }
}

/// A box in CSS pixels, relative to the viewport.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BBox {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

/// A JavaScript dialog the host answered during an action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Dialog {
    #[serde(rename = "type")]
    pub kind: String,
    pub message: String,
}

/// How to answer the JavaScript dialogs that open during one action (docs/protocol.md §9).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DialogAnswer {
    /// Accept (OK) or dismiss (Cancel).
    pub accept: bool,
    /// What to type into a prompt before accepting it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_text: Option<String>,
}

pub(crate) fn default_true() -> bool {
    true
}

/// A URL as a person's address bar reads what they typed: `example.com/a` is
/// `https://example.com/a`; `localhost:8080`, `127.0.0.1:8765/form.html`, `[::1]` and any
/// host with a port are `http://` (a local server rarely speaks TLS). Anything else, a URL with
/// its scheme included, is left as it is for [`check_url`] and the URL rules to judge.
pub fn as_typed(url: String) -> String {
    typed_address(&url).unwrap_or(url)
}

fn typed_address(text: &str) -> Option<String> {
    if text.is_empty() || text.contains(|c: char| c.is_whitespace() || c.is_control()) {
        return None;
    }
    let authority = &text[..text.find(['/', '?', '#']).unwrap_or(text.len())];
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if host.starts_with('[') == host.ends_with(']') => {
            // A scheme (`mailto:`, `https:`) is not a port.
            if port.is_empty() || !port.chars().all(|c| c.is_ascii_digit()) {
                return None;
            }
            (host, Some(port))
        }
        _ => (authority, None),
    };
    let local = host.eq_ignore_ascii_case("localhost")
        || host.parse::<std::net::Ipv4Addr>().is_ok()
        || (host.starts_with('[') && host.ends_with(']'));
    let named = host.contains('.')
        && host
            .split('.')
            .all(|label| !label.is_empty() && label.chars().all(|c| c.is_alphanumeric() || c == '-'));
    if !(local || named) {
        return None;
    }
    let scheme = if local || port.is_some() { "http" } else { "https" };
    Some(format!("{scheme}://{text}"))
}

/// Reads a `url` param as typed into an address bar ([`as_typed`]).
pub(crate) fn typed_url<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    String::deserialize(d).map(as_typed)
}

/// The same, for a `url` that may be left out.
pub(crate) fn typed_url_opt<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Option::<String>::deserialize(d).map(|url| url.map(as_typed))
}

pub(crate) fn check_url(url: &str) -> Result<(), String> {
    // The scheme check is deliberately light: the browser is the judge of what loads. The
    // scheme is read as the browser reads it, so that `targets` judges a disguised
    // `javascript:` rather than this check.
    match crate::targets::scheme(url) {
        Some(scheme)
            if !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) =>
        {
            Ok(())
        }
        _ => Err(format!(
            "url must be absolute, with a scheme such as https://, got {url:?}"
        )),
    }
}

pub(crate) fn check_timeout(timeout_ms: Option<u64>) -> Result<(), String> {
    match timeout_ms {
        Some(0) => Err("timeoutMs must be at least 1".into()),
        Some(t) if t > MAX_TIMEOUT_MS => Err(format!("timeoutMs must be at most {MAX_TIMEOUT_MS}, got {t}")),
        _ => Ok(()),
    }
}

/// The longest file name kept, in bytes (what file systems allow).
pub const MAX_FILE_NAME_BYTES: usize = 255;

/// Whether `name` can be one part of a path as it is: 1 to 255 bytes, no separators, no
/// control characters, not `.` or `..`. Uploaded file names and artifact ids are held to it.
pub fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_FILE_NAME_BYTES
        && name != "."
        && name != ".."
        && !name.chars().any(|c| c == '/' || c == '\\' || c.is_control())
}

/// The element an action addresses (docs/protocol.md §9): by `xpath`, or by `ref` (`eN`, from
/// browser_snapshot or browser_xpath_scan). The page library reads it as `{xpath}` or `{ref}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Element<'a> {
    Xpath(&'a str),
    Ref(&'a str),
}

impl<'a> Element<'a> {
    /// The element an action's `xpath`/`ref` pair names: one of the two, or neither.
    pub fn named(xpath: &'a Option<String>, r#ref: &'a Option<String>) -> Result<Option<Self>, String> {
        match (xpath, r#ref) {
            (Some(_), Some(_)) => Err("give the element's xpath or its ref, not both".into()),
            (Some(xpath), None) => check_xpath(xpath).map(|()| Some(Self::Xpath(xpath))),
            (None, Some(r#ref)) => check_ref(r#ref).map(|()| Some(Self::Ref(r#ref))),
            (None, None) => Ok(None),
        }
    }

    /// As [`Element::named`], for actions that need an element.
    pub fn required(xpath: &'a Option<String>, r#ref: &'a Option<String>) -> Result<Self, String> {
        Self::named(xpath, r#ref)?.ok_or_else(|| {
            "give the element: its xpath, or its ref (eN) from browser_snapshot or browser_xpath_scan".into()
        })
    }
}

fn check_xpath(xpath: &str) -> Result<(), String> {
    if xpath.trim().is_empty() {
        return Err("xpath must not be empty; take one from browser_xpath_scan".into());
    }
    Ok(())
}

fn check_ref(r#ref: &str) -> Result<(), String> {
    match r#ref.strip_prefix('e') {
        Some(n) if !n.is_empty() && n.len() <= 15 && n.bytes().all(|b| b.is_ascii_digit()) => Ok(()),
        _ => Err(format!(
            "ref is an element's ref such as \"e12\", as browser_snapshot or browser_xpath_scan gives it; got {ref:?}"
        )),
    }
}

/// The params of an action that needs only its tab.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OnTab {
    /// The tab to act on: the tabId session_start returned, or one in a click's openedTabIds.
    pub tab_id: TabId,
}

impl super::ActionParams for OnTab {
    fn tab_id(&self) -> Option<TabId> {
        Some(self.tab_id)
    }
}

/// How long an action that loads a document waits for its load event, unless told.
pub const LOAD_TIMEOUT_MS: u64 = 20_000;

/// The params of an action that loads a document in the tab and waits for it: history
/// navigation and reload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct LoadWait {
    /// The tab to act on: the tabId session_start returned, or one in a click's openedTabIds.
    pub tab_id: TabId,
    /// How long to wait for the load event; past it the result says status "loading".
    #[serde(default)]
    #[schemars(extend("default" = LOAD_TIMEOUT_MS))]
    #[schemars(range(min = 1, max = crate::actions::fields::MAX_TIMEOUT_MS))]
    pub timeout_ms: Option<u64>,
    /// How to answer the JavaScript dialogs that open during this action; when absent, alert
    /// and beforeunload are accepted, confirm and prompt dismissed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialog: Option<DialogAnswer>,
    /// What to show of the page once it loaded: "none", "recent" (what changed since this session's previous snapshot of the tab) or "gist".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "none"))]
    pub observe: Option<Observe>,
    /// Cut what observe shows past this many characters (200 or more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = OBSERVE_MAX_CHARS))]
    #[schemars(range(min = OBSERVE_MIN_CHARS))]
    pub observe_max_chars: Option<u32>,
    /// "auto": end once the page settled (what the action set going finished, then a frame); "none": at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "auto"))]
    pub settle: Option<Settle>,
    /// The most to wait for the page to settle, in ms (100-30000); past it the action ends anyway.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = SETTLE_MS))]
    #[schemars(range(min = 100, max = 30000))]
    pub settle_ms: Option<u64>,
}

impl super::ActionParams for LoadWait {
    fn tab_id(&self) -> Option<TabId> {
        Some(self.tab_id)
    }

    fn check(&self) -> Result<(), String> {
        check_timeout(self.timeout_ms)
    }

    fn dialog(&self) -> Option<&DialogAnswer> {
        self.dialog.as_ref()
    }

    fn observe(&self) -> Option<(Observe, u32)> {
        self.observe
            .map(|o| (o, self.observe_max_chars.unwrap_or(OBSERVE_MAX_CHARS)))
    }

    fn settle(&self) -> Option<(Settle, u64)> {
        Some((
            self.settle.unwrap_or_default(),
            self.settle_ms.unwrap_or(SETTLE_MS),
        ))
    }
}

/// A point of the viewport, in CSS pixels.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

/// An element as a result names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ElementSeen {
    /// Its tag name, lowercase.
    pub tag: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// An XPath to it, as the element actions take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xpath: Option<String>,
}

/// What an action that changes the page shows of it once it settled (docs/protocol.md §17).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Observe {
    /// Nothing: read the page with browser_snapshot when you need it.
    #[default]
    None,
    /// What changed since the session's previous snapshot of the tab (browser_snapshot's recent).
    Recent,
    /// A few lines: title, main heading, counts, open dialogs.
    Gist,
}

/// Whether an action that can change the page ends once the page settled after it
/// (docs/protocol.md §20).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Settle {
    /// Wait for what the action set going (a navigation, requests, short timers and
    /// animations), then one frame.
    #[default]
    Auto,
    /// Return as soon as the action itself is done.
    None,
}

/// The most an action waits for the page to settle, unless told (`settleMs`).
pub const SETTLE_MS: u64 = 5_000;
/// What `settleMs` may be.
pub const SETTLE_MS_RANGE: std::ops::RangeInclusive<u64> = 100..=30_000;

/// What an action waited for once its own work was done (docs/protocol.md §20): a result's
/// `settled`, present when anything was waited for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Settled {
    /// The time spent settling.
    pub ms: u64,
    pub waited: Waited,
    /// What still ran when `settleMs` ran out (at most 5).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<PendingWork>,
    /// The form fields whose validation stopped a submit the action made (at most 5), with
    /// the browser's message: the form was not sent.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub invalid: Vec<InvalidField>,
}

/// A form field the browser's validation refused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct InvalidField {
    /// The field as a person reads it: its label, else its name or id.
    pub field: String,
    /// The browser's validation message ("Please fill out this field.").
    pub message: String,
}

/// How much of each kind an action's settling waited for.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Waited {
    /// A navigation of the tab the action caused.
    pub navigation: bool,
    pub requests: u32,
    pub timers: u32,
    pub animations: u32,
}

/// Something the action set going that still ran when settling stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct PendingWork {
    /// "request", "timer" or "animation".
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// How many characters of the page an `observe` shows unless told.
pub const OBSERVE_MAX_CHARS: u32 = 4000;
/// The fewest an `observe` may be held to (a snapshot's own least).
pub const OBSERVE_MIN_CHARS: u32 = 200;

#[cfg(test)]
mod typed {
    use super::as_typed;

    #[test]
    fn an_address_without_a_scheme_is_read_as_the_address_bar_reads_it() {
        for (typed, read) in [
            ("example.com", "https://example.com"),
            ("www.example.com/a?b#c", "https://www.example.com/a?b#c"),
            ("127.0.0.1:8765/form.html", "http://127.0.0.1:8765/form.html"),
            ("localhost:8080", "http://localhost:8080"),
            ("localhost", "http://localhost"),
            ("[::1]:3000/x", "http://[::1]:3000/x"),
            ("example.com:8443/", "http://example.com:8443/"),
        ] {
            assert_eq!(as_typed(typed.into()), read, "{typed}");
        }
        for kept in [
            "https://example.com/",
            "about:blank",
            "javascript:alert(1)",
            "mailto:a@example.com",
            " chrome://version",
            "file:///etc/passwd",
            "data:text/html,hi",
            "example",
            "exa mple.com",
            "",
        ] {
            assert_eq!(as_typed(kept.into()), kept, "{kept}");
        }
    }
}
