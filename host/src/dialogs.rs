//! JavaScript dialogs never block an action: a watcher per prepared tab answers each one as it
//! opens (as the running action's `dialog` param says, else: accept `alert` and
//! `beforeunload`, dismiss `confirm` and `prompt`) and records it, so the action during which
//! it opened can list it.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tether_protocol::actions::{Dialog, DialogAnswer, TabId};
use tokio::sync::broadcast;

use crate::cdp::{BrowserEvent, Transport};

/// The dialogs a tab has shown since they were last taken, and how the running action asked
/// for them to be answered.
#[derive(Default)]
pub struct DialogLog {
    shown: Mutex<Vec<Dialog>>,
    answer: Mutex<Option<DialogAnswer>>,
}

impl DialogLog {
    pub fn take(&self) -> Vec<Dialog> {
        std::mem::take(&mut *lock(&self.shown))
    }

    /// How to answer dialogs from now on (`None`: the defaults).
    pub fn answer_with(&self, answer: Option<DialogAnswer>) {
        *lock(&self.answer) = answer;
    }

    fn answer(&self) -> Option<DialogAnswer> {
        lock(&self.answer).clone()
    }

    fn push(&self, dialog: Dialog) {
        lock(&self.shown).push(dialog);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
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
                let message = params
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                // Listed before it is answered: the action that opened it is still waiting
                // for the answer, so the dialog is in its result.
                log.push(Dialog {
                    kind: kind.clone(),
                    message,
                });
                let answer = log.answer();
                let accept = answer
                    .as_ref()
                    .map_or(matches!(kind.as_str(), "alert" | "beforeunload"), |a| a.accept);
                let mut reply = json!({ "accept": accept });
                if let Some(text) = answer.and_then(|a| a.prompt_text) {
                    reply["promptText"] = json!(text);
                }
                if let Err(e) = transport.send(tab, "Page.handleJavaScriptDialog", reply).await {
                    tracing::warn!(tab, "could not answer a {kind} dialog: {e}");
                }
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
