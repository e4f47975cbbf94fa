//! Which tabs belong to which session. Session actions act only on their own tabs. A session
//! also keeps its latest actions, for the owner's popup; they end with it.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

use tether_protocol::actions::TabId;
use tether_protocol::native::ActionLine;

/// How many of a session's actions the owner's popup lists.
const LATEST_ACTIONS: usize = 5;

#[derive(Debug, Default)]
pub struct Session {
    /// In the order they joined; the first is the tab `session_start` opened.
    pub tabs: Vec<TabId>,
    pub group_title: Option<String>,
    /// Its latest actions, newest first.
    pub latest: VecDeque<ActionLine>,
    /// The next ref number its tabs' pages may hand out (see `Page::numbering_with`).
    pub refs: Arc<AtomicU64>,
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

    /// Keeps an action among its session's latest (a session that has ended, or never began,
    /// keeps nothing).
    pub fn remember(&mut self, session_id: &str, line: ActionLine) {
        if let Some(session) = self.by_id.get_mut(session_id) {
            session.latest.push_front(line);
            session.latest.truncate(LATEST_ACTIONS);
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
