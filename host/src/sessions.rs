//! Which tabs belong to which session. Session actions act only on their own tabs.

use std::collections::HashMap;

use tether_protocol::actions::TabId;

#[derive(Debug, Default)]
pub struct Session {
    /// In the order they joined; the first is the tab `session_start` opened.
    pub tabs: Vec<TabId>,
    pub group_title: Option<String>,
}

#[derive(Debug, Default)]
pub struct Sessions {
    by_id: HashMap<String, Session>,
}

impl Sessions {
    pub fn get(&self, session_id: &str) -> Option<&Session> {
        self.by_id.get(session_id)
    }

    pub fn owner_of(&self, tab: TabId) -> Option<&str> {
        self.by_id
            .iter()
            .find(|(_, s)| s.tabs.contains(&tab))
            .map(|(id, _)| id.as_str())
    }

    pub fn join(&mut self, session_id: &str, tab: TabId) {
        let session = self.by_id.entry(session_id.to_owned()).or_default();
        if !session.tabs.contains(&tab) {
            session.tabs.push(tab);
        }
    }

    pub fn set_group_title(&mut self, session_id: &str, title: Option<String>) {
        if title.is_some() {
            self.by_id.entry(session_id.to_owned()).or_default().group_title = title;
        }
    }

    pub fn leave(&mut self, tab: TabId) {
        for session in self.by_id.values_mut() {
            session.tabs.retain(|t| *t != tab);
        }
    }

    pub fn end(&mut self, session_id: &str) -> Option<Session> {
        self.by_id.remove(session_id)
    }

    /// Every session with its tabs, for status displays.
    pub fn all(&self) -> impl Iterator<Item = (&str, &Session)> {
        self.by_id.iter().map(|(id, s)| (id.as_str(), s))
    }
}
