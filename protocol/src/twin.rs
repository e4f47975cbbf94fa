//! The browser twin's shapes (docs/protocol.md §2.5), defined once for the relay, the host and, by
//! this JSON, the extension (`extension/src/twin.js`): windows, tabs and tab groups, the
//! `full_state_sync` a host sends when it joins, each `tab_event` after it, and the
//! `twin_state_sync` the relay pushes to its subscribers.
//!
//! Fields the twin does not need default, so a browser that reports less is still understood.

use serde::{Deserialize, Serialize};

use crate::actions::TabId;

/// `chrome.windows.WINDOW_ID_NONE`: the window of a tab the browser names none for.
pub const WINDOW_ID_NONE: i64 = -1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tab {
    pub tab_id: TabId,
    #[serde(default)]
    pub window_id: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<i64>,
    /// The tab that opened this one (`window.open`, a link with a target).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opener_tab_id: Option<TabId>,
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub title: String,
    /// The tab its window shows.
    #[serde(default)]
    pub active: bool,
    /// `loading` or `complete`, as `chrome.tabs` says.
    #[serde(default = "complete")]
    pub status: String,
}

fn complete() -> String {
    "complete".into()
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Window {
    pub window_id: i64,
    /// The window the person is using.
    #[serde(default)]
    pub focused: bool,
    /// `normal`, `popup`, ... as `chrome.windows` says.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// `normal`, `minimized`, `maximized`, `fullscreen`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Group {
    pub group_id: i64,
    #[serde(default)]
    pub window_id: i64,
    #[serde(default)]
    pub title: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub color: Option<String>,
    #[serde(default)]
    pub collapsed: bool,
}

/// The whole browser: `full_state_sync`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FullState {
    #[serde(default)]
    pub windows: Vec<Window>,
    #[serde(default)]
    pub tabs: Vec<Tab>,
    #[serde(default)]
    pub groups: Vec<Group>,
}

/// One change: `tab_event`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum TabEvent {
    Created {
        tab: Tab,
    },
    Updated {
        tab: Tab,
    },
    Removed {
        tab_id: TabId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window_id: Option<i64>,
    },
    Activated {
        tab_id: TabId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window_id: Option<i64>,
    },
    GroupUpdated {
        group: Group,
    },
    GroupRemoved {
        group_id: i64,
    },
    WindowCreated {
        window: Window,
    },
    WindowRemoved {
        window_id: i64,
    },
}

/// What a host reports about its browser.
#[derive(Debug, Clone, PartialEq)]
pub enum TwinReport {
    Full(FullState),
    Event(TabEvent),
}

/// The relay's twin of one browser, as its subscribers get it: `twin_state_sync`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TwinSync {
    pub client_id: String,
    /// Grows by one with every change.
    pub version: u64,
    #[serde(flatten)]
    pub state: FullState,
    /// The active tab of the focused window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_tab_id: Option<TabId>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tab_events_read_as_the_extension_writes_them() {
        let removed: TabEvent =
            serde_json::from_value(json!({ "event": "removed", "tabId": 4, "windowId": 1 })).unwrap();
        assert_eq!(
            removed,
            TabEvent::Removed {
                tab_id: 4,
                window_id: Some(1)
            }
        );
        let created: TabEvent = serde_json::from_value(
            json!({ "event": "created", "tab": { "tabId": 2, "url": "about:blank" } }),
        )
        .unwrap();
        let TabEvent::Created { tab } = &created else {
            panic!("{created:?}")
        };
        assert_eq!((tab.tab_id, tab.status.as_str()), (2, "complete"));
        let group = json!({ "event": "group_updated", "group": { "groupId": 9, "windowId": 1, "title": "t", "color": "blue", "collapsed": false } });
        let read: TabEvent = serde_json::from_value(group.clone()).unwrap();
        assert_eq!(serde_json::to_value(read).unwrap(), group);
        for bad in [
            json!({ "event": "removed" }),
            json!({ "event": "exploded", "tabId": 1 }),
            json!({}),
        ] {
            assert!(serde_json::from_value::<TabEvent>(bad).is_err());
        }
    }

    #[test]
    fn a_twin_sync_is_flat() {
        let sync = TwinSync {
            client_id: "c".into(),
            version: 3,
            state: FullState::default(),
            active_tab_id: None,
        };
        assert_eq!(
            serde_json::to_value(sync).unwrap(),
            json!({ "clientId": "c", "version": 3, "windows": [], "tabs": [], "groups": [] })
        );
    }
}
