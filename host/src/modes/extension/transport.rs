//! The CDP seam over the extension (extension mode): each [`Transport`] call becomes a `call`
//! message to the extension's service worker, which runs it with `chrome.tabs` or
//! `chrome.debugger` and sends a `reply`; CDP events, detaches and tab changes come back as
//! messages of their own. Every action of the catalog runs on this unchanged.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tether_protocol::actions::TabId;
use tether_protocol::framing::HOST_TO_BROWSER_MAX;
use tether_protocol::native::{ExtensionCall, ToExtension};
use tether_protocol::twin::{FullState, Tab, TabEvent};
use tokio::sync::{broadcast, mpsc, oneshot};

use crate::cdp::{BrowserEvent, CdpError, Downloaded, TabInfo, Transport};

/// How long the extension has to answer one call. Chrome answers in milliseconds; a service
/// worker that went away never does.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);
const EVENT_BUFFER: usize = 4096;

pub struct ExtensionTransport {
    /// Messages to the extension (the writer frames them).
    to_extension: mpsc::UnboundedSender<ToExtension>,
    next_id: AtomicU64,
    pending: Mutex<HashMap<u64, oneshot::Sender<Result<Value, String>>>>,
    tabs: Mutex<HashMap<TabId, TabInfo>>,
    attached: Mutex<HashSet<TabId>>,
    /// Why the debugger left a tab, until it is attached again: the error a later call gets.
    detached: Mutex<HashMap<TabId, String>>,
    events: broadcast::Sender<BrowserEvent>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

/// A tab as the extension reports it (the twin's shape).
pub fn tab_info(tab: &Tab) -> TabInfo {
    TabInfo {
        tab_id: tab.tab_id,
        window_id: Some(tab.window_id),
        group_id: tab.group_id,
        opener_tab_id: tab.opener_tab_id,
        url: tab.url.clone(),
        title: tab.title.clone(),
        context: None,
    }
}

impl ExtensionTransport {
    pub fn new(to_extension: mpsc::UnboundedSender<ToExtension>) -> Self {
        Self {
            to_extension,
            next_id: AtomicU64::new(1),
            pending: Mutex::default(),
            tabs: Mutex::default(),
            attached: Mutex::default(),
            detached: Mutex::default(),
            events: broadcast::channel(EVENT_BUFFER).0,
        }
    }

    /// Runs one call in the extension.
    async fn call(&self, call: ExtensionCall) -> Result<Value, CdpError> {
        let method = call.method();
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let message = ToExtension::Call { id, call };
        // Chrome kills the port on a larger message: refuse it here, the port stays.
        let size = serde_json::to_vec(&message)
            .map(|v| v.len())
            .unwrap_or(usize::MAX);
        if size > HOST_TO_BROWSER_MAX {
            return Err(CdpError::TooLarge {
                method: method.to_owned(),
                size,
            });
        }
        let (tx, rx) = oneshot::channel();
        lock(&self.pending).insert(id, tx);
        if self.to_extension.send(message).is_err() {
            lock(&self.pending).remove(&id);
            return Err(CdpError::Disconnected);
        }
        match tokio::time::timeout(CALL_TIMEOUT, rx).await {
            Ok(Ok(Ok(value))) => Ok(value),
            Ok(Ok(Err(message))) => Err(error_of(method, message)),
            Ok(Err(_)) => Err(CdpError::Disconnected),
            Err(_) => {
                lock(&self.pending).remove(&id);
                Err(CdpError::Other(format!(
                    "the extension did not answer {method} in time"
                )))
            }
        }
    }

    /// The extension's answer to the call `id`.
    pub fn reply(&self, id: u64, result: Value, error: Option<String>) {
        if let Some(waiting) = lock(&self.pending).remove(&id) {
            let _ = waiting.send(error.map_or(Ok(result), Err));
        }
    }

    /// An event of `tab`, or of one of its frames' sessions (`in_frame`).
    pub fn cdp_event(&self, tab: TabId, in_frame: bool, method: String, params: Value) {
        let event = match in_frame {
            true => BrowserEvent::FrameCdp { tab, method, params },
            false => BrowserEvent::Cdp { tab, method, params },
        };
        let _ = self.events.send(event);
    }

    /// The debugger left `tab` on its own; later calls on it say why.
    pub fn detached(&self, tab: TabId, reason: String) {
        lock(&self.attached).remove(&tab);
        lock(&self.detached).insert(tab, reason.clone());
        let _ = self.events.send(BrowserEvent::Detached { tab, reason });
    }

    /// The extension's `full_state_sync` replaces the tab table.
    pub fn full_state(&self, state: &FullState) {
        *lock(&self.tabs) = state.tabs.iter().map(|t| (t.tab_id, tab_info(t))).collect();
    }

    /// The extension's `tab_event`s keep the tab table current.
    pub fn tab_event(&self, event: &TabEvent) {
        match event {
            TabEvent::Created { tab } | TabEvent::Updated { tab } => {
                let info = tab_info(tab);
                lock(&self.tabs).insert(info.tab_id, info.clone());
                let _ = self.events.send(if matches!(event, TabEvent::Created { .. }) {
                    BrowserEvent::TabCreated(info)
                } else {
                    BrowserEvent::TabUpdated(info)
                });
            }
            TabEvent::Removed { tab_id, .. } => {
                lock(&self.tabs).remove(tab_id);
                lock(&self.attached).remove(tab_id);
                let _ = self.events.send(BrowserEvent::TabRemoved { tab: *tab_id });
            }
            _ => {}
        }
    }

    /// Why a tab is not attached: the reason the debugger left, when it left on its own (the
    /// user's "Cancel", "Stop all"), so the error says what happened.
    fn not_attached(&self, tab: TabId) -> CdpError {
        match lock(&self.detached).get(&tab) {
            Some(reason) => CdpError::Detached {
                tab,
                reason: reason.clone(),
            },
            None => CdpError::NotAttached(tab),
        }
    }

    /// The port closed: every call still waiting fails now.
    pub fn close(&self) {
        lock(&self.pending).clear();
    }
}

/// Turns chrome.debugger's error text into the seam's errors.
fn error_of(method: &str, message: String) -> CdpError {
    // chrome.debugger reports a CDP error as its JSON: {"code":-32000,"message":"..."}.
    if let Ok(error) = serde_json::from_str::<Value>(&message) {
        if let (Some(code), Some(text)) = (error["code"].as_i64(), error["message"].as_str()) {
            return CdpError::Protocol {
                method: method.to_owned(),
                code,
                message: text.to_owned(),
            };
        }
    }
    CdpError::Other(message)
}

#[async_trait]
impl Transport for ExtensionTransport {
    /// The person's one profile: `context` is always `None` here (no contexts to give).
    async fn open_tab(
        &self,
        url: &str,
        group_title: Option<&str>,
        _context: Option<&str>,
    ) -> Result<TabInfo, CdpError> {
        let tab = self
            .call(ExtensionCall::TabsCreate {
                url: url.to_owned(),
                group_title: group_title.map(str::to_owned),
            })
            .await?;
        let tab: Tab = serde_json::from_value(tab)
            .map_err(|e| CdpError::Other(format!("the extension made no tab: {e}")))?;
        let info = tab_info(&tab);
        lock(&self.tabs).insert(info.tab_id, info.clone());
        Ok(info)
    }

    async fn close_tab(&self, tab: TabId) -> Result<(), CdpError> {
        match self.call(ExtensionCall::TabsClose { tab_id: tab }).await {
            Err(CdpError::Other(message)) if message.contains("No tab with") => Err(CdpError::TabGone(tab)),
            other => other.map(|_| ()),
        }
    }

    async fn tab(&self, tab: TabId) -> Result<Option<TabInfo>, CdpError> {
        Ok(lock(&self.tabs).get(&tab).cloned())
    }

    async fn tabs(&self) -> Result<Vec<TabInfo>, CdpError> {
        let mut tabs: Vec<TabInfo> = lock(&self.tabs).values().cloned().collect();
        tabs.sort_by_key(|t| t.tab_id);
        Ok(tabs)
    }

    async fn attach(&self, tab: TabId) -> Result<(), CdpError> {
        if self.is_attached(tab) {
            return Ok(());
        }
        match self.call(ExtensionCall::DebuggerAttach { tab_id: tab }).await {
            Ok(_) => {
                lock(&self.attached).insert(tab);
                lock(&self.detached).remove(&tab);
                Ok(())
            }
            Err(CdpError::Other(message)) if message.contains("No tab with") => Err(CdpError::TabGone(tab)),
            Err(e) => Err(e),
        }
    }

    async fn detach(&self, tab: TabId) -> Result<(), CdpError> {
        lock(&self.attached).remove(&tab);
        self.call(ExtensionCall::DebuggerDetach { tab_id: tab })
            .await
            .map(|_| ())
    }

    fn is_attached(&self, tab: TabId) -> bool {
        lock(&self.attached).contains(&tab)
    }

    async fn send(&self, tab: TabId, method: &str, params: Value) -> Result<Value, CdpError> {
        if !self.is_attached(tab) {
            return Err(self.not_attached(tab));
        }
        let call = ExtensionCall::DebuggerSend {
            tab_id: tab,
            session_id: None,
            method: method.to_owned(),
            params,
        };
        match self.call(call).await {
            Err(CdpError::Other(message)) if message.contains("No tab with") => Err(CdpError::TabGone(tab)),
            // "Debugger is not attached", or a command cut short: "Detached while handling".
            Err(CdpError::Other(message))
                if message.contains("not attached") || message.contains("Detached") =>
            {
                lock(&self.attached).remove(&tab);
                Err(self.not_attached(tab))
            }
            other => other,
        }
    }

    async fn send_in(
        &self,
        tab: TabId,
        session: &str,
        method: &str,
        params: Value,
    ) -> Result<Value, CdpError> {
        if !self.is_attached(tab) {
            return Err(self.not_attached(tab));
        }
        // A child session's failure is the frame's (it went away), never the tab's detach.
        self.call(ExtensionCall::DebuggerSend {
            tab_id: tab,
            session_id: Some(session.to_owned()),
            method: method.to_owned(),
            params,
        })
        .await
    }

    fn events(&self) -> broadcast::Receiver<BrowserEvent> {
        self.events.subscribe()
    }

    async fn downloaded(&self, _guid: &str, url: &str) -> Result<Downloaded, CdpError> {
        #[derive(serde::Deserialize)]
        struct Found {
            filename: std::path::PathBuf,
            mime: Option<String>,
        }
        let found = self
            .call(ExtensionCall::DownloadsFind { url: url.to_owned() })
            .await?;
        let found: Found = serde_json::from_value(found)
            .map_err(|e| CdpError::Other(format!("the extension found no download: {e}")))?;
        Ok(Downloaded {
            path: found.filename,
            mime_type: found.mime.filter(|m| !m.is_empty()),
            staged: false,
        })
    }

    async fn cancel_download(&self, _guid: &str) -> Result<(), CdpError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use tether_protocol::native::ExtensionCall;

    #[test]
    fn the_extension_answers_every_call_the_host_makes() {
        let worker = include_str!("../../../../extension/src/service_worker.js");
        let table = &worker[worker.find("const calls = {").expect("the calls table")..];
        let table = &table[..table.find("};").expect("its end")];
        for method in ExtensionCall::METHODS {
            assert!(
                table.contains(&format!("\"{method}\":")),
                "{method} is not in the extension's calls"
            );
        }
    }
}
