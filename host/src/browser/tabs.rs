//! The tabs the host drives: which session owns each (`sessions`), and preparing a tab (once
//! per attach) with the state it keeps until the debugger leaves it (`tab_state.rs`), and the
//! watcher that keeps that state from the tab's events.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use chromiumoxide::cdp::browser_protocol::emulation::SetFocusEmulationEnabledParams;
use chromiumoxide::cdp::browser_protocol::page::{
    self, AddScriptToEvaluateOnNewDocumentParams, SetLifecycleEventsEnabledParams,
};
use chromiumoxide::cdp::browser_protocol::target::{EventAttachedToTarget, EventDetachedFromTarget};
use chromiumoxide::cdp::browser_protocol::{log, network};
use chromiumoxide::cdp::js_protocol::runtime::{self, RunIfWaitingForDebuggerParams};
use chromiumoxide::types::{Command, MethodId};
use serde_json::{json, Value};
use tether_protocol::actions::TabId;
use tether_protocol::ActionError;

use tokio::sync::{broadcast, mpsc, oneshot, watch};

use crate::browser::sessions::Sessions;
use crate::cdp::ours::{EventDownloadProgress, EventDownloadWillBegin};
use crate::cdp::{typed, BrowserEvent, Transport};
use crate::page::dialogs;
use crate::page::downloads::Storing;
use crate::page::tab_state::TabState;
use crate::parts::artifacts::ArtifactStore;

/// Installed before page scripts run (see `js/hooks.js`), answering on this process's
/// channel.
pub static HOOKS_JS: LazyLock<String> = LazyLock::new(|| {
    let (ask, answer) = crate::page::library::channel();
    include_str!("../js/hooks.js")
        .replace("%ASK%", ask)
        .replace("%ANSWER%", answer)
});

/// The commands that ready an attached tab for actions, in order: the page's events and its
/// lifecycle events, its console and the browser's messages about it, its requests (kept from
/// now on: `console.rs`, `network.rs`), the hooks before the page's own scripts, focus emulation (a background
/// tab reports itself unfocused; pages that wait for focus would stall), and its cross-origin
/// frames attached as they come (`frames.rs`). Without the page's log (`--no-page-log`), the
/// commands that only keep it are left out.
pub fn preparation(page_log: bool) -> Vec<(MethodId, Value)> {
    let mut commands = every_preparation();
    if !page_log {
        commands.retain(|(method, _)| !PAGE_LOG.contains(&method.as_ref()));
    }
    commands
}

/// The commands of the preparation that only keep the page's log.
const PAGE_LOG: [&str; 2] = [log::EnableParams::IDENTIFIER, network::EnableParams::IDENTIFIER];

/// A typed command as the transport sends it: its method and params.
fn wire<C: Command>(command: C) -> (MethodId, Value) {
    (command.identifier(), json!(command))
}

/// Installs the hooks in every document of a target before its own scripts (and in those it
/// has now).
fn install_hooks() -> (MethodId, Value) {
    let mut hooks = AddScriptToEvaluateOnNewDocumentParams::new(&*HOOKS_JS);
    hooks.run_immediately = Some(true);
    wire(hooks)
}

fn every_preparation() -> Vec<(MethodId, Value)> {
    vec![
        wire(page::EnableParams::default()),
        wire(runtime::EnableParams::default()),
        wire(log::EnableParams::default()),
        wire(network::EnableParams::default()),
        wire(SetLifecycleEventsEnabledParams::new(true)),
        install_hooks(),
        wire(SetFocusEmulationEnabledParams::new(true)),
        wire(crate::page::frames::auto_attach()),
    ]
}

type Prepared = Arc<Mutex<HashMap<TabId, Arc<TabState>>>>;

pub struct Tabs {
    transport: Arc<dyn Transport>,
    /// Whether tabs keep their console and requests (see [`preparation`]).
    page_log: bool,
    owners: Mutex<Sessions>,
    prepared: Prepared,
    /// What the tabs' watchers store finished downloads with, and signal them on.
    storing: Storing,
}

impl Tabs {
    pub fn new(transport: Arc<dyn Transport>, artifacts: Arc<dyn ArtifactStore>, page_log: bool) -> Self {
        Self {
            page_log,
            storing: Storing {
                transport: transport.clone(),
                artifacts,
                changes: Arc::new(watch::channel(0).0),
            },
            transport,
            owners: Mutex::default(),
            prepared: Arc::default(),
        }
    }

    /// Signals every change to any tab's downloads.
    pub fn download_changes(&self) -> watch::Receiver<u64> {
        self.storing.changes.subscribe()
    }

    pub fn owners(&self) -> MutexGuard<'_, Sessions> {
        self.owners.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn prepared(&self) -> MutexGuard<'_, HashMap<TabId, Arc<TabState>>> {
        self.prepared.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The state of a prepared tab (a fresh one for a tab that is not prepared).
    pub fn state(&self, tab: TabId) -> Arc<TabState> {
        self.prepared().get(&tab).cloned().unwrap_or_default()
    }

    /// Attaches the debugger and readies the tab for actions, once per attach.
    pub async fn prepare(&self, tab: TabId) -> Result<Arc<TabState>, ActionError> {
        if self.transport.is_attached(tab) {
            if let Some(state) = self.prepared().get(&tab) {
                return Ok(state.clone());
            }
        }
        let events = self.transport.events();
        self.transport.attach(tab).await?;
        // Sent together (a tab's session runs them in order), not each after the last's answer:
        // opening a session's tab with the extension loaded, 208-218 -> 188-201 ms in
        // extension mode, 179-186 -> 174 in worker mode (modes bench, alternated).
        let sent = preparation(self.page_log)
            .into_iter()
            .map(|(method, params)| async move { self.transport.send(tab, &method, params).await });
        futures::future::try_join_all(sent).await?;

        let (state, catch_ups) = TabState::new(self.page_log);
        self.prepared().insert(tab, state.clone());
        let (prepared, storing, watched) = (self.prepared.clone(), self.storing.clone(), state.clone());
        tokio::spawn(async move {
            watch(&storing, tab, &watched, (events, catch_ups)).await;
            // Only its own entry: a re-attach may already have prepared the tab anew.
            let mut prepared = prepared.lock().unwrap_or_else(|p| p.into_inner());
            if prepared.get(&tab).is_some_and(|s| Arc::ptr_eq(s, &watched)) {
                prepared.remove(&tab);
            }
        });
        Ok(state)
    }

    /// Forgets a tab that closed or left its session.
    pub fn forget(&self, tab: TabId) {
        self.owners().leave(tab);
        self.prepared().remove(&tab);
    }
}

/// Keeps a prepared tab's state from its events (answering its dialogs as they open, keeping
/// its console) until the tab closes or the debugger leaves it. Asked to catch up, it takes
/// every event already received first.
async fn watch(
    storing: &Storing,
    tab: TabId,
    state: &TabState,
    (mut events, mut catch_ups): (
        broadcast::Receiver<BrowserEvent>,
        mpsc::UnboundedReceiver<oneshot::Sender<()>>,
    ),
) {
    loop {
        let received = tokio::select! {
            received = events.recv() => received,
            Some(done) = catch_ups.recv() => {
                while let Some(received) = pending(&mut events) {
                    if !take(storing, tab, state, received).await {
                        return;
                    }
                }
                let _ = done.send(());
                continue;
            }
        };
        if !take(storing, tab, state, received).await {
            return;
        }
    }
}

/// The next event already received, without waiting.
fn pending(
    events: &mut broadcast::Receiver<BrowserEvent>,
) -> Option<Result<BrowserEvent, broadcast::error::RecvError>> {
    match events.try_recv() {
        Ok(event) => Some(Ok(event)),
        Err(broadcast::error::TryRecvError::Lagged(n)) => Some(Err(broadcast::error::RecvError::Lagged(n))),
        Err(_) => None,
    }
}

/// Whether an event is one of the page's console lines or requests.
fn is_logged(method: &str) -> bool {
    matches!(
        method,
        runtime::EventConsoleApiCalled::IDENTIFIER
            | runtime::EventExceptionThrown::IDENTIFIER
            | log::EventEntryAdded::IDENTIFIER
    ) || method.starts_with("Network.")
}

/// Keeps a console line or a request event, the tab's or one of its frames', unless the host
/// keeps no page log.
fn keep_logged(state: &TabState, method: &str, params: &Value) {
    if !state.keeps_page_log() {
        return;
    }
    match method.starts_with("Network.") {
        true => state.network.observe(method, params),
        false => state.console.observe(method, params),
    }
}

/// A cross-origin frame was attached, held before its document runs (`frames::auto_attach`):
/// the hooks go in before the frame's own scripts, as in the tab (`js/hooks.js`: what the
/// frame's elements listen for, what an action sets going there), and, unless the host keeps
/// no page log, its console lines and requests become the tab's too (what it logged before is
/// replayed by `Runtime.enable`). Then the frame runs, whatever of that failed: a frame left
/// held would never load. Sent beside the watcher, which must not wait on the browser.
fn prepare_frame(storing: &Storing, tab: TabId, state: &TabState, attached: &EventAttachedToTarget) {
    if attached.target_info.r#type != "iframe" {
        return;
    }
    let session: &str = attached.session_id.as_ref();
    let mut commands = vec![wire(page::EnableParams::default()), install_hooks()];
    if state.keeps_page_log() {
        commands.extend([
            wire(runtime::EnableParams::default()),
            wire(log::EnableParams::default()),
            wire(network::EnableParams::default()),
        ]);
    }
    let (transport, session) = (storing.transport.clone(), session.to_owned());
    tokio::spawn(async move {
        // Sent together (a session takes its commands in order): the frame waits one round trip.
        let methods: Vec<MethodId> = commands.iter().map(|(method, _)| method.clone()).collect();
        let (transport, session) = (&transport, &session);
        let sent = commands
            .into_iter()
            .map(|(method, params)| async move { transport.send_in(tab, session, &method, params).await });
        for (answer, method) in futures::future::join_all(sent).await.into_iter().zip(methods) {
            if let Err(e) = answer {
                tracing::debug!(tab, "a frame's {method} failed (it may have gone): {e}");
            }
        }
        let run = typed::command_json_in(
            transport.as_ref(),
            tab,
            session,
            RunIfWaitingForDebuggerParams::default(),
        );
        if let Err(e) = run.await {
            tracing::debug!(tab, "a frame could not be let run (it may have gone): {e}");
        }
    });
}

/// Takes one event into the tab's state; false once the tab is gone.
async fn take(
    storing: &Storing,
    tab: TabId,
    state: &TabState,
    received: Result<BrowserEvent, broadcast::error::RecvError>,
) -> bool {
    match received {
        Ok(BrowserEvent::Cdp {
            tab: t,
            method,
            params,
        }) if t == tab => match method.as_str() {
            page::EventJavascriptDialogOpening::IDENTIFIER => {
                dialogs::answer(storing.transport.as_ref(), tab, &state.dialogs, &params).await
            }
            EventDownloadWillBegin::IDENTIFIER | EventDownloadProgress::IDENTIFIER => {
                if method == EventDownloadWillBegin::IDENTIFIER {
                    state
                        .network
                        .became_download(params["url"].as_str().unwrap_or_default());
                    state.loading.observe(&method, &params);
                }
                state.downloads.observe(&method, &params, storing)
            }
            logged if is_logged(logged) => keep_logged(state, &method, &params),
            EventAttachedToTarget::IDENTIFIER => {
                if let Some(attached) = typed::event(&method, &params) {
                    state.frames.attach(&attached);
                    prepare_frame(storing, tab, state, &attached);
                }
            }
            EventDetachedFromTarget::IDENTIFIER => {
                if let Some(detached) = typed::event(&method, &params) {
                    state.frames.detach(&detached);
                }
            }
            page::EventFrameNavigated::IDENTIFIER if params.pointer("/frame/parentId").is_none() => {
                state.navigated(
                    params
                        .pointer("/frame/url")
                        .and_then(Value::as_str)
                        .unwrap_or_default(),
                );
                state.loading.observe(&method, &params)
            }
            _ => state.loading.observe(&method, &params),
        },
        Ok(BrowserEvent::FrameCdp {
            tab: t,
            method,
            params,
        }) if t == tab && is_logged(&method) => keep_logged(state, &method, &params),
        Ok(BrowserEvent::TabRemoved { tab: t } | BrowserEvent::Detached { tab: t, .. }) if t == tab => {
            return false
        }
        Ok(_) => {}
        Err(broadcast::error::RecvError::Lagged(n)) => {
            tracing::warn!(tab, "the tab's watcher missed {n} events");
            state.loading.loading();
        }
        Err(broadcast::error::RecvError::Closed) => return false,
    }
    true
}
