//! `browser_tabs`: the session's tabs: list them, open one, close one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::fields::{check_url, TabId};
use super::{About, ActionParams, Category, ReadsAs};

pub const ABOUT: About = About {
    label: "Tabs",
    category: Category::Session,
    description: "Lists the session's own tabs in the order they joined (action \"list\", the default), opens one in the background in the session's group (\"open\", with url; it joins the session), makes one the session's current tab (\"select\", with tabId: where MCP calls without a tabId go), or closes one (\"close\", with tabId). Returns the tabs after the action.",
    waits_for: None,
    reads_as: ReadsAs::Json,
    example: None,
};

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TabsAction {
    #[default]
    List,
    Open,
    /// Makes a session tab the current one: where an agent's calls without a tabId go.
    Select,
    Close,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Params {
    /// "list", "open", "select" or "close".
    #[serde(default)]
    #[schemars(extend("default" = "list"))]
    pub action: TabsAction,
    /// The page to open (open); about:blank when absent.
    #[serde(default, deserialize_with = "super::fields::typed_url_opt")]
    pub url: Option<String>,
    /// The session tab to select or close.
    #[serde(default)]
    pub tab_id: Option<TabId>,
}

impl ActionParams for Params {
    fn tab_id(&self) -> Option<TabId> {
        // Selecting and closing check the tab is the session's like any tab action; the others
        // name none.
        match self.action {
            TabsAction::Select | TabsAction::Close => self.tab_id,
            TabsAction::List | TabsAction::Open => None,
        }
    }

    fn check(&self) -> Result<(), String> {
        match (self.action, &self.url, self.tab_id) {
            (TabsAction::Close, _, None) => Err("close needs the tabId to close".into()),
            (TabsAction::Select, _, None) => Err("select needs the tabId to make current".into()),
            (TabsAction::Close | TabsAction::Select | TabsAction::List, Some(_), _) => {
                Err("url is for open only".into())
            }
            (TabsAction::Open | TabsAction::List, _, Some(_)) => {
                Err("tabId is for select and close only".into())
            }
            (TabsAction::Open, Some(url), _) => check_url(url),
            _ => Ok(()),
        }
    }
}

/// One tab of the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SessionTab {
    pub tab_id: TabId,
    pub url: String,
    pub title: String,
    /// "loading" or "complete".
    pub status: String,
    /// The tab that opened it, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opener_tab_id: Option<TabId>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Output {
    /// The session's tabs after the action, in the order they joined.
    pub tabs: Vec<SessionTab>,
    /// The tab opened (open) or selected (select).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab_id: Option<TabId>,
}
