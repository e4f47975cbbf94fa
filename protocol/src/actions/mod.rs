//! The browser-action catalog (docs/protocol.md §4): one file per action holding its params, its
//! result (`Output`) and what it tells an agent about itself (`ABOUT`), plus one row in
//! [`with_catalog!`]. From those the table makes the rest: the name enum, the parsed call, and
//! each descriptor (built from the types' JSON Schemas, so a descriptor cannot drift from the
//! fields serde reads and writes).
//!
//! Params are parsed in two steps so that callers get the right code: an unknown name is
//! `UNKNOWN_ACTION`, and params that do not fit the action are `INVALID_PARAMS` with serde's
//! description of what is wrong (unknown fields are refused, so a misspelt `tabid` is caught).

pub mod fields;

pub mod browser_click;
pub mod browser_console;
pub mod browser_debugger_attach;
pub mod browser_downloads;
pub mod browser_drag;
pub mod browser_evaluate;
pub mod browser_fill_form;
pub mod browser_get_html;
pub mod browser_go_back;
pub mod browser_go_forward;
pub mod browser_handoff;
pub mod browser_hover;
pub mod browser_mouse;
pub mod browser_navigate;
pub mod browser_network;
pub mod browser_pdf;
pub mod browser_press_key;
pub mod browser_readability_extract;
pub mod browser_reload;
pub mod browser_resize;
pub mod browser_screenshot;
pub mod browser_scroll;
pub mod browser_secrets;
pub mod browser_select_option;
pub mod browser_snapshot;
pub mod browser_storage_state;
pub mod browser_tabs;
pub mod browser_type;
pub mod browser_upload_file;
pub mod browser_wait_for;
pub mod browser_wait_for_loaded;
pub mod browser_xpath_scan;
pub mod session_start;
pub mod session_stop;

use std::fmt::Debug;
use std::str::FromStr;
use std::sync::LazyLock;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use fields::{
    is_plain_file_name, ArtifactRef, BBox, Dialog, DialogAnswer, Element, ImageFormat, Observe, Settle,
    TabId, MAX_FILE_NAME_BYTES, MAX_TIMEOUT_MS,
};

use crate::descriptors::{self, ActionDescriptor};
pub use crate::descriptors::{About, Category, ReadsAs};
use crate::error::{ActionError, ErrorCode};

/// What every action's `Params` can answer once parsed.
pub trait ActionParams: Serialize + DeserializeOwned + JsonSchema + Clone + Debug + PartialEq {
    /// The tab the action addresses, if it addresses one.
    fn tab_id(&self) -> Option<TabId>;

    /// Checks what serde's types cannot say; the message names the param and what to fix.
    fn check(&self) -> Result<(), String> {
        Ok(())
    }

    /// How to answer the dialogs this action opens (its `dialog` param), where it has one.
    fn dialog(&self) -> Option<&DialogAnswer> {
        None
    }

    /// What to show of the page once the action settled, and at most how many characters (its
    /// `observe` and `observeMaxChars` params), where it changes the page.
    fn observe(&self) -> Option<(Observe, u32)> {
        None
    }

    /// Whether the action ends once the page settled, and the most it waits for that (its
    /// `settle` and `settleMs` params), where it changes the page.
    fn settle(&self) -> Option<(Settle, u64)> {
        None
    }
}

/// Writes `impl ActionParams for Params` of an action on one tab: its `tabId`, and for each flag
/// given: `dialog`, the answers of its `dialog` param; `observe`, its `observe` and
/// `observeMaxChars` params; `element`, the check that it names its element. With
/// `check = |p| { .. }`, what serde's types cannot say, `p` being the params.
#[macro_export]
macro_rules! tab_action_params {
    ($(check = |$p:ident| $check:block)?) => {
        $crate::tab_action_params!(@impl [] $(check = |$p| $check)?);
    };
    (dialog, observe, element) => {
        $crate::tab_action_params!(@impl [dialog observe element]);
    };
    (dialog, element) => {
        $crate::tab_action_params!(@impl [dialog element]);
    };
    (dialog, observe $(, check = |$p:ident| $check:block)?) => {
        $crate::tab_action_params!(@impl [dialog observe] $(check = |$p| $check)?);
    };
    (dialog $(, check = |$p:ident| $check:block)?) => {
        $crate::tab_action_params!(@impl [dialog] $(check = |$p| $check)?);
    };
    (observe $(, check = |$p:ident| $check:block)?) => {
        $crate::tab_action_params!(@impl [observe] $(check = |$p| $check)?);
    };
    (@impl [$($flag:ident)*] $(check = |$p:ident| $check:block)?) => {
        impl $crate::actions::ActionParams for Params {
            fn tab_id(&self) -> Option<$crate::actions::TabId> {
                Some(self.tab_id)
            }

            $(fn check(&self) -> Result<(), String> {
                let $p = self;
                $check
            })?

            $($crate::tab_action_params!(@flag $flag);)*
        }
    };
    (@flag dialog) => {
        fn dialog(&self) -> Option<&$crate::actions::fields::DialogAnswer> {
            self.dialog.as_ref()
        }
    };
    (@flag observe) => {
        fn observe(&self) -> Option<($crate::actions::fields::Observe, u32)> {
            let max = self.observe_max_chars.unwrap_or($crate::actions::fields::OBSERVE_MAX_CHARS);
            self.observe.map(|o| (o, max))
        }

        fn settle(&self) -> Option<($crate::actions::fields::Settle, u64)> {
            let ms = self.settle_ms.unwrap_or($crate::actions::fields::SETTLE_MS);
            Some((self.settle.unwrap_or_default(), ms))
        }
    };
    (@flag element) => {
        fn check(&self) -> Result<(), String> {
            $crate::actions::fields::Element::required(&self.xpath, &self.r#ref).map(drop)
        }
    };
}

/// Writes the `Params` of an action on one tab that may change its page: `tabId`, the
/// action's own fields as written, then `observe` and `observeMaxChars`.
#[macro_export]
macro_rules! page_params {
    ($($fields:tt)*) => {
        #[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        pub struct Params {
            /// The tab to act on: the tabId session_start returned, or one in a click's openedTabIds.
            pub tab_id: $crate::actions::TabId,
            $($fields)*
            /// What to show of the page once the action settled: "none", "recent" (what changed since this session's previous snapshot of the tab) or "gist".
            #[serde(default, skip_serializing_if = "Option::is_none")]
            #[schemars(extend("default" = "none"))]
            pub observe: Option<$crate::actions::fields::Observe>,
            /// Cut what observe shows past this many characters (200 or more).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            #[schemars(extend("default" = $crate::actions::fields::OBSERVE_MAX_CHARS))]
            #[schemars(range(min = $crate::actions::fields::OBSERVE_MIN_CHARS))]
            pub observe_max_chars: Option<u32>,
            /// "auto": end once the page settled (what the action set going finished, then a frame); "none": at once.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            #[schemars(extend("default" = "auto"))]
            pub settle: Option<$crate::actions::fields::Settle>,
            /// The most to wait for the page to settle, in ms (100-30000); past it the action ends anyway.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            #[schemars(extend("default" = $crate::actions::fields::SETTLE_MS))]
            #[schemars(range(min = 100, max = 30000))]
            pub settle_ms: Option<u64>,
        }
    };
}

/// Writes the `Params` of an action on one element of a tab ([`page_params!`]'s, so it may
/// change the page): `xpath`, described as the action names its element; `ref`; the action's
/// own fields, as written after `xpath`; and `dialog`.
#[macro_export]
macro_rules! element_params {
    (xpath = $xpath:literal, $($fields:tt)*) => {
        $crate::page_params!(
            #[doc = $xpath]
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub xpath: Option<String>,
            /// In place of xpath: the element's ref (eN), as browser_snapshot or browser_xpath_scan returns it.
            #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
            pub r#ref: Option<String>,
            $($fields)*
            /// How to answer the JavaScript dialogs that open during this action; when absent, alert
            /// and beforeunload are accepted, confirm and prompt dismissed.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub dialog: Option<$crate::actions::fields::DialogAnswer>,
        );
    };
}

/// The catalog: `Variant module` per action, in the order it is listed to agents. It hands the
/// rows to `$callback`, so the host generates its dispatch from the same table.
#[macro_export]
macro_rules! with_catalog {
    ($callback:ident) => {
        $callback! {
            SessionStart session_start,
            SessionStop session_stop,
            BrowserDebuggerAttach browser_debugger_attach,
            BrowserTabs browser_tabs,
            BrowserNavigate browser_navigate,
            BrowserWaitForLoaded browser_wait_for_loaded,
            BrowserWaitFor browser_wait_for,
            BrowserGoBack browser_go_back,
            BrowserGoForward browser_go_forward,
            BrowserReload browser_reload,
            BrowserScreenshot browser_screenshot,
            BrowserSnapshot browser_snapshot,
            BrowserReadabilityExtract browser_readability_extract,
            BrowserXpathScan browser_xpath_scan,
            BrowserClick browser_click,
            BrowserHover browser_hover,
            BrowserDrag browser_drag,
            BrowserMouse browser_mouse,
            BrowserPressKey browser_press_key,
            BrowserSelectOption browser_select_option,
            BrowserScroll browser_scroll,
            BrowserResize browser_resize,
            BrowserType browser_type,
            BrowserFillForm browser_fill_form,
            BrowserUploadFile browser_upload_file,
            BrowserGetHtml browser_get_html,
            BrowserPdf browser_pdf,
            BrowserEvaluate browser_evaluate,
            BrowserConsole browser_console,
            BrowserNetwork browser_network,
            BrowserDownloads browser_downloads,
            BrowserStorageState browser_storage_state,
            BrowserSecrets browser_secrets,
            BrowserHandoff browser_handoff,
        }
    };
}

macro_rules! define_catalog {
    ($($variant:ident $module:ident),+ $(,)?) => {
        /// Every action of the catalog, by its snake_case wire name.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum ActionName { $($variant),+ }

        impl ActionName {
            pub const ALL: &'static [ActionName] = &[$(ActionName::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $(ActionName::$variant => stringify!($module)),+ }
            }

            /// The JSON Schema of the action's params, as schemars writes it (MCP's tool
            /// `inputSchema` is made from it).
            pub fn params_schema(self) -> Value {
                match self {
                    $(ActionName::$variant => schemars::schema_for!($module::Params).to_value()),+
                }
            }

            /// What the action says of itself beyond its types (its module's `ABOUT`).
            pub fn about(self) -> About {
                match self {
                    $(ActionName::$variant => $module::ABOUT),+
                }
            }

            /// What the action waits for while it runs, as its `progress` events say it.
            pub fn waits_for(self) -> Option<&'static str> {
                self.about().waits_for
            }

            fn describe(self) -> ActionDescriptor {
                match self {
                    $(ActionName::$variant => descriptors::describe::<$module::Params, $module::Output>(
                        self.as_str(),
                        $module::ABOUT,
                    )),+
                }
            }
        }

        impl FromStr for ActionName {
            type Err = ActionError;
            fn from_str(name: &str) -> Result<Self, ActionError> {
                match name {
                    $(stringify!($module) => Ok(ActionName::$variant),)+
                    other => Err(ActionError::new(
                        ErrorCode::UnknownAction,
                        format!("unknown action {other:?}; known actions: {}", ActionName::ALL.iter().map(|a| a.as_str()).collect::<Vec<_>>().join(", ")),
                    )),
                }
            }
        }

        /// A parsed, checked action: what the host dispatches on.
        #[derive(Debug, Clone, PartialEq)]
        pub enum ActionCall { $($variant($module::Params)),+ }

        impl ActionCall {
            /// Parses `actionName` + `params` from a `browser_action` payload. `null` params
            /// mean `{}`.
            pub fn parse(action_name: &str, params: &Value) -> Result<Self, ActionError> {
                let name: ActionName = action_name.parse()?;
                let empty = Value::Object(Default::default());
                let params = if params.is_null() { &empty } else { params };
                let call = match name {
                    $(ActionName::$variant => Self::$variant(from_params(name, params)?)),+
                };
                call.params().check().map_err(|why| ActionError::invalid_params(format!("{name}: {why}")))?;
                if let Some((_, max)) = call.params().observe().filter(|(_, max)| *max < fields::OBSERVE_MIN_CHARS) {
                    let why = format!("observeMaxChars must be {} or more, not {max}", fields::OBSERVE_MIN_CHARS);
                    return Err(ActionError::invalid_params(format!("{name}: {why}")));
                }
                if let Some((_, ms)) = call.params().settle().filter(|(_, ms)| !fields::SETTLE_MS_RANGE.contains(ms)) {
                    let range = fields::SETTLE_MS_RANGE;
                    let why = format!("settleMs must be {} to {}, not {ms}", range.start(), range.end());
                    return Err(ActionError::invalid_params(format!("{name}: {why}")));
                }
                Ok(call)
            }

            pub fn name(&self) -> ActionName {
                match self { $(Self::$variant(_) => ActionName::$variant),+ }
            }

            fn params(&self) -> &dyn Checked {
                match self { $(Self::$variant(p) => p),+ }
            }
        }
    };
}

with_catalog!(define_catalog);

/// The object-safe part of [`ActionParams`], so the generated code matches on the name once.
trait Checked {
    fn tab_id(&self) -> Option<TabId>;
    fn check(&self) -> Result<(), String>;
    fn dialog(&self) -> Option<&DialogAnswer>;
    fn observe(&self) -> Option<(Observe, u32)>;
    fn settle(&self) -> Option<(Settle, u64)>;
    fn to_json(&self) -> Value;
}

impl<P: ActionParams> Checked for P {
    fn tab_id(&self) -> Option<TabId> {
        ActionParams::tab_id(self)
    }

    fn check(&self) -> Result<(), String> {
        ActionParams::check(self)
    }

    fn dialog(&self) -> Option<&DialogAnswer> {
        ActionParams::dialog(self)
    }

    fn observe(&self) -> Option<(Observe, u32)> {
        ActionParams::observe(self)
    }

    fn settle(&self) -> Option<(Settle, u64)> {
        ActionParams::settle(self)
    }

    fn to_json(&self) -> Value {
        // Plain structs of strings, numbers and booleans always serialise.
        serde_json::to_value(self).unwrap_or_default()
    }
}

impl ActionCall {
    /// How long the action may wait for the page to settle after it (docs/protocol.md §20):
    /// `None` when it does not settle (`settle: "none"`, or an action that changes no page).
    pub fn settle(&self) -> Option<std::time::Duration> {
        match self.params().settle() {
            Some((Settle::Auto, ms)) => Some(std::time::Duration::from_millis(ms)),
            _ => None,
        }
    }

    /// What to show of the page once the action settled, and at most how many characters.
    pub fn observe(&self) -> Option<(Observe, u32)> {
        self.params()
            .observe()
            .filter(|(observe, _)| *observe != Observe::None)
    }

    /// The tab the action addresses, if it addresses one.
    pub fn tab_id(&self) -> Option<TabId> {
        self.params().tab_id()
    }

    /// How to answer the dialogs that open while the action runs (`None`: the defaults).
    pub fn dialog(&self) -> Option<&DialogAnswer> {
        self.params().dialog()
    }

    /// The parsed params as JSON, every field present (defaults filled in).
    pub fn params_json(&self) -> Value {
        self.params().to_json()
    }
}

impl ActionName {
    /// The action's descriptor (built once per process).
    pub fn descriptor(self) -> &'static ActionDescriptor {
        // Declared in the order of `ALL`, so the discriminant is the index.
        &catalog()[self as usize]
    }

    /// Whether the action acts on one tab, named by its required `tabId`.
    pub fn takes_tab(self) -> bool {
        self.descriptor()
            .params
            .get("tabId")
            .is_some_and(|f| f.required == Some(true))
    }

    /// Whether `params` leave out (or null) the tab this action takes: a caller that acts on
    /// the session's current tab names it as the action starts (docs/protocol.md §3, §11).
    pub fn lacks_tab(self, params: &serde_json::Map<String, Value>) -> bool {
        self.takes_tab() && params.get("tabId").is_none_or(Value::is_null)
    }
}

impl ActionCall {
    /// Parses as [`ActionCall::parse`] does, a tab the params leave out
    /// ([`ActionName::lacks_tab`]) taken as given: whoever left it out names it later.
    pub fn parse_leaving_tab(action_name: &str, params: &Value) -> Result<Self, ActionError> {
        let lacking = action_name
            .parse::<ActionName>()
            .is_ok_and(|action| params.as_object().is_some_and(|p| action.lacks_tab(p)));
        if !lacking {
            return Self::parse(action_name, params);
        }
        let mut given = params.clone();
        given["tabId"] = 0.into();
        Self::parse(action_name, &given)
    }
}

/// Every action's descriptor, in catalog order.
pub fn catalog() -> &'static [ActionDescriptor] {
    static CATALOG: LazyLock<Vec<ActionDescriptor>> =
        LazyLock::new(|| ActionName::ALL.iter().map(|name| name.describe()).collect());
    &CATALOG
}

impl std::fmt::Display for ActionName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Read from the caller's tree, not a copy of it: the relay checks every action's params and
/// then sends on the tree it has.
fn from_params<T: DeserializeOwned>(name: ActionName, params: &Value) -> Result<T, ActionError> {
    crate::read::from_value(params).map_err(|e| ActionError::invalid_params(format!("{name}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(name: &str, params: Value) -> ActionError {
        ActionCall::parse(name, &params).unwrap_err()
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
        let e = err("browser_teleport", json!({}));
        assert_eq!(e.code, ErrorCode::UnknownAction);
        assert!(e.message.contains("browser_click"), "{}", e.message);

        let e = err("browser_type", json!({"tabId": 1, "xpath": "//input"}));
        assert_eq!(e.code, ErrorCode::InvalidParams);
        assert!(e.message.contains("give the text to type"), "{}", e.message);
        let e = err(
            "browser_type",
            json!({"tabId": 1, "xpath": "//input", "text": "a", "secret": "b"}),
        );
        assert!(e.message.contains("not both"), "{}", e.message);
        let e = err("browser_click", json!({"tabId": 1}));
        assert!(e.message.contains("xpath or ref), or x and y"), "{}", e.message);

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
        let e = err("browser_navigate", json!({"tabId": 1, "url": "example"}));
        assert!(e.message.contains("absolute"), "{}", e.message);
        let e = err("browser_wait_for_loaded", json!({"tabId": 1, "timeoutMs": 0}));
        assert!(e.message.contains("timeoutMs"), "{}", e.message);
        let e = err("browser_type", json!({"tabId": 1, "xpath": " ", "text": "x"}));
        assert!(e.message.contains("xpath"), "{}", e.message);
    }

    #[test]
    fn element_actions_take_exactly_one_of_xpath_and_ref() {
        for (name, rest) in [
            ("browser_hover", json!({})),
            ("browser_type", json!({"text": "x"})),
            ("browser_select_option", json!({"values": ["a"]})),
        ] {
            let mut params = rest.as_object().unwrap().clone();
            params.insert("tabId".into(), json!(1));
            let neither = err(name, Value::Object(params.clone()));
            assert!(
                neither.message.contains("its xpath, or its ref"),
                "{name}: {}",
                neither.message
            );
            params.insert("xpath".into(), json!("//a"));
            params.insert("ref".into(), json!("e1"));
            assert!(
                err(name, Value::Object(params)).message.contains("not both"),
                "{name}"
            );
        }
        for bad in ["e", "12", "e1x", "E1", "e-1", "e12345678901234567"] {
            let e = err("browser_hover", json!({"tabId": 1, "ref": bad}));
            assert_eq!(e.code, ErrorCode::InvalidParams);
            assert!(e.message.contains("such as \"e12\""), "{bad}: {}", e.message);
        }
        let ActionCall::BrowserHover(p) =
            ActionCall::parse("browser_hover", &json!({"tabId": 1, "ref": "e7"})).unwrap()
        else {
            panic!()
        };
        assert_eq!(Element::required(&p.xpath, &p.r#ref), Ok(Element::Ref("e7")));
        // Optional elements may be left out, but not half given.
        assert!(ActionCall::parse("browser_scroll", &json!({"tabId": 1})).is_ok());
        let e = err("browser_scroll", json!({"tabId": 1, "intoView": true}));
        assert!(e.message.contains("xpath or ref"), "{}", e.message);
        let e = err("browser_wait_for", json!({"tabId": 1, "ref": "e2", "text": "x"}));
        assert!(e.message.contains("exactly one"), "{}", e.message);
        assert!(ActionCall::parse(
            "browser_wait_for",
            &json!({"tabId": 1, "ref": "e2", "state": "detached"})
        )
        .is_ok());
    }

    #[test]
    fn defaults_follow_the_spec() {
        let ActionCall::SessionStop(p) = ActionCall::parse("session_stop", &Value::Null).unwrap() else {
            panic!()
        };
        assert!(p.close_tab);
        let ActionCall::BrowserType(p) = ActionCall::parse(
            "browser_type",
            &json!({"tabId": 3, "xpath": "//input", "text": "hi"}),
        )
        .unwrap() else {
            panic!()
        };
        assert!(p.clear && !p.submit);
        let ActionCall::BrowserScreenshot(p) =
            ActionCall::parse("browser_screenshot", &json!({"tabId": 3})).unwrap()
        else {
            panic!()
        };
        assert_eq!(
            (p.format, p.full_page, p.max_width),
            (ImageFormat::Png, false, None)
        );
    }

    #[test]
    fn tab_actions_know_their_tab() {
        for name in ActionName::ALL {
            assert_eq!(
                name.takes_tab(),
                !matches!(
                    name,
                    ActionName::SessionStart
                        | ActionName::SessionStop
                        | ActionName::BrowserTabs
                        | ActionName::BrowserDownloads
                        | ActionName::BrowserStorageState
                        | ActionName::BrowserSecrets
                ),
                "{name}"
            );
        }
        let call = ActionCall::parse("browser_get_html", &json!({"tabId": 7})).unwrap();
        assert_eq!(call.tab_id(), Some(7));
        // Closing a tab checks it is the session's, like any tab action.
        let close = ActionCall::parse("browser_tabs", &json!({"action": "close", "tabId": 7})).unwrap();
        assert_eq!(close.tab_id(), Some(7));
        let list = ActionCall::parse("browser_tabs", &json!({})).unwrap();
        assert_eq!(list.tab_id(), None);
    }
}
