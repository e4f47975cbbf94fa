//! A session's truth (docs/protocol.md §2.3), owned here and nowhere else: which browser it is
//! bound to, what it is doing, the action running and those queued behind it, and the results
//! of finished actions by `actionId`, so a repeated id is answered without running again.
//!
//! [`Session`] is a state machine: its fields are private, and each transition is a method
//! that returns the `session.state` to publish when the status changed, or a binding did (the
//! caller publishes it through `Relay::publish_state`, after whatever event it follows). A session exists from the
//! first time anyone names it. Memory holds the sessions that run and those active lately
//! (docs/protocol.md §22); what each transition changes is kept in the `store` in the order the
//! transitions made it ([`Sessions::keep`]), and a session named again after it left memory, or
//! after a restart, is read back from there. An action that was with the browser when the relay
//! stopped is *unsettled* until the browser's kept result arrives or the action is repeated.

use std::collections::{HashMap, VecDeque};

use serde_json::value::RawValue;
use serde_json::{json, Value};
use tether_protocol::actions::TabId;
use tether_protocol::messages::{SessionState, SessionStatus};
use tether_protocol::{ActionError, ActionName, ActionResult, ErrorCode};

use crate::config::ConfirmMode;
pub use crate::stores::store::Stored;
use crate::stores::store::{Action, Head, Loaded, Standing, Unsettled};

/// How many finished results a session keeps for replay; the oldest go first. Retries come
/// soon after a failure, so the last few dozen are what matter.
const KEPT_RESULTS: usize = 64;

/// How far a session's activity time in the store may lag: its retention is a day.
const ACTIVITY_GRAIN_MS: i64 = 60_000;

/// A `session.state` to publish, when a transition changed what subscribers see.
pub type Changed = Option<SessionState>;

/// What a session queues: an accepted action and whoever waits for its result. The
/// scheduler's own type; the session reads only its action's id, and hands its waiters back.
pub trait Work {
    /// Who waits for an action's result (its asker's reply, each repeat's).
    type Waiter;

    fn action_id(&self) -> &str;
}

/// What the session is doing right now.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
enum Activity {
    /// Nothing: its status is how it stands after what ran ([`Standing`]).
    #[default]
    Idle,
    /// The action with this id is with the browser.
    Running(String),
    WaitingForBrowserSelection,
    WaitingForUserConfirmation,
    /// The action with this id handed the tab to a person (`browser_handoff`).
    WaitingForUser(String),
}

/// An action id's fate: running (with the repeats waiting for it), finished, or sent to the
/// browser before a relay restart with no result since (the tab its params named).
enum Outcome<T> {
    Running(Vec<T>),
    Done(Stored),
    Unsettled(Option<TabId>),
}

/// What a browser's kept result did (see [`Session::kept`]).
pub enum Kept<T> {
    /// It is the action's one result: publish it, and hand it to the repeats waiting.
    Ended(Vec<T>, Changed),
    /// It replaced the relay's own verdict (`CLIENT_OFFLINE`, a timeout) for later repeats.
    Replaced,
    /// The relay has the browser's result already, or never sent the action.
    Ignored,
}

/// How [`Session::admit`] took a job.
pub enum Admitted<W> {
    /// Queued; start a runner for the session if it has none (`true`).
    Queued { start_runner: bool },
    /// The id already finished: answer with its stored result (JSON text).
    Replay(W, Stored),
    /// The id is running: ack the repeat, then [`Session::attach`] it for the same result.
    Repeat(W),
    /// The queue is full.
    Full(W),
}

pub struct Session<W: Work> {
    id: String,
    client_id: Option<String>,
    activity: Activity,
    standing: Standing,
    queue: VecDeque<W>,
    /// A runner task is draining the queue.
    runner: bool,
    last_error: Option<ActionError>,
    /// A person approved an action of this session (`--confirm first`).
    confirmed: bool,
    outcomes: HashMap<String, Outcome<W::Waiter>>,
    finished: VecDeque<String>,
    /// The session's current tab: the last one an action ran on or opened (docs/protocol.md §11).
    current_tab: Option<TabId>,
    /// When anything last happened to it (Unix ms): a session idle for `--session-retention`
    /// is forgotten (docs/protocol.md §19).
    active_at: i64,
    /// The oldest kept result the last one finished pushed out, for the store to forget too.
    pushed_out: Option<String>,
    /// The head the store has: a head is written when it differs.
    stored_head: Option<Head>,
}

/// Written out: a derived one would ask the scheduler's work to have a default too.
impl<W: Work> Default for Session<W> {
    fn default() -> Self {
        Self {
            id: String::new(),
            client_id: None,
            activity: Activity::default(),
            standing: Standing::default(),
            queue: VecDeque::new(),
            runner: false,
            last_error: None,
            confirmed: false,
            outcomes: HashMap::new(),
            finished: VecDeque::new(),
            current_tab: None,
            active_at: 0,
            pushed_out: None,
            stored_head: None,
        }
    }
}

impl<W: Work> Session<W> {
    fn new(id: &str) -> Self {
        Self {
            id: id.to_owned(),
            active_at: now_ms(),
            ..Self::default()
        }
    }

    /// Whether it may be forgotten: nothing running, waiting or queued, and idle since before
    /// `cutoff` (Unix ms).
    fn idle_since_before(&self, cutoff: i64) -> bool {
        !self.runner
            && self.queue.is_empty()
            && matches!(
                self.activity,
                Activity::Idle | Activity::WaitingForBrowserSelection
            )
            && self.active_at < cutoff
    }

    pub fn status(&self) -> SessionStatus {
        match (&self.activity, self.standing) {
            (Activity::Running(_), _) => SessionStatus::Running,
            (Activity::WaitingForBrowserSelection, _) => SessionStatus::WaitingForBrowserSelection,
            (Activity::WaitingForUserConfirmation, _) => SessionStatus::WaitingForUserConfirmation,
            (Activity::WaitingForUser(_), _) => SessionStatus::WaitingForUser,
            (Activity::Idle, Standing::Completed) => SessionStatus::Completed,
            (Activity::Idle, Standing::Error) => SessionStatus::Error,
            (Activity::Idle, Standing::Ongoing) => SessionStatus::Ongoing,
            (Activity::Idle, Standing::Created) => SessionStatus::Created,
        }
    }

    /// The `session.state` payload.
    pub fn state(&self) -> SessionState {
        SessionState {
            session_id: self.id.clone(),
            status: self.status(),
            client_id: self.client_id.clone(),
            in_flight: match &self.activity {
                Activity::Running(action_id) | Activity::WaitingForUser(action_id) => Some(action_id.clone()),
                _ => None,
            },
            queued: self.queue.len(),
            last_error: self.last_error.clone(),
        }
    }

    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// The kept results of its latest finished actions, newest first, at most `limit`.
    fn latest(&self, limit: usize) -> Vec<Stored> {
        let done = self
            .finished
            .iter()
            .rev()
            .filter_map(|id| match self.outcomes.get(id) {
                Some(Outcome::Done(stored)) => Some(stored.clone()),
                _ => None,
            });
        done.take(limit).collect()
    }

    pub fn current_tab(&self) -> Option<TabId> {
        self.current_tab
    }

    /// Follows the current tab after an action (see `ActionResult::current_tab_after`).
    pub fn follow_tab(&mut self, params: &Value, result: &ActionResult) {
        self.current_tab = result.current_tab_after(params, self.current_tab);
    }

    /// Applies a transition; the new state when the status changed. (The binding an action
    /// makes on its way shows in the `running` state that follows at once.)
    fn transition(&mut self, apply: impl FnOnce(&mut Self)) -> Changed {
        let before = self.status();
        apply(self);
        (before != self.status()).then(|| self.state())
    }

    /// Takes an accepted action: queued behind the running one, or answered by the outcome
    /// its id already has.
    pub fn admit(&mut self, job: W, queue_limit: usize) -> Admitted<W> {
        match self.outcomes.get(job.action_id()) {
            Some(Outcome::Done(text)) => return Admitted::Replay(job, text.clone()),
            Some(Outcome::Running(_)) => return Admitted::Repeat(job),
            // Sent again: the browser answers a repeat from what it kept, never running twice.
            Some(Outcome::Unsettled(_)) | None => {}
        }
        if self.runner && self.queue.len() >= queue_limit {
            return Admitted::Full(job);
        }
        self.outcomes
            .insert(job.action_id().to_owned(), Outcome::Running(Vec::new()));
        self.queue.push_back(job);
        let start_runner = !self.runner;
        self.runner = true;
        Admitted::Queued { start_runner }
    }

    /// A repeat of a running id gets that action's result too.
    pub fn attach(&mut self, action_id: &str, reply: W::Waiter) {
        match self.outcomes.get_mut(action_id) {
            Some(Outcome::Running(waiting)) => waiting.push(reply),
            _ => tracing::error!(
                action_id,
                "a repeat was attached to an action that is not running"
            ),
        }
    }

    /// The runner's next job; none ends the runner.
    pub fn next_job(&mut self) -> Option<W> {
        let job = self.queue.pop_front();
        self.runner = job.is_some();
        job
    }

    /// Whether a runner is draining the queue.
    pub fn has_runner(&self) -> bool {
        self.runner
    }

    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Whether the session may run this action: a stopped session runs only `session_start`.
    pub fn open_for(&mut self, action: Option<ActionName>) -> Result<(), ActionError> {
        if action == Some(ActionName::SessionStart) {
            if self.standing == Standing::Completed {
                self.standing = Standing::Ongoing;
            }
        } else if self.standing == Standing::Completed {
            return Err(ActionError::new(
                ErrorCode::SessionNotActive,
                format!(
                    "session {} was stopped; start it again with session_start",
                    self.id
                ),
            ));
        }
        Ok(())
    }

    /// The browser an action runs on: the one it names, else the session's binding, else the
    /// only one online (the session is then bound to it). None chosen: the session waits for
    /// a person to pick one.
    pub fn choose_client(
        &mut self,
        named: Option<&str>,
        online: impl FnOnce() -> Vec<String>,
    ) -> (Result<String, ActionError>, Changed) {
        let mut chosen = Err(ActionError::internal("no browser chosen"));
        let changed = self.transition(|s| {
            chosen = match named.map(str::to_owned).or_else(|| s.client_id.clone()) {
                Some(client) => Ok(client),
                None => match online().as_slice() {
                    [only] => Ok(only.clone()),
                    others => {
                        s.activity = Activity::WaitingForBrowserSelection;
                        Err(no_client(others.len()))
                    }
                },
            };
            if let (Ok(client), None) = (&chosen, &s.client_id) {
                s.client_id = Some(client.clone());
            }
        });
        (chosen, changed)
    }

    /// Whether a person must approve the next action first.
    pub fn needs_confirmation(&self, mode: ConfirmMode) -> bool {
        match mode {
            ConfirmMode::Never => false,
            ConfirmMode::Every => true,
            ConfirmMode::First => !self.confirmed,
        }
    }

    pub fn await_confirmation(&mut self) -> Changed {
        self.transition(|s| s.activity = Activity::WaitingForUserConfirmation)
    }

    pub fn confirmed(&mut self) {
        self.confirmed = true;
    }

    /// The action went to the browser.
    pub fn start(&mut self, action_id: &str) -> Changed {
        self.transition(|s| s.activity = Activity::Running(action_id.to_owned()))
    }

    /// The action went to the browser to hand the tab to a person.
    pub fn hand_over(&mut self, action_id: &str) -> Changed {
        self.transition(|s| s.activity = Activity::WaitingForUser(action_id.to_owned()))
    }

    /// An action ended: the status it leaves (a failure of the browser or the link puts the
    /// session in `error` until an action succeeds; an action's own error does not), and the
    /// result kept for repeats (`stored`: its JSON text). Returns the repeats that were
    /// waiting for it.
    pub fn finish(&mut self, result: &ActionResult, stored: Stored) -> (Vec<W::Waiter>, Changed) {
        let changed = self.transition(|s| s.settle(result));
        (self.keep(&result.action_id, stored), changed)
    }

    /// The browser's own result for an action the relay ended without it, or never heard the
    /// end of. Ends an unsettled action; replaces a verdict the relay made up for want of the
    /// browser's answer; is ignored otherwise (the relay has the browser's result already).
    pub fn kept(&mut self, result: &ActionResult, stored: Stored) -> Kept<W::Waiter> {
        match self.outcomes.get(&result.action_id) {
            Some(Outcome::Unsettled(tab)) => {
                self.current_tab = result.current_tab_after(&json!({ "tabId": tab }), self.current_tab);
                let (waiting, changed) = self.finish(result, stored);
                Kept::Ended(waiting, changed)
            }
            Some(Outcome::Done(before)) if made_by_relay(before) => {
                self.outcomes
                    .insert(result.action_id.clone(), Outcome::Done(stored));
                Kept::Replaced
            }
            _ => Kept::Ignored,
        }
    }

    fn settle(&mut self, result: &ActionResult) {
        let code = result.error.as_ref().map(|e| e.code);
        self.activity = match code {
            Some(ErrorCode::NoClientSelected) => Activity::WaitingForBrowserSelection,
            _ => Activity::Idle,
        };
        self.last_error = result.error.clone();
        self.standing = match code {
            None if result.action_name.parse() == Ok(ActionName::SessionStop) => Standing::Completed,
            None => Standing::Ongoing,
            Some(code) if is_browser_failure(code) => Standing::Error,
            // An action's own error leaves the session as it stood.
            Some(_) if self.standing == Standing::Created => Standing::Ongoing,
            Some(_) => self.standing,
        };
    }

    fn keep(&mut self, action_id: &str, stored: Stored) -> Vec<W::Waiter> {
        let id = action_id.to_owned();
        let waiting = match self.outcomes.insert(id.clone(), Outcome::Done(stored)) {
            Some(Outcome::Running(waiting)) => waiting,
            _ => Vec::new(),
        };
        self.finished.push_back(id);
        while self.finished.len() > KEPT_RESULTS {
            if let Some(old) = self.finished.pop_front() {
                self.outcomes.remove(&old);
                self.pushed_out = Some(old);
            }
        }
        waiting
    }

    /// A person (or an orchestrator) picked the session's browser; a session waiting for one
    /// goes back to idle. Said whenever the binding or the status changed.
    pub fn bind(&mut self, client_id: &str) -> Changed {
        let rebound = self.client_id.as_deref() != Some(client_id);
        self.client_id = Some(client_id.to_owned());
        let changed = self.transition(|s| {
            if s.activity == Activity::WaitingForBrowserSelection {
                s.activity = Activity::Idle;
            }
        });
        changed.or_else(|| rebound.then(|| self.state()))
    }

    /// The session as the store keeps it, but for its actions.
    pub fn head(&self) -> Head {
        Head {
            client_id: self.client_id.clone(),
            current_tab: self.current_tab,
            standing: self.standing,
            last_error: self.last_error.clone(),
            confirmed: self.confirmed,
            active_at: self.active_at,
        }
    }

    /// The head to hand the store: none when it has this one already.
    fn head_to_keep(&mut self) -> Option<Head> {
        let head = self.head();
        if self
            .stored_head
            .as_ref()
            .is_some_and(|stored| head.same_as(stored, ACTIVITY_GRAIN_MS))
        {
            return None;
        }
        self.stored_head = Some(head.clone());
        Some(head)
    }

    /// A session read back from the store: nothing runs in it.
    fn from_loaded(id: &str, loaded: Loaded) -> Self {
        let stored_head = Some(loaded.head.clone());
        let head = loaded.head;
        let mut session = Self {
            id: id.to_owned(),
            client_id: head.client_id,
            current_tab: head.current_tab,
            standing: head.standing,
            last_error: head.last_error,
            confirmed: head.confirmed,
            active_at: head.active_at,
            stored_head,
            ..Self::default()
        };
        for (action_id, result) in loaded.results {
            session.keep(&action_id, result);
        }
        session.pushed_out = None;
        for action in loaded.unsettled {
            session
                .outcomes
                .insert(action.action_id, Outcome::Unsettled(action.tab_id));
        }
        session
    }

    /// The whole session as the store keeps it.
    fn loaded(&self) -> Loaded {
        let results = self.finished.iter().filter_map(|id| match self.outcomes.get(id) {
            Some(Outcome::Done(stored)) => Some((id.clone(), stored.clone())),
            _ => None,
        });
        let unsettled = self.outcomes.iter().filter_map(|(id, outcome)| match outcome {
            Outcome::Unsettled(tab) => Some(Unsettled {
                action_id: id.clone(),
                tab_id: *tab,
            }),
            _ => None,
        });
        Loaded {
            head: self.head(),
            results: results.collect(),
            unsettled: unsettled.collect(),
        }
    }

    /// What the store keeps of an action that ended with `result`.
    pub fn finished_fact(&mut self, action_id: &str, result: &Stored) -> Fact {
        Fact::both(Action::Finished {
            action_id: action_id.to_owned(),
            result: result.clone(),
            forgotten: self.pushed_out.take(),
            current_tab: self.current_tab,
        })
    }
}

/// What a transition changed, for the store: the session's head, an action, or both.
#[derive(Default)]
pub struct Fact {
    head: bool,
    action: Option<Action>,
}

impl Fact {
    /// Nothing the store keeps changed.
    pub fn none() -> Self {
        Self::default()
    }

    pub fn head() -> Self {
        Self {
            head: true,
            action: None,
        }
    }

    pub fn action(action: Action) -> Self {
        Self {
            head: false,
            action: Some(action),
        }
    }

    pub fn both(action: Action) -> Self {
        Self {
            head: true,
            action: Some(action),
        }
    }
}

/// Now, in Unix ms.
fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// Whether a stored result is the relay's own verdict for want of the browser's answer (the
/// link dropped, time ran out, the relay stopped): the browser may still have one.
fn made_by_relay(stored: &RawValue) -> bool {
    #[derive(serde::Deserialize)]
    struct Head {
        error: Option<Code>,
    }
    #[derive(serde::Deserialize)]
    struct Code {
        code: ErrorCode,
    }
    let code = serde_json::from_str::<Head>(stored.get())
        .ok()
        .and_then(|h| h.error)
        .map(|e| e.code);
    matches!(
        code,
        Some(
            ErrorCode::ClientOffline | ErrorCode::AckTimeout | ErrorCode::ActionTimeout | ErrorCode::Internal
        )
    )
}

/// Errors that say the browser or the link failed, not the action (§2.3's `error` status).
fn is_browser_failure(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::AckTimeout
            | ErrorCode::ActionTimeout
            | ErrorCode::ClientOffline
            | ErrorCode::CdpError
            | ErrorCode::Internal
    )
}

fn no_client(online: usize) -> ActionError {
    let message = if online == 0 {
        "no browser is online; start a host, then bind the session with session.bind".to_owned()
    } else {
        format!(
            "{online} browsers are online; choose one with session.bind or the action's clientId (see extension.list)"
        )
    };
    ActionError::new(ErrorCode::NoClientSelected, message)
}

mod replay;
mod table;
pub use replay::import_journal;
pub use table::Sessions;

#[cfg(test)]
mod tests;
