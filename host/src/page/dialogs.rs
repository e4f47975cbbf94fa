//! JavaScript dialogs never block an action: the watcher of each prepared tab (`tabs`) answers
//! each one as it opens (as the running action's `dialog` param says, else: accept `alert` and
//! `beforeunload`, dismiss `confirm` and `prompt`) and records it, so the action during which
//! it opened can list it.

use chromiumoxide::cdp::browser_protocol::page::HandleJavaScriptDialogParams;
use std::sync::Mutex;

use serde_json::Value;
use tether_protocol::actions::{Dialog, DialogAnswer, TabId};

use crate::cdp::Transport;

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

/// Answers a dialog the tab opened (`Page.javascriptDialogOpening`'s params) and lists it for
/// the action running.
pub async fn answer(transport: &dyn Transport, tab: TabId, log: &DialogLog, params: &Value) {
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
    // Listed before it is answered: the action that opened it is still waiting for the
    // answer, so the dialog is in its result.
    log.push(Dialog {
        kind: kind.clone(),
        message,
    });
    let answer = log.answer();
    let accept = answer
        .as_ref()
        .map_or(matches!(kind.as_str(), "alert" | "beforeunload"), |a| a.accept);
    let mut reply = HandleJavaScriptDialogParams::new(accept);
    reply.prompt_text = answer.and_then(|a| a.prompt_text);
    if let Err(e) = crate::cdp::typed::command(transport, tab, reply).await {
        tracing::warn!(tab, "could not answer a {kind} dialog: {e}");
    }
}
