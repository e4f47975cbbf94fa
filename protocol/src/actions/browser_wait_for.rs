//! `browser_wait_for`: waits until a text shows or goes, an element reaches a state, or the
//! tab's URL matches.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::{check_timeout, Element, TabId};
use super::{About, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Wait for",
    category: Category::Page,
    description: "Waits until exactly one condition holds: text appears (visible), textGone is no longer visible, the element at xpath reaches state (visible, hidden, attached, detached), or the tab's URL matches url (a glob: * is any run of characters). Follows the tab across navigations. Past timeoutMs: ACTION_TIMEOUT saying what was last seen.",
    waits_for: Some("is waiting for its condition"),
    reads_as: ReadsAs::Json,
    example: None,
};

/// The wait when `timeoutMs` is absent.
pub const DEFAULT_TIMEOUT_MS: u64 = 10_000;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ElementState {
    #[default]
    Visible,
    Hidden,
    Attached,
    Detached,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// The tab to act on: the tabId session_start returned, or one in a click's openedTabIds.
    pub tab_id: TabId,
    /// A text the page must show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// A text the page must no longer show.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_gone: Option<String>,
    /// An element (any XPath) that must reach `state`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xpath: Option<String>,
    /// In place of xpath: the element's ref (eN), as browser_snapshot or browser_xpath_scan returns it.
    #[serde(default, rename = "ref", skip_serializing_if = "Option::is_none")]
    pub r#ref: Option<String>,
    /// With xpath or ref: "visible", "hidden", "attached" or "detached".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = "visible"))]
    pub state: Option<ElementState>,
    /// A glob the tab's URL must match (* is any run of characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// How long to wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(extend("default" = DEFAULT_TIMEOUT_MS))]
    #[schemars(range(min = 1, max = crate::actions::fields::MAX_TIMEOUT_MS))]
    pub timeout_ms: Option<u64>,
}

crate::tab_action_params!(
    check = |p| {
        let given = [
            p.text.is_some(),
            p.text_gone.is_some(),
            p.xpath.is_some() || p.r#ref.is_some(),
            p.url.is_some(),
        ];
        if given.iter().filter(|g| **g).count() != 1 {
            return Err(
                "give exactly one of text, textGone, an element (xpath or ref, with state) or url".into(),
            );
        }
        if Element::named(&p.xpath, &p.r#ref)?.is_none() && p.state.is_some() {
            return Err("state goes with an element: its xpath or ref".into());
        }
        if [&p.text, &p.text_gone]
            .into_iter()
            .flatten()
            .any(|t| t.is_empty())
        {
            return Err("the text to wait for must not be empty".into());
        }
        check_timeout(p.timeout_ms)
    }
);

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// Always true: a wait that does not match is ACTION_TIMEOUT.
    pub matched: bool,
    /// How long the wait took, in milliseconds.
    pub elapsed_ms: u64,
}
