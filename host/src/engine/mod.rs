//! The action engine: checks that a call may touch its tab, prepares the tab once, dispatches
//! to `actions::<name>`, and turns whatever happened into exactly one result.
//!
//! This folder is the engine's floor: the engine (this file) and what it runs an action with:
//! the owner's `policy` and `secrets`, settling the page after the action (`settle`, §20),
//! what happened meanwhile (`observed`), and the live view a person watches (`live_view`).
//! Uses every floor below (`cdp`, `parts`, `page`, `browser`, `actions`); the modes above
//! hold an engine.

pub mod live_view;
pub mod observed;
pub mod policy;
pub mod secrets;
pub mod settle;

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use serde_json::Value;
use tether_protocol::actions::fields::Settled;
use tether_protocol::actions::{Dialog, DialogAnswer, TabId};
use tether_protocol::native::{ActionLine, SessionTabs};
use tether_protocol::result::{ActionHeader, Output};
use tether_protocol::{ActionCall, ActionError, ActionName, ActionOutcome, ActionResult, ErrorCode};

use crate::actions::{self, Context, Session};
use crate::browser::tabs::Tabs;
use crate::cdp::{TabInfo, Transport};
use crate::engine::policy::Policy;
use crate::page::tab_state::TabState;
use crate::parts::artifacts::ArtifactStore;

/// How far up an opener chain a new tab is traced back to a session tab.
const MAX_OPENER_DEPTH: usize = 8;

pub struct Engine {
    transport: Arc<dyn Transport>,
    artifacts: Arc<dyn ArtifactStore>,
    policy: Policy,
    client_id: String,
    tabs: Tabs,
    handoffs: Arc<crate::browser::handoffs::Handoffs>,
    live_views: live_view::LiveViews,
    contexts: crate::browser::contexts::Contexts,
}

impl Engine {
    /// The same engine, keeping named profiles in `data_dir/profiles` (docs/protocol.md §21).
    pub fn keeping_profiles_in(mut self, data_dir: &std::path::Path) -> Self {
        self.contexts = crate::browser::contexts::Contexts::keeping_profiles_in(
            crate::browser::profiles::ProfileStore::in_data_dir(data_dir),
        );
        self
    }

    pub fn new(
        transport: Arc<dyn Transport>,
        artifacts: Arc<dyn ArtifactStore>,
        policy: Policy,
        client_id: impl Into<String>,
    ) -> Self {
        // Whatever the host stores, it stores without the owner's secrets.
        let artifacts: Arc<dyn ArtifactStore> = Arc::new(secrets::WithoutSecrets {
            inner: artifacts,
            secrets: policy.secrets().clone(),
        });
        Self {
            tabs: Tabs::new(transport.clone(), artifacts.clone(), policy.keeps_page_log()),
            transport,
            artifacts,
            policy,
            client_id: client_id.into(),
            handoffs: Default::default(),
            live_views: Default::default(),
            contexts: Default::default(),
        }
    }

    pub fn transport(&self) -> &Arc<dyn Transport> {
        &self.transport
    }

    pub fn artifacts(&self) -> &Arc<dyn ArtifactStore> {
        &self.artifacts
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The tabs a session owns, in the order they joined.
    pub fn session_tabs(&self, session_id: &str) -> Vec<TabId> {
        self.session(session_id).tabs()
    }

    /// The handoffs waiting for a person; a person's answer goes here.
    pub fn handoffs(&self) -> &crate::browser::handoffs::Handoffs {
        &self.handoffs
    }

    /// Starts showing a tab of the session live to `sink` (a tab of another session, or none,
    /// is refused), or stops the session's live view when `sink` is `None`.
    pub fn live_view(&self, session_id: &str, tab: Option<TabId>, sink: Option<live_view::FrameSink>) {
        let Some(sink) = sink else {
            return self.live_views.stop(&self.transport, session_id);
        };
        match tab.filter(|tab| self.session_tabs(session_id).contains(tab)) {
            Some(tab) => self.live_views.start(&self.transport, session_id, tab, sink),
            None => tracing::warn!(session_id, ?tab, "a live view of a tab the session does not own"),
        }
    }

    /// Passes a person's input to the tab of the handoff it names, while that handoff waits.
    pub fn person_input(&self, input: tether_protocol::person::HandoffInput) {
        self.live_views.pass(&self.transport, &self.handoffs, input);
    }

    fn session<'a>(&'a self, id: &'a str) -> Session<'a> {
        Session {
            id,
            action_id: "",
            tabs: &self.tabs,
            peek: false,
        }
    }

    /// Parses and runs one `browser_action` within `timeout`, timing it into a result payload.
    /// Never panics on input; every call ends in exactly one result.
    pub async fn execute_within(
        &self,
        timeout: Duration,
        action_id: &str,
        session_id: &str,
        action_name: &str,
        params: Value,
    ) -> ActionResult {
        self.execute_as(timeout, action_id, session_id, false, action_name, params)
            .await
    }

    /// As [`Engine::execute_within`]; `peek` marks a person's look at the session's screen
    /// (see [`Session::peek`]).
    pub async fn execute_as(
        &self,
        timeout: Duration,
        action_id: &str,
        session_id: &str,
        peek: bool,
        action_name: &str,
        params: Value,
    ) -> ActionResult {
        let started = Utc::now();
        let run = async {
            let call = ActionCall::parse(action_name, &params)?;
            let session = Session {
                peek,
                action_id,
                ..self.session(session_id)
            };
            self.run_as(session, call).await
        };
        let outcome = tokio::time::timeout(timeout, run).await.unwrap_or_else(|_| {
            Err(ActionError::new(
                ErrorCode::ActionTimeout,
                format!("{action_name} did not finish within {} ms", timeout.as_millis()),
            ))
        });
        let outcome = secrets::outcome_without(self.policy.secrets(), outcome);
        let header = ActionHeader {
            action_id: action_id.to_owned(),
            action_name: action_name.to_owned(),
            session_id: session_id.to_owned(),
            client_id: self.client_id.clone(),
        };
        let result = ActionResult::new(header, started, Utc::now(), outcome);
        if !peek {
            self.remember(&result);
        }
        result
    }

    /// Keeps the action in its session's latest, for the owner's popup.
    fn remember(&self, result: &ActionResult) {
        let line = ActionLine {
            action_name: result.action_name.clone(),
            status: if result.is_success() { "success" } else { "error" }.into(),
            error: result.error.as_ref().map(|e| e.code.as_str().to_owned()),
        };
        self.tabs.owners().remember(&result.session_id, line);
    }

    /// Runs one parsed action for a session: a tab action only on a tab of the session, once
    /// the tab is prepared; the dialogs the tab showed meanwhile go into the result.
    pub async fn run(&self, session_id: &str, call: ActionCall) -> ActionOutcome {
        self.run_as(self.session(session_id), call).await
    }

    async fn run_as(&self, session: Session<'_>, call: ActionCall) -> ActionOutcome {
        let session_id = session.id;
        let cx = Context {
            transport: &self.transport,
            artifacts: self.artifacts.as_ref(),
            rules: &self.policy,
            session,
            handoffs: &self.handoffs,
            contexts: &self.contexts,
        };
        let Some(tab) = call.tab_id() else {
            let outcome = actions::dispatch(&cx, call).await;
            self.contexts.touched(session_id);
            return outcome;
        };
        self.session_tab(session_id, tab, leaves_its_page(&call)).await?;
        let state = self.tabs.prepare(tab).await?;
        let answering = Answering::start(&state, call.dialog().cloned());
        let mark = observed::mark(&state);
        let observe = call.observe();
        let settle = call.settle();
        let armed = match settle {
            Some(_) => Some(settle::arm(&cx, tab, navigates(&call)).await),
            None => None,
        };
        let outcome = actions::dispatch(&cx, call).await;
        self.contexts.touched(session_id);
        drop(answering);
        let outcome = match outcome {
            Err(e) if e.code != ErrorCode::TabNotFound && !self.tab_exists(tab).await => {
                Err(ActionError::new(
                    ErrorCode::TabNotFound,
                    format!("tab {tab} was closed during the action ({})", e.message),
                ))
            }
            other => other,
        };
        let shown = state.dialogs.take();
        match outcome {
            Ok(output) => {
                // The action ends once the page settled after it (docs/protocol.md §20), and
                // what it observed and shows is the page then.
                let settled = match (settle, armed) {
                    (Some(budget), Some(armed)) => settle::wait(&cx, tab, armed, budget).await,
                    _ => None,
                };
                let screen = match observe {
                    Some(how) => observed::screen(&cx, tab, how).await,
                    None => None,
                };
                let observed = observed::since(&state, mark).await;
                let extras = Extras {
                    dialogs: shown,
                    observed,
                    screen,
                    settled,
                };
                Ok(extras.onto(output))
            }
            other => other,
        }
    }

    /// Checks that `tab` exists, belongs to the session (or was opened by one of its tabs, in
    /// which case it joins), and is not a page Tether refuses to touch, unless the action only
    /// takes the tab away from it (docs/protocol.md §15: a page that sent its tab somewhere refused
    /// must not leave the session stuck there).
    pub(crate) async fn session_tab(
        &self,
        session_id: &str,
        tab: TabId,
        leaving: bool,
    ) -> Result<TabInfo, ActionError> {
        let info = self.live_tab(tab).await?;
        let owner = self.tabs.owners().owner_of(tab).map(str::to_owned);
        match owner.as_deref() {
            Some(owner) if owner == session_id => {}
            Some(_) => return Err(not_in_session(tab, session_id)),
            None => {
                if !self.opened_by_session(session_id, &info).await {
                    return Err(not_in_session(tab, session_id));
                }
                self.tabs.owners().join(session_id, tab);
            }
        }
        match self.policy.refusal(&info.url) {
            Some(why) if !leaving => Err(ActionError::new(
                ErrorCode::ForbiddenTarget,
                format!("{why}; the session may only lead the tab away (browser_navigate elsewhere, browser_go_back, browser_tabs close, session_stop)"),
            )),
            _ => Ok(info),
        }
    }

    async fn live_tab(&self, tab: TabId) -> Result<TabInfo, ActionError> {
        match self.transport.tab(tab).await? {
            Some(info) => Ok(info),
            None => {
                self.tabs.forget(tab);
                Err(ActionError::new(
                    ErrorCode::TabNotFound,
                    format!("tab {tab} does not exist (it may have been closed)"),
                ))
            }
        }
    }

    async fn tab_exists(&self, tab: TabId) -> bool {
        let exists = !matches!(self.transport.tab(tab).await, Ok(None));
        if !exists {
            self.tabs.forget(tab);
        }
        exists
    }

    async fn opened_by_session(&self, session_id: &str, info: &TabInfo) -> bool {
        let mut opener = info.opener_tab_id;
        for _ in 0..MAX_OPENER_DEPTH {
            let Some(tab) = opener else { return false };
            if self.tabs.owners().owner_of(tab) == Some(session_id) {
                return true;
            }
            opener = match self.transport.tab(tab).await {
                Ok(Some(parent)) => parent.opener_tab_id,
                _ => None,
            };
        }
        false
    }

    /// Every session with its tabs, for the extension's popup.
    pub fn session_list(&self) -> Vec<(String, Vec<TabId>)> {
        let mut list: Vec<(String, Vec<TabId>)> = self
            .tabs
            .owners()
            .all()
            .map(|(id, s)| (id.to_owned(), s.tabs.clone()))
            .collect();
        list.sort();
        list
    }

    /// Every session with its tabs and latest actions, for the extension's popup.
    pub fn sessions_for_owner(&self) -> Vec<SessionTabs> {
        let mut list: Vec<SessionTabs> = self
            .tabs
            .owners()
            .all()
            .map(|(id, s)| SessionTabs {
                session_id: id.to_owned(),
                tabs: s.tabs.clone(),
                latest: s.latest.iter().cloned().collect(),
            })
            .collect();
        list.sort_by(|a, b| a.session_id.cmp(&b.session_id));
        list
    }

    /// The user's "Stop all": every session ends here (its tabs stay open, no longer driven).
    pub fn stop_all(&self) -> Vec<String> {
        let ids: Vec<String> = self.session_list().into_iter().map(|(id, _)| id).collect();
        for id in &ids {
            self.stop_session(id);
        }
        ids
    }

    /// The user's "Stop" on one session: it ends here (its tabs stay open, no longer driven).
    /// Whether it was running.
    pub fn stop_session(&self, session_id: &str) -> bool {
        // The guard must be gone before forget() takes the lock again.
        let ended = self.tabs.owners().end(session_id);
        let was = ended.is_some();
        for tab in ended.map(|s| s.tabs).unwrap_or_default() {
            self.tabs.forget(tab);
        }
        was
    }
}

/// The action's own way of answering dialogs, for as long as it runs: also when its future is
/// dropped at a timeout, so the next action is answered by its own params.
struct Answering(Arc<TabState>);

impl Answering {
    fn start(state: &Arc<TabState>, answer: Option<DialogAnswer>) -> Self {
        state.dialogs.answer_with(answer);
        Self(state.clone())
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.dialogs.answer_with(None);
    }
}

/// What a result carries beside the action's own output: the dialogs that opened, what the
/// page did meanwhile, the page once settled when asked, and what settling waited for (the
/// output is read back only for them).
struct Extras {
    dialogs: Vec<Dialog>,
    observed: Option<Value>,
    screen: Option<String>,
    settled: Option<Settled>,
}

impl Extras {
    fn onto(self, output: Output) -> Output {
        if self.dialogs.is_empty()
            && self.observed.is_none()
            && self.screen.is_none()
            && self.settled.is_none()
        {
            return output;
        }
        let mut value = output.value();
        if let Value::Object(result) = &mut value {
            if !self.dialogs.is_empty() {
                let dialogs = serde_json::to_value(self.dialogs).unwrap_or(Value::Null);
                result.insert("dialogs".into(), dialogs);
            }
            if let Some(observed) = self.observed {
                result.insert("observed".into(), observed);
            }
            if let Some(screen) = self.screen {
                result.insert("screen".into(), Value::String(screen));
            }
            if let Some(settled) = self.settled {
                let settled = serde_json::to_value(settled).unwrap_or(Value::Null);
                result.insert("settled".into(), settled);
            }
        }
        Output::of(&value)
    }
}

/// Whether an action's own work is a navigation of its tab (it ends at the new page's load).
fn navigates(call: &ActionCall) -> bool {
    matches!(
        call.name(),
        ActionName::BrowserNavigate
            | ActionName::BrowserGoBack
            | ActionName::BrowserGoForward
            | ActionName::BrowserReload
    )
}

fn not_in_session(tab: TabId, session_id: &str) -> ActionError {
    ActionError::new(
        ErrorCode::TabNotInSession,
        format!("tab {tab} is not a tab of session {session_id:?}; act on the tab session_start returned, or on tabs it opened"),
    )
}

/// Whether an action only takes its tab to another page (which its own checks judge), and so
/// may run on a tab that sits on a refused page.
fn leaves_its_page(call: &ActionCall) -> bool {
    matches!(
        call,
        ActionCall::BrowserNavigate(_)
            | ActionCall::BrowserGoBack(_)
            | ActionCall::BrowserGoForward(_)
            | ActionCall::BrowserTabs(_)
    )
}
