//! JavaScript dialogs never block an action: a watcher per prepared tab answers each one as it
//! opens (accept `alert` and `beforeunload`, dismiss `confirm` and `prompt`) and records it, so
//! the action during which it opened can list it.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tether_protocol::actions::{Dialog, TabId};
use tokio::sync::broadcast;

use crate::cdp::{BrowserEvent, Transport};

/// The dialogs a tab has shown since they were last taken.
#[derive(Default)]
pub struct DialogLog(Mutex<Vec<Dialog>>);

impl DialogLog {
    pub fn take(&self) -> Vec<Dialog> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn push(&self, dialog: Dialog) {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).push(dialog);
    }
}

/// Answers the tab's dialogs until the tab closes or the debugger leaves it.
pub async fn watch(
    transport: Arc<dyn Transport>,
    tab: TabId,
    log: &DialogLog,
    mut events: broadcast::Receiver<BrowserEvent>,
) {
    loop {
        match events.recv().await {
            Ok(BrowserEvent::Cdp {
                tab: t,
                method,
                params,
            }) if t == tab && method == "Page.javascriptDialogOpening" => {
                let kind = params
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("alert")
                    .to_owned();
                let accept = matches!(kind.as_str(), "alert" | "beforeunload");
                if let Err(e) = transport
                    .send(tab, "Page.handleJavaScriptDialog", json!({ "accept": accept }))
                    .await
                {
                    tracing::warn!(tab, "could not answer a {kind} dialog: {e}");
                }
                let message = params
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                log.push(Dialog { kind, message });
            }
            Ok(BrowserEvent::TabRemoved { tab: t } | BrowserEvent::Detached { tab: t, .. }) if t == tab => {
                return
            }
            Ok(_) => {}
            Err(broadcast::error::RecvError::Lagged(n)) => {
                tracing::warn!(tab, "dialog watcher missed {n} events")
            }
            Err(broadcast::error::RecvError::Closed) => return,
        }
    }
}
