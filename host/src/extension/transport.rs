//! The CDP seam over the extension (extension mode): each [`Transport`] call becomes a `call`
//! message to the extension's service worker, which runs it with `chrome.tabs` or
//! `chrome.debugger` and sends a `reply`; CDP events, detaches and tab changes come back as
//! messages of their own. Every action of the catalog runs on this unchanged.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{json, Value};
use tether_protocol::actions::TabId;
use tether_protocol::framing::HOST_TO_BROWSER_MAX;
use tokio::sync::{broadcast, mpsc, oneshot};

use crate::cdp::{BrowserEvent, CdpError, TabInfo, Transport};

/// How long the extension has to answer one call. Chrome answers in milliseconds; a service
/// worker that went away never does.
const CALL_TIMEOUT: Duration = Duration::from_secs(60);
const EVENT_BUFFER: usize = 4096;

pub struct ExtensionTransport {
    /// Messages to the extension (the writer frames them).
    to_extension: mpsc::UnboundedSender<Value>,
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
pub fn tab_info(tab: &Value) -> Option<TabInfo> {
    let int = |key: &str| tab.get(key).and_then(Value::as_i64);
    let text = |key: &str| {
        tab.get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned()
    };
    Some(TabInfo {
        tab_id: int("tabId")?,
        window_id: int("windowId"),
        group_id: int("groupId"),
        opener_tab_id: int("openerTabId"),
        url: text("url"),
        title: text("title"),
    })
}

impl ExtensionTransport {
    pub fn new(to_extension: mpsc::UnboundedSender<Value>) -> Self {
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
    async fn call(&self, method: &str, params: Value) -> Result<Value, CdpError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let message = json!({ "type": "call", "id": id, "method": method, "params": params });
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

    /// A message from the extension that is not a tab report (those go through
    /// [`Self::tab_report`]): replies, CDP events, detaches.
    pub fn receive(&self, message: &Value) {
        let tab = message.get("tabId").and_then(Value::as_i64);
        match message.get("type").and_then(Value::as_str) {
            Some("reply") => {
                let Some(id) = message.get("id").and_then(Value::as_u64) else {
                    return;
                };
                let Some(waiting) = lock(&self.pending).remove(&id) else {
                    return;
                };
                let answer = match message.get("error").and_then(Value::as_str) {
                    Some(error) => Err(error.to_owned()),
                    None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                };
                let _ = waiting.send(answer);
            }
            Some("cdp.event") => {
                if let (Some(tab), Some(method)) = (tab, message.get("method").and_then(Value::as_str)) {
                    let params = message.get("params").cloned().unwrap_or(Value::Null);
                    let _ = self.events.send(BrowserEvent::Cdp {
                        tab,
                        method: method.to_owned(),
                        params,
                    });
                }
            }
            Some("cdp.detached") => {
                if let Some(tab) = tab {
                    lock(&self.attached).remove(&tab);
                    let reason = message.get("reason").and_then(Value::as_str).unwrap_or("unknown");
                    lock(&self.detached).insert(tab, reason.to_owned());
                    let _ = self.events.send(BrowserEvent::Detached {
                        tab,
                        reason: reason.to_owned(),
                    });
                }
            }
            _ => {}
        }
    }

    /// The extension's `full_state_sync` / `tab_event` payloads keep the tab table current.
    pub fn tab_report(&self, kind: &str, payload: &Value) {
        if kind == "full_state_sync" {
            let tabs: HashMap<TabId, TabInfo> = payload
                .get("tabs")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(tab_info)
                .map(|t| (t.tab_id, t))
                .collect();
            *lock(&self.tabs) = tabs;
            return;
        }
        match payload.get("event").and_then(Value::as_str) {
            Some(event @ ("created" | "updated")) => {
                let Some(info) = payload.get("tab").and_then(tab_info) else {
                    return;
                };
                lock(&self.tabs).insert(info.tab_id, info.clone());
                let _ = self.events.send(if event == "created" {
                    BrowserEvent::TabCreated(info)
                } else {
                    BrowserEvent::TabUpdated(info)
                });
            }
            Some("removed") => {
                if let Some(tab) = payload.get("tabId").and_then(Value::as_i64) {
                    lock(&self.tabs).remove(&tab);
                    lock(&self.attached).remove(&tab);
                    let _ = self.events.send(BrowserEvent::TabRemoved { tab });
                }
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
    async fn open_tab(&self, url: &str, group_title: Option<&str>) -> Result<TabInfo, CdpError> {
        let tab = self
            .call("tabs.create", json!({ "url": url, "groupTitle": group_title }))
            .await?;
        let info =
            tab_info(&tab).ok_or_else(|| CdpError::Other(format!("the extension made no tab: {tab}")))?;
        lock(&self.tabs).insert(info.tab_id, info.clone());
        Ok(info)
    }

    async fn close_tab(&self, tab: TabId) -> Result<(), CdpError> {
        match self.call("tabs.close", json!({ "tabId": tab })).await {
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
        match self.call("debugger.attach", json!({ "tabId": tab })).await {
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
        self.call("debugger.detach", json!({ "tabId": tab }))
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
        let params = json!({ "tabId": tab, "method": method, "params": params });
        match self.call("debugger.send", params).await {
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

    fn events(&self) -> broadcast::Receiver<BrowserEvent> {
        self.events.subscribe()
    }
}
