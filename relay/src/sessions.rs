//! Sessions as the relay keeps them (PROTOCOL.md §2.3): which browser each is bound to, its
//! status, the action running and those queued behind it, and the results of finished actions
//! by `actionId`, so a repeated id is answered without running again.
//!
//! A session exists from the first time anyone names it. Sessions live in memory: after a
//! relay restart a session starts over as `created` (its log goes on where it ended).

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard};

use serde::Serialize;
use serde_json::{json, Value};
use tether_protocol::{ActionError, ActionResult};

use crate::scheduler::{Job, Reply};

/// How many finished results a session keeps for replay; the oldest go first. Retries come
/// soon after a failure, so the last few dozen are what matter.
const KEPT_RESULTS: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Created,
    Running,
    WaitingForBrowserSelection,
    WaitingForUserConfirmation,
    Ongoing,
    Completed,
    Error,
}

/// What the session is doing right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    Idle,
    Running,
    WaitingForBrowserSelection,
    WaitingForUserConfirmation,
}

/// An action id's fate: running (with the repeats waiting for it) or finished. A finished
/// result is kept as its JSON text: a tenth of the memory of the parsed tree.
pub enum Outcome {
    Running(Vec<Reply>),
    Done(Box<str>),
}

#[derive(Default)]
pub struct Session {
    pub client_id: Option<String>,
    pub activity: Option<Activity>,
    pub in_flight: Option<String>,
    pub queue: VecDeque<Job>,
    /// A runner task is draining the queue.
    pub busy: bool,
    pub last_error: Option<ActionError>,
    /// Some action has finished in this session.
    pub ran: bool,
    /// The last browser failure has not been followed by a success yet.
    pub failed: bool,
    /// `session_stop` succeeded and nothing has started the session again.
    pub completed: bool,
    /// A person approved an action of this session (`--confirm first`).
    pub confirmed: bool,
    outcomes: HashMap<String, Outcome>,
    finished: VecDeque<String>,
}

impl Session {
    pub fn status(&self) -> Status {
        match self.activity.unwrap_or(Activity::Idle) {
            Activity::Running => Status::Running,
            Activity::WaitingForBrowserSelection => Status::WaitingForBrowserSelection,
            Activity::WaitingForUserConfirmation => Status::WaitingForUserConfirmation,
            Activity::Idle if self.completed => Status::Completed,
            Activity::Idle if self.failed => Status::Error,
            Activity::Idle if self.ran => Status::Ongoing,
            Activity::Idle => Status::Created,
        }
    }

    /// The `session.state` payload.
    pub fn state(&self, session_id: &str) -> Value {
        let mut state = json!({
            "sessionId": session_id,
            "status": self.status(),
            "queued": self.queue.len(),
        });
        if let Some(client) = &self.client_id {
            state["clientId"] = json!(client);
        }
        if let Some(action) = &self.in_flight {
            state["inFlight"] = json!(action);
        }
        if let Some(error) = &self.last_error {
            state["lastError"] = json!(error);
        }
        state
    }

    pub fn outcome(&mut self, action_id: &str) -> Option<&mut Outcome> {
        self.outcomes.get_mut(action_id)
    }

    pub fn start_outcome(&mut self, action_id: &str) {
        self.outcomes
            .insert(action_id.to_owned(), Outcome::Running(Vec::new()));
    }

    /// Stores a finished result; returns the repeats that were waiting for it.
    pub fn finish_outcome(&mut self, result: &ActionResult) -> Vec<Reply> {
        let id = result.action_id.clone();
        let text = serde_json::to_string(result).unwrap_or_default().into_boxed_str();
        let waiting = match self.outcomes.insert(id.clone(), Outcome::Done(text)) {
            Some(Outcome::Running(waiting)) => waiting,
            _ => Vec::new(),
        };
        self.finished.push_back(id);
        while self.finished.len() > KEPT_RESULTS {
            if let Some(old) = self.finished.pop_front() {
                self.outcomes.remove(&old);
            }
        }
        waiting
    }
}

#[derive(Default)]
pub struct Sessions {
    table: Mutex<HashMap<String, Session>>,
}

impl Sessions {
    pub fn lock(&self) -> MutexGuard<'_, HashMap<String, Session>> {
        self.table.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The `session.state` payload of a session (a session no one has named yet is `created`).
    pub fn state(&self, session_id: &str) -> Value {
        match self.lock().get(session_id) {
            Some(session) => session.state(session_id),
            None => Session::default().state(session_id),
        }
    }

    /// The sessions bound to a browser, sorted.
    pub fn bound_to(&self, client_id: &str) -> Vec<String> {
        let mut ids: Vec<String> = self
            .lock()
            .iter()
            .filter(|(_, s)| s.client_id.as_deref() == Some(client_id))
            .map(|(id, _)| id.clone())
            .collect();
        ids.sort();
        ids
    }

    pub fn client_of(&self, session_id: &str) -> Option<String> {
        self.lock().get(session_id).and_then(|s| s.client_id.clone())
    }

    /// Sessions with an action running (or a runner about to end).
    pub fn running(&self) -> usize {
        self.lock().values().filter(|s| s.busy).count()
    }

    /// Actions waiting behind a running one, over all sessions.
    pub fn queued(&self) -> usize {
        self.lock().values().map(|s| s.queue.len()).sum()
    }
}
