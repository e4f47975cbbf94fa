//! The browser twin (PROTOCOL.md §2.5): the relay's authoritative copy of each browser's
//! windows, tabs and tab groups, built from the host's `full_state_sync` and `tab_event`s.
//! Every change bumps its version; the twin is what `twin_state_sync` carries.
//!
//! `tab_event` payloads (the host decides them; documented in docs/architecture.md):
//! `created` / `updated` `{ tab }`, `removed` `{ tabId }`, `activated` `{ tabId, windowId? }`,
//! `group_updated` `{ group }`, `group_removed` `{ groupId }`, `window_created` `{ window }`,
//! `window_removed` `{ windowId }`.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// How many recent changes a twin remembers, for the `recent` Live Screen.
const RECENT: usize = 20;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tab {
    pub tab_id: i64,
    #[serde(default)]
    pub window_id: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_id: Option<i64>,
    #[serde(default)]
    pub url: String,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub active: bool,
    #[serde(default = "complete")]
    pub status: String,
}

fn complete() -> String {
    "complete".into()
}

/// One change, as a line a person (or a model) can read.
#[derive(Debug, Clone)]
pub struct Change {
    pub at: DateTime<Utc>,
    pub text: String,
}

#[derive(Debug, Clone, Default)]
pub struct Twin {
    pub version: u64,
    pub windows: Vec<Value>,
    pub tabs: Vec<Tab>,
    pub groups: Vec<Value>,
    pub recent: VecDeque<Change>,
}

#[derive(Debug, Deserialize)]
struct FullState {
    #[serde(default)]
    windows: Vec<Value>,
    #[serde(default)]
    tabs: Vec<Tab>,
    #[serde(default)]
    groups: Vec<Value>,
}

impl Twin {
    /// The `twin_state_sync` payload.
    pub fn payload(&self, client_id: &str) -> Value {
        let mut payload = json!({
            "clientId": client_id,
            "version": self.version,
            "windows": self.windows,
            "tabs": self.tabs,
            "groups": self.groups,
        });
        if let Some(active) = self.active_tab() {
            payload["activeTabId"] = json!(active.tab_id);
        }
        payload
    }

    /// The active tab of the focused window (the first window with one, when none says so).
    pub fn active_tab(&self) -> Option<&Tab> {
        let focused = self
            .windows
            .iter()
            .find(|w| w.get("focused").and_then(Value::as_bool) == Some(true))
            .and_then(window_id);
        self.tabs
            .iter()
            .filter(|t| t.active)
            .find(|t| focused.is_none_or(|w| t.window_id == w))
    }

    fn replace(&mut self, payload: &Value) -> Result<String, String> {
        let state: FullState =
            serde_json::from_value(payload.clone()).map_err(|e| format!("full_state_sync: {e}"))?;
        self.windows = state.windows;
        self.tabs = state.tabs;
        self.groups = state.groups;
        Ok(format!(
            "full sync: {} windows, {} tabs",
            self.windows.len(),
            self.tabs.len()
        ))
    }

    fn apply(&mut self, payload: &Value) -> Result<String, String> {
        let event = payload.get("event").and_then(Value::as_str).unwrap_or_default();
        let id = |key: &str| {
            payload
                .get(key)
                .and_then(Value::as_i64)
                .ok_or_else(|| format!("tab_event {event:?} needs an integer {key:?}"))
        };
        let object = |key: &str| {
            payload
                .get(key)
                .filter(|v| v.is_object())
                .cloned()
                .ok_or_else(|| format!("tab_event {event:?} needs a {key:?} object"))
        };
        match event {
            "created" | "updated" => {
                let tab: Tab =
                    serde_json::from_value(object("tab")?).map_err(|e| format!("tab_event tab: {e}"))?;
                let text = format!("tab {} {event}: {} ({})", tab.tab_id, tab.title, tab.url);
                if tab.active {
                    for other in self.tabs.iter_mut().filter(|t| t.window_id == tab.window_id) {
                        other.active = false;
                    }
                }
                match self.tabs.iter_mut().find(|t| t.tab_id == tab.tab_id) {
                    Some(known) => *known = tab,
                    None => self.tabs.push(tab),
                }
                Ok(text)
            }
            "removed" => {
                let tab = id("tabId")?;
                self.tabs.retain(|t| t.tab_id != tab);
                Ok(format!("tab {tab} closed"))
            }
            "activated" => {
                let tab = id("tabId")?;
                let window = payload
                    .get("windowId")
                    .and_then(Value::as_i64)
                    .or_else(|| self.tabs.iter().find(|t| t.tab_id == tab).map(|t| t.window_id));
                for t in self.tabs.iter_mut().filter(|t| Some(t.window_id) == window) {
                    t.active = t.tab_id == tab;
                }
                Ok(format!("tab {tab} activated"))
            }
            "group_updated" => upsert(&mut self.groups, object("group")?, "groupId", "group"),
            "group_removed" => remove(&mut self.groups, id("groupId")?, "groupId", "group"),
            "window_created" => upsert(&mut self.windows, object("window")?, "windowId", "window"),
            "window_removed" => {
                let window = id("windowId")?;
                self.tabs.retain(|t| t.window_id != window);
                remove(&mut self.windows, window, "windowId", "window")
            }
            other => Err(format!("unknown tab_event {other:?}")),
        }
    }

    fn note(&mut self, text: String) {
        self.version += 1;
        self.recent.push_back(Change { at: Utc::now(), text });
        while self.recent.len() > RECENT {
            self.recent.pop_front();
        }
    }
}

fn window_id(window: &Value) -> Option<i64> {
    window
        .get("windowId")
        .or_else(|| window.get("id"))
        .and_then(Value::as_i64)
}

fn upsert(list: &mut Vec<Value>, item: Value, key: &str, noun: &str) -> Result<String, String> {
    let id = item
        .get(key)
        .and_then(Value::as_i64)
        .ok_or_else(|| format!("a {noun} needs an integer {key:?}"))?;
    match list
        .iter_mut()
        .find(|v| v.get(key).and_then(Value::as_i64) == Some(id))
    {
        Some(known) => *known = item,
        None => list.push(item),
    }
    Ok(format!("{noun} {id} updated"))
}

fn remove(list: &mut Vec<Value>, id: i64, key: &str, noun: &str) -> Result<String, String> {
    list.retain(|v| v.get(key).and_then(Value::as_i64) != Some(id));
    Ok(format!("{noun} {id} removed"))
}

/// Every browser's twin, by clientId.
#[derive(Default)]
pub struct Twins {
    twins: Mutex<HashMap<String, Twin>>,
}

impl Twins {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Twin>> {
        self.twins.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Applies a host's `full_state_sync` or `tab_event`; returns the new `twin_state_sync`
    /// payload, or why the message was not understood (the twin is then unchanged).
    pub fn update(&self, client_id: &str, kind: &str, payload: &Value) -> Result<Value, String> {
        let mut twins = self.lock();
        let twin = twins.entry(client_id.to_owned()).or_default();
        let mut next = twin.clone();
        let text = match kind {
            "full_state_sync" => next.replace(payload)?,
            _ => next.apply(payload)?,
        };
        next.note(text);
        *twin = next;
        Ok(twin.payload(client_id))
    }

    pub fn get(&self, client_id: &str) -> Option<Twin> {
        self.lock().get(client_id).cloned()
    }
}
