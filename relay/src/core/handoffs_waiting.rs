//! The handoffs waiting for a person (docs/protocol.md §18), by session: a console that
//! subscribes while one waits is told of it as it subscribes (`ws/orchestrator.rs`). Kept from
//! the handoff's start (`dispatch.rs`) to its result, however it ended (`scheduler.rs`).

use std::collections::HashMap;
use std::sync::Mutex;

use tether_protocol::messages::HandoffRequested;

/// The handoffs waiting, by session id (a session runs one action at a time).
#[derive(Default)]
pub struct Waiting(Mutex<HashMap<String, HandoffRequested>>);

impl Waiting {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, HandoffRequested>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A handoff begins to wait.
    pub fn asked(&self, asked: &HandoffRequested) {
        self.lock().insert(asked.session_id.clone(), asked.clone());
    }

    /// The session's action `action_id` ended, however it did.
    pub fn ended(&self, session_id: &str, action_id: &str) {
        let mut waiting = self.lock();
        if waiting.get(session_id).is_some_and(|w| w.action_id == action_id) {
            waiting.remove(session_id);
        }
    }

    /// The handoffs waiting, of one session or of all, oldest session id first.
    pub fn of(&self, session_id: Option<&str>) -> Vec<HandoffRequested> {
        let mut waiting: Vec<HandoffRequested> = self
            .lock()
            .values()
            .filter(|w| session_id.is_none_or(|s| s == w.session_id))
            .cloned()
            .collect();
        waiting.sort_by(|a, b| a.session_id.cmp(&b.session_id));
        waiting
    }
}
