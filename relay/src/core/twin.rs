//! The browser twin (docs/protocol.md §2.5): the relay's authoritative copy of each browser's
//! windows, tabs and tab groups, built from the host's `full_state_sync` and `tab_event`s (their
//! shapes: `tether_protocol::twin`). Every change bumps its version; the twin is what
//! `twin_state_sync` carries.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use chrono::{DateTime, Utc};
use tether_protocol::twin::{FullState, Group, Tab, TabEvent, TwinReport, TwinSync, Window};

/// How many recent changes a twin remembers, for the `recent` Live Screen.
const RECENT: usize = 20;

/// One change, as a line a person (or a model) can read.
#[derive(Debug, Clone)]
pub struct Change {
    pub at: DateTime<Utc>,
    pub text: String,
}

#[derive(Debug, Clone, Default)]
pub struct Twin {
    pub version: u64,
    pub windows: Vec<Window>,
    pub tabs: Vec<Tab>,
    pub groups: Vec<Group>,
    pub recent: VecDeque<Change>,
}

impl Twin {
    /// The `twin_state_sync` payload.
    pub fn payload(&self, client_id: &str) -> TwinSync {
        TwinSync {
            client_id: client_id.to_owned(),
            version: self.version,
            state: FullState {
                windows: self.windows.clone(),
                tabs: self.tabs.clone(),
                groups: self.groups.clone(),
            },
            active_tab_id: self.active_tab().map(|t| t.tab_id),
        }
    }

    /// The active tab of the focused window (the first window with one, when none says so).
    pub fn active_tab(&self) -> Option<&Tab> {
        let focused = self.windows.iter().find(|w| w.focused).map(|w| w.window_id);
        self.tabs
            .iter()
            .filter(|t| t.active)
            .find(|t| focused.is_none_or(|w| t.window_id == w))
    }

    fn replace(&mut self, state: FullState) -> String {
        self.windows = state.windows;
        self.tabs = state.tabs;
        self.groups = state.groups;
        format!(
            "full sync: {} windows, {} tabs",
            self.windows.len(),
            self.tabs.len()
        )
    }

    fn apply(&mut self, event: TabEvent) -> String {
        match event {
            TabEvent::Created { tab } => self.put_tab(tab, "created"),
            TabEvent::Updated { tab } => self.put_tab(tab, "updated"),
            TabEvent::Removed { tab_id, .. } => {
                self.tabs.retain(|t| t.tab_id != tab_id);
                format!("tab {tab_id} closed")
            }
            TabEvent::Activated { tab_id, window_id } => {
                let window =
                    window_id.or_else(|| self.tabs.iter().find(|t| t.tab_id == tab_id).map(|t| t.window_id));
                for t in self.tabs.iter_mut().filter(|t| Some(t.window_id) == window) {
                    t.active = t.tab_id == tab_id;
                }
                format!("tab {tab_id} activated")
            }
            TabEvent::GroupUpdated { group } => {
                let id = group.group_id;
                upsert(&mut self.groups, group, |g| g.group_id == id);
                format!("group {id} updated")
            }
            TabEvent::GroupRemoved { group_id } => {
                self.groups.retain(|g| g.group_id != group_id);
                format!("group {group_id} removed")
            }
            TabEvent::WindowCreated { window } => {
                let id = window.window_id;
                upsert(&mut self.windows, window, |w| w.window_id == id);
                format!("window {id} updated")
            }
            TabEvent::WindowRemoved { window_id } => {
                self.tabs.retain(|t| t.window_id != window_id);
                self.windows.retain(|w| w.window_id != window_id);
                format!("window {window_id} removed")
            }
        }
    }

    fn put_tab(&mut self, tab: Tab, what: &str) -> String {
        let text = format!("tab {} {what}: {} ({})", tab.tab_id, tab.title, tab.url);
        if tab.active {
            for other in self.tabs.iter_mut().filter(|t| t.window_id == tab.window_id) {
                other.active = false;
            }
        }
        let id = tab.tab_id;
        upsert(&mut self.tabs, tab, |t| t.tab_id == id);
        text
    }

    fn note(&mut self, text: String) {
        self.version += 1;
        self.recent.push_back(Change { at: Utc::now(), text });
        while self.recent.len() > RECENT {
            self.recent.pop_front();
        }
    }
}

fn upsert<T>(list: &mut Vec<T>, item: T, same: impl Fn(&T) -> bool) {
    match list.iter_mut().find(|known| same(known)) {
        Some(known) => *known = item,
        None => list.push(item),
    }
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

    /// Applies a host's report; returns the new `twin_state_sync` payload.
    pub fn update(&self, client_id: &str, report: TwinReport) -> TwinSync {
        let mut twins = self.lock();
        let twin = twins.entry(client_id.to_owned()).or_default();
        let text = match report {
            TwinReport::Full(state) => twin.replace(state),
            TwinReport::Event(event) => twin.apply(event),
        };
        twin.note(text);
        twin.payload(client_id)
    }

    /// Takes the twin another relay of the deployment keeps for a browser it holds, as that
    /// relay last published it (docs/protocol.md §14): same version, same state.
    pub fn adopt(&self, sync: TwinSync) {
        let mut twins = self.lock();
        let twin = twins.entry(sync.client_id.clone()).or_default();
        let text = twin.replace(sync.state);
        twin.note(text);
        twin.version = sync.version;
    }

    pub fn get(&self, client_id: &str) -> Option<Twin> {
        self.lock().get(client_id).cloned()
    }
}
