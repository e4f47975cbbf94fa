//! The action engine: checks that a call may touch its tab, prepares the tab once, dispatches
//! to `actions::<name>`, and turns whatever happened into exactly one result.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::Utc;
use serde_json::{json, Value};
use tether_protocol::catalog::TabId;
use tether_protocol::result::ActionHeader;
use tether_protocol::{ActionCall, ActionError, ActionOutcome, ActionResult, ErrorCode};

use crate::actions;
use crate::artifacts::ArtifactSink;
use crate::cdp::{TabInfo, Transport};
use crate::dialogs::{self, DialogLog};
use crate::page::{Page, HOOKS_JS};
use crate::policy::Policy;
use crate::sessions::Sessions;

/// How far up an opener chain a new tab is traced back to a session tab.
const MAX_OPENER_DEPTH: usize = 8;

pub struct Engine {
    transport: Arc<dyn Transport>,
    artifacts: Arc<dyn ArtifactSink>,
    policy: Policy,
    client_id: String,
    sessions: Mutex<Sessions>,
    /// Tabs prepared since their last attach, with the dialogs they showed.
    prepared: Arc<Mutex<HashMap<TabId, Arc<DialogLog>>>>,
}

impl Engine {
    pub fn new(
        transport: Arc<dyn Transport>,
        artifacts: Arc<dyn ArtifactSink>,
        policy: Policy,
        client_id: impl Into<String>,
    ) -> Self {
        Self {
            transport,
            artifacts,
            policy,
            client_id: client_id.into(),
            sessions: Mutex::default(),
            prepared: Arc::default(),
        }
    }

    pub fn transport(&self) -> &Arc<dyn Transport> {
        &self.transport
    }

    pub fn artifacts(&self) -> &Arc<dyn ArtifactSink> {
        &self.artifacts
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The tabs a session owns, in the order they joined.
    pub fn session_tabs(&self, session_id: &str) -> Vec<TabId> {
        self.sessions()
            .get(session_id)
            .map(|s| s.tabs.clone())
            .unwrap_or_default()
    }

    pub(crate) fn sessions(&self) -> std::sync::MutexGuard<'_, Sessions> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
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
        let started = Utc::now();
        let run = async {
            let call = ActionCall::parse(action_name, params)?;
            self.run(session_id, call).await
        };
        let outcome = tokio::time::timeout(timeout, run).await.unwrap_or_else(|_| {
            Err(ActionError::new(
                ErrorCode::ActionTimeout,
                format!("{action_name} did not finish within {} ms", timeout.as_millis()),
            ))
        });
        let header = ActionHeader {
            action_id: action_id.to_owned(),
            action_name: action_name.to_owned(),
            session_id: session_id.to_owned(),
            client_id: self.client_id.clone(),
        };
        ActionResult::new(header, started, Utc::now(), outcome)
    }

    /// Runs one parsed action for a session.
    pub async fn run(&self, session_id: &str, call: ActionCall) -> ActionOutcome {
        let tab = match call {
            ActionCall::SessionStart(p) => return actions::session_start::run(self, session_id, p).await,
            ActionCall::SessionStop(p) => return actions::session_stop::run(self, session_id, p).await,
            ref other => other
                .tab_id()
                .ok_or_else(|| ActionError::internal("tab action without a tab"))?,
        };
        self.session_tab(session_id, tab).await?;
        let dialogs = self.prepare(tab).await?;
        let page = Page::new(self, tab);
        let outcome = match call {
            ActionCall::BrowserDebuggerAttach(_) => Ok(json!({ "attached": true })),
            ActionCall::BrowserNavigate(p) => actions::browser_navigate::run(&page, p).await,
            ActionCall::BrowserWaitForLoaded(p) => actions::browser_wait_for_loaded::run(&page, p).await,
            ActionCall::BrowserScreenshot(p) => actions::browser_screenshot::run(&page, p).await,
            ActionCall::BrowserReadabilityExtract(_) => {
                actions::browser_readability_extract::run(&page).await
            }
            ActionCall::BrowserXpathScan(p) => actions::browser_xpath_scan::run(&page, p).await,
            ActionCall::BrowserClick(p) => actions::browser_click::run(&page, session_id, p).await,
            ActionCall::BrowserType(p) => actions::browser_type::run(&page, p).await,
            ActionCall::BrowserGetHtml(p) => actions::browser_get_html::run(&page, p).await,
            ActionCall::SessionStart(_) | ActionCall::SessionStop(_) => unreachable!("handled above"),
        };
        let outcome = match outcome {
            Err(e) if e.code != ErrorCode::TabNotFound && !self.tab_exists(tab).await => {
                Err(ActionError::new(
                    ErrorCode::TabNotFound,
                    format!("tab {tab} was closed during the action ({})", e.message),
                ))
            }
            other => other,
        };
        let shown = dialogs.take();
        match outcome {
            Ok(Value::Object(mut result)) if !shown.is_empty() => {
                result.insert("dialogs".into(), json!(shown));
                Ok(Value::Object(result))
            }
            other => other,
        }
    }

    /// Checks that `tab` exists, belongs to the session (or was opened by one of its tabs, in
    /// which case it joins), and is not a page Tether refuses to touch.
    pub(crate) async fn session_tab(&self, session_id: &str, tab: TabId) -> Result<TabInfo, ActionError> {
        let info = self.live_tab(tab).await?;
        let owner = self.sessions().owner_of(tab).map(str::to_owned);
        match owner.as_deref() {
            Some(owner) if owner == session_id => {}
            Some(_) => return Err(not_in_session(tab, session_id)),
            None => {
                if !self.opened_by_session(session_id, &info).await {
                    return Err(not_in_session(tab, session_id));
                }
                self.sessions().join(session_id, tab);
            }
        }
        if let Some(why) = self.policy.refusal(&info.url) {
            return Err(ActionError::new(ErrorCode::ForbiddenTarget, why));
        }
        Ok(info)
    }

    async fn live_tab(&self, tab: TabId) -> Result<TabInfo, ActionError> {
        match self.transport.tab(tab).await? {
            Some(info) => Ok(info),
            None => {
                self.forget(tab);
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
            self.forget(tab);
        }
        exists
    }

    async fn opened_by_session(&self, session_id: &str, info: &TabInfo) -> bool {
        let mut opener = info.opener_tab_id;
        for _ in 0..MAX_OPENER_DEPTH {
            let Some(tab) = opener else { return false };
            if self.sessions().owner_of(tab) == Some(session_id) {
                return true;
            }
            opener = match self.transport.tab(tab).await {
                Ok(Some(parent)) => parent.opener_tab_id,
                _ => None,
            };
        }
        false
    }

    /// Attaches the debugger and readies the tab for actions, once per attach.
    pub(crate) async fn prepare(&self, tab: TabId) -> Result<Arc<DialogLog>, ActionError> {
        let attached = self.transport.is_attached(tab);
        if attached {
            if let Some(log) = self.prepared.lock().unwrap_or_else(|p| p.into_inner()).get(&tab) {
                return Ok(log.clone());
            }
        }
        let events = self.transport.events();
        self.transport.attach(tab).await?;
        let page = Page::new(self, tab);
        page.cdp("Page.enable", json!({})).await?;
        page.cdp("Page.setLifecycleEventsEnabled", json!({ "enabled": true }))
            .await?;
        page.cdp(
            "Page.addScriptToEvaluateOnNewDocument",
            json!({ "source": HOOKS_JS, "runImmediately": true }),
        )
        .await?;
        // A background tab reports itself unfocused; pages that wait for focus would stall.
        page.cdp("Emulation.setFocusEmulationEnabled", json!({ "enabled": true }))
            .await?;

        let log = Arc::new(DialogLog::default());
        self.prepared
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(tab, log.clone());
        let prepared = self.prepared.clone();
        let transport = self.transport.clone();
        let watcher_log = log.clone();
        tokio::spawn(async move {
            dialogs::watch(transport, tab, watcher_log.clone(), events).await;
            // Only its own entry: a re-attach may already have prepared the tab anew.
            let mut prepared = prepared.lock().unwrap_or_else(|p| p.into_inner());
            if prepared
                .get(&tab)
                .is_some_and(|log| Arc::ptr_eq(log, &watcher_log))
            {
                prepared.remove(&tab);
            }
        });
        Ok(log)
    }

    /// Every session with its tabs, for the extension's popup.
    pub fn session_list(&self) -> Vec<(String, Vec<TabId>)> {
        let mut list: Vec<(String, Vec<TabId>)> = self
            .sessions()
            .all()
            .map(|(id, s)| (id.to_owned(), s.tabs.clone()))
            .collect();
        list.sort();
        list
    }

    /// The user's "Stop all": every session ends here (its tabs stay open, no longer driven).
    pub fn stop_all(&self) -> Vec<String> {
        let ids: Vec<String> = self.session_list().into_iter().map(|(id, _)| id).collect();
        for id in &ids {
            // The guard must be gone before forget() takes the lock again.
            let ended = self.sessions().end(id);
            for tab in ended.map(|s| s.tabs).unwrap_or_default() {
                self.forget(tab);
            }
        }
        ids
    }

    /// Forgets a tab that closed or left its session.
    pub(crate) fn forget(&self, tab: TabId) {
        self.sessions().leave(tab);
        self.prepared
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&tab);
    }
}

fn not_in_session(tab: TabId, session_id: &str) -> ActionError {
    ActionError::new(
        ErrorCode::TabNotInSession,
        format!("tab {tab} is not a tab of session {session_id:?}; act on the tab session_start returned, or on tabs it opened"),
    )
}
