//! The browser-action catalog (PROTOCOL.md §4): action names, typed params and results.
//!
//! Params are parsed in two steps so that callers get the right code: an unknown name is
//! `UNKNOWN_ACTION`, and params that do not fit the action are `INVALID_PARAMS` with serde's
//! description of what is wrong (unknown fields are refused, so a misspelt `tabid` is caught).

use std::str::FromStr;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ActionError, ErrorCode};

/// A browser tab, as Chrome numbers it (`chrome.tabs`), or as the worker numbers CDP targets.
pub type TabId = i64;

/// Upper bound on any `timeoutMs` in params; longer waits belong to the orchestrator.
pub const MAX_TIMEOUT_MS: u64 = 10 * 60 * 1000;

macro_rules! action_names {
    ($($variant:ident => $name:literal),+ $(,)?) => {
        /// Every action of the catalog, by its snake_case wire name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum ActionName { $($variant),+ }

        impl ActionName {
            pub const ALL: &'static [ActionName] = &[$(ActionName::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $(ActionName::$variant => $name),+ }
            }
        }

        impl FromStr for ActionName {
            type Err = ActionError;
            fn from_str(name: &str) -> Result<Self, ActionError> {
                match name {
                    $($name => Ok(ActionName::$variant),)+
                    other => Err(ActionError::new(
                        ErrorCode::UnknownAction,
                        format!("unknown action {other:?}; known actions: {}", ActionName::ALL.iter().map(|a| a.as_str()).collect::<Vec<_>>().join(", ")),
                    )),
                }
            }
        }
    };
}

action_names! {
    SessionStart => "session_start",
    SessionStop => "session_stop",
    BrowserDebuggerAttach => "browser_debugger_attach",
    BrowserNavigate => "browser_navigate",
    BrowserWaitForLoaded => "browser_wait_for_loaded",
    BrowserScreenshot => "browser_screenshot",
    BrowserReadabilityExtract => "browser_readability_extract",
    BrowserXpathScan => "browser_xpath_scan",
    BrowserClick => "browser_click",
    BrowserType => "browser_type",
    BrowserGetHtml => "browser_get_html",
}

impl ActionName {
    /// Whether the action addresses one tab through `tabId`.
    pub fn takes_tab(self) -> bool {
        !matches!(self, Self::SessionStart | Self::SessionStop)
    }
}

impl std::fmt::Display for ActionName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A parsed, validated action: what the host dispatches on.
#[derive(Debug, Clone, PartialEq)]
pub enum ActionCall {
    SessionStart(SessionStartParams),
    SessionStop(SessionStopParams),
    BrowserDebuggerAttach(TabParams),
    BrowserNavigate(NavigateParams),
    BrowserWaitForLoaded(WaitForLoadedParams),
    BrowserScreenshot(ScreenshotParams),
    BrowserReadabilityExtract(TabParams),
    BrowserXpathScan(XpathScanParams),
    BrowserClick(ClickParams),
    BrowserType(TypeParams),
    BrowserGetHtml(GetHtmlParams),
}

impl ActionCall {
    /// Parses `actionName` + `params` from a `browser_action` payload. `null` params mean `{}`.
    pub fn parse(action_name: &str, params: Value) -> Result<Self, ActionError> {
        let name: ActionName = action_name.parse()?;
        let params = if params.is_null() {
            Value::Object(Default::default())
        } else {
            params
        };
        let call = match name {
            ActionName::SessionStart => Self::SessionStart(from_params(name, params)?),
            ActionName::SessionStop => Self::SessionStop(from_params(name, params)?),
            ActionName::BrowserDebuggerAttach => Self::BrowserDebuggerAttach(from_params(name, params)?),
            ActionName::BrowserNavigate => Self::BrowserNavigate(from_params(name, params)?),
            ActionName::BrowserWaitForLoaded => Self::BrowserWaitForLoaded(from_params(name, params)?),
            ActionName::BrowserScreenshot => Self::BrowserScreenshot(from_params(name, params)?),
            ActionName::BrowserReadabilityExtract => {
                Self::BrowserReadabilityExtract(from_params(name, params)?)
            }
            ActionName::BrowserXpathScan => Self::BrowserXpathScan(from_params(name, params)?),
            ActionName::BrowserClick => Self::BrowserClick(from_params(name, params)?),
            ActionName::BrowserType => Self::BrowserType(from_params(name, params)?),
            ActionName::BrowserGetHtml => Self::BrowserGetHtml(from_params(name, params)?),
        };
        call.validate()
            .map_err(|why| ActionError::invalid_params(format!("{name}: {why}")))?;
        Ok(call)
    }

    pub fn name(&self) -> ActionName {
        match self {
            Self::SessionStart(_) => ActionName::SessionStart,
            Self::SessionStop(_) => ActionName::SessionStop,
            Self::BrowserDebuggerAttach(_) => ActionName::BrowserDebuggerAttach,
            Self::BrowserNavigate(_) => ActionName::BrowserNavigate,
            Self::BrowserWaitForLoaded(_) => ActionName::BrowserWaitForLoaded,
            Self::BrowserScreenshot(_) => ActionName::BrowserScreenshot,
            Self::BrowserReadabilityExtract(_) => ActionName::BrowserReadabilityExtract,
            Self::BrowserXpathScan(_) => ActionName::BrowserXpathScan,
            Self::BrowserClick(_) => ActionName::BrowserClick,
            Self::BrowserType(_) => ActionName::BrowserType,
            Self::BrowserGetHtml(_) => ActionName::BrowserGetHtml,
        }
    }

    /// The parsed params as JSON, every field present (defaults filled in).
    pub fn params_json(&self) -> Value {
        let json = match self {
            Self::SessionStart(p) => serde_json::to_value(p),
            Self::SessionStop(p) => serde_json::to_value(p),
            Self::BrowserDebuggerAttach(p) | Self::BrowserReadabilityExtract(p) => serde_json::to_value(p),
            Self::BrowserNavigate(p) => serde_json::to_value(p),
            Self::BrowserWaitForLoaded(p) => serde_json::to_value(p),
            Self::BrowserScreenshot(p) => serde_json::to_value(p),
            Self::BrowserXpathScan(p) => serde_json::to_value(p),
            Self::BrowserClick(p) => serde_json::to_value(p),
            Self::BrowserType(p) => serde_json::to_value(p),
            Self::BrowserGetHtml(p) => serde_json::to_value(p),
        };
        // Plain structs of strings, numbers and booleans always serialise.
        json.unwrap_or_default()
    }

    /// The tab the action addresses, if it addresses one.
    pub fn tab_id(&self) -> Option<TabId> {
        match self {
            Self::SessionStart(_) | Self::SessionStop(_) => None,
            Self::BrowserDebuggerAttach(p) | Self::BrowserReadabilityExtract(p) => Some(p.tab_id),
            Self::BrowserNavigate(p) => Some(p.tab_id),
            Self::BrowserWaitForLoaded(p) => Some(p.tab_id),
            Self::BrowserScreenshot(p) => Some(p.tab_id),
            Self::BrowserXpathScan(p) => Some(p.tab_id),
            Self::BrowserClick(p) => Some(p.tab_id),
            Self::BrowserType(p) => Some(p.tab_id),
            Self::BrowserGetHtml(p) => Some(p.tab_id),
        }
    }

    /// Checks what serde's types cannot say; the message names the param and what to fix.
    fn validate(&self) -> Result<(), String> {
        match self {
            Self::SessionStart(p) => p.url.as_deref().map_or(Ok(()), check_url),
            Self::BrowserNavigate(p) => {
                check_url(&p.url)?;
                check_timeout(p.timeout_ms)
            }
            Self::BrowserWaitForLoaded(p) => check_timeout(p.timeout_ms),
            Self::BrowserScreenshot(p) => {
                if let Some(q) = p.quality {
                    if q > 100 {
                        return Err(format!("quality must be 0-100, got {q}"));
                    }
                    if p.format != ImageFormat::Jpeg {
                        return Err("quality applies to format \"jpeg\" only".into());
                    }
                }
                match p.max_width {
                    Some(0) => Err("maxWidth must be at least 1".into()),
                    _ => Ok(()),
                }
            }
            Self::BrowserClick(ClickParams { xpath, .. }) | Self::BrowserType(TypeParams { xpath, .. }) => {
                check_xpath(xpath)
            }
            Self::BrowserGetHtml(p) => p.xpath.as_deref().map_or(Ok(()), check_xpath),
            Self::SessionStop(_)
            | Self::BrowserDebuggerAttach(_)
            | Self::BrowserReadabilityExtract(_)
            | Self::BrowserXpathScan(_) => Ok(()),
        }
    }
}

fn from_params<T: DeserializeOwned>(name: ActionName, params: Value) -> Result<T, ActionError> {
    serde_json::from_value(params).map_err(|e| ActionError::invalid_params(format!("{name}: {e}")))
}

fn check_url(url: &str) -> Result<(), String> {
    // The scheme check is deliberately light: the browser is the judge of what loads.
    match url.split_once(':') {
        Some((scheme, _))
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

fn check_timeout(timeout_ms: Option<u64>) -> Result<(), String> {
    match timeout_ms {
        Some(0) => Err("timeoutMs must be at least 1".into()),
        Some(t) if t > MAX_TIMEOUT_MS => Err(format!("timeoutMs must be at most {MAX_TIMEOUT_MS}, got {t}")),
        _ => Ok(()),
    }
}

fn check_xpath(xpath: &str) -> Result<(), String> {
    if xpath.trim().is_empty() {
        return Err("xpath must not be empty; take one from browser_xpath_scan".into());
    }
    Ok(())
}

fn default_true() -> bool {
    true
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionStartParams {
    #[serde(default)]
    pub url: Option<String>,
    #[serde(default)]
    pub reuse_existing_tab: bool,
    #[serde(default)]
    pub group_title: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionStopParams {
    #[serde(default = "default_true")]
    pub close_tab: bool,
}

/// Params of actions that need nothing but the tab.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TabParams {
    pub tab_id: TabId,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NavigateParams {
    pub tab_id: TabId,
    pub url: String,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WaitForLoadedParams {
    pub tab_id: TabId,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
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

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ScreenshotParams {
    pub tab_id: TabId,
    #[serde(default)]
    pub full_page: bool,
    #[serde(default)]
    pub format: ImageFormat,
    #[serde(default)]
    pub quality: Option<u8>,
    #[serde(default)]
    pub max_width: Option<u32>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScanScope {
    #[default]
    Viewport,
    Document,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct XpathScanParams {
    pub tab_id: TabId,
    #[serde(default)]
    pub scope: ScanScope,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ClickParams {
    pub tab_id: TabId,
    pub xpath: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TypeParams {
    pub tab_id: TabId,
    pub xpath: String,
    pub text: String,
    #[serde(default)]
    pub submit: bool,
    #[serde(default = "default_true")]
    pub clear: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GetHtmlParams {
    pub tab_id: TabId,
    #[serde(default)]
    pub xpath: Option<String>,
}

// ---- results -------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStartResult {
    pub tab_id: TabId,
    pub window_id: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<i64>,
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NavigateResult {
    pub url: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// `"complete"`, or `"loading"` when the load event had not come within `timeoutMs`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
}

/// A stored blob (screenshot, HTML, long text), referenced instead of inlined.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactRef {
    pub artifact_id: String,
    pub url: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScreenshotResult {
    pub artifact_id: String,
    pub url: String,
    pub width: u32,
    pub height: u32,
    pub format: ImageFormat,
    pub bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadabilityResult {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub markdown: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byline: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub excerpt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BBox {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScannedElement {
    pub xpath: String,
    pub tag: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bbox: Option<BBox>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attributes: Option<serde_json::Map<String, Value>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub occluded: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct XpathScanResult {
    pub elements: Vec<ScannedElement>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HtmlResult {
    pub artifact_id: String,
    pub url: String,
    pub bytes: u64,
}

/// A JavaScript dialog the host answered during an action.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dialog {
    #[serde(rename = "type")]
    pub kind: String,
    pub message: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(name: &str, params: Value) -> ActionError {
        ActionCall::parse(name, params).unwrap_err()
    }

    #[test]
    fn every_name_round_trips() {
        for name in ActionName::ALL {
            assert_eq!(name.as_str().parse::<ActionName>().unwrap(), *name);
            assert_eq!(serde_json::to_value(name).unwrap(), json!(name.as_str()));
        }
    }

    #[test]
    fn unknown_actions_and_bad_params_get_distinct_codes() {
        let e = err("browser_hover", json!({}));
        assert_eq!(e.code, ErrorCode::UnknownAction);
        assert!(e.message.contains("browser_click"), "{}", e.message);

        let e = err("browser_click", json!({"tabId": 1}));
        assert_eq!(e.code, ErrorCode::InvalidParams);
        assert!(e.message.contains("missing field `xpath`"), "{}", e.message);

        let e = err("browser_click", json!({"tabId": 1, "xPath": "//a"}));
        assert!(e.message.contains("unknown field `xPath`"), "{}", e.message);

        let e = err("browser_navigate", json!({"tabId": "1", "url": "https://a"}));
        assert!(e.message.contains("invalid type"), "{}", e.message);
    }

    #[test]
    fn semantic_checks_name_the_param() {
        let e = err(
            "browser_screenshot",
            json!({"tabId": 1, "format": "jpeg", "quality": 101}),
        );
        assert!(e.message.contains("quality"), "{}", e.message);
        let e = err("browser_navigate", json!({"tabId": 1, "url": "example.com"}));
        assert!(e.message.contains("absolute"), "{}", e.message);
        let e = err("browser_wait_for_loaded", json!({"tabId": 1, "timeoutMs": 0}));
        assert!(e.message.contains("timeoutMs"), "{}", e.message);
        let e = err("browser_type", json!({"tabId": 1, "xpath": " ", "text": "x"}));
        assert!(e.message.contains("xpath"), "{}", e.message);
    }

    #[test]
    fn defaults_follow_the_spec() {
        let ActionCall::SessionStop(p) = ActionCall::parse("session_stop", Value::Null).unwrap() else {
            panic!()
        };
        assert!(p.close_tab);
        let ActionCall::BrowserType(p) = ActionCall::parse(
            "browser_type",
            json!({"tabId": 3, "xpath": "//input", "text": "hi"}),
        )
        .unwrap() else {
            panic!()
        };
        assert!(p.clear && !p.submit);
        let ActionCall::BrowserScreenshot(p) =
            ActionCall::parse("browser_screenshot", json!({"tabId": 3})).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (p.format, p.full_page, p.max_width),
            (ImageFormat::Png, false, None)
        );
    }
}
