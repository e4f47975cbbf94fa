//! The confirmation gate (`--confirm first|every`, docs/protocol.md §2.3): before an action runs,
//! the session's subscribers get `browser_task.confirmation_requested`, and a person answers
//! with `browser_task.confirm`. No answer before the action's deadline is `ACTION_TIMEOUT`.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;
use tether_protocol::messages::{ConfirmationRequest, Message};
use tether_protocol::{ActionError, Envelope, ErrorCode};
use tokio::sync::oneshot;
use tokio::time::Instant;

use crate::core::host_link::Link;
use crate::core::request::Request;
use crate::parts::shutdown::{Phase, Shutdown};
use crate::stores::events::Events;
use crate::stores::session_log::Direction;

struct Asked {
    session_id: String,
    answer: oneshot::Sender<bool>,
    /// The request as its subscribers were told, for those who come later.
    asking: ConfirmationRequest,
}

#[derive(Default)]
pub struct Confirmations {
    pending: Mutex<HashMap<String, Asked>>,
}

impl Confirmations {
    fn pending(&self) -> std::sync::MutexGuard<'_, HashMap<String, Asked>> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The questions still waiting for an answer, of one session or of all: a console that
    /// connects after they were asked shows them too.
    pub fn waiting(&self, session_id: Option<&str>) -> Vec<ConfirmationRequest> {
        let pending = self.pending();
        let mut waiting: Vec<ConfirmationRequest> = pending
            .values()
            .filter(|asked| session_id.is_none_or(|s| s == asked.session_id))
            .map(|asked| asked.asking.clone())
            .collect();
        waiting.sort_by(|a, b| a.request_id.cmp(&b.request_id));
        waiting
    }

    /// Asks the session's subscribers (and `owner`, the browser whose owner asked to approve
    /// its actions) and waits for an answer until `deadline`.
    pub async fn ask(
        &self,
        events: &Events,
        shutdown: &Shutdown,
        request: &Request,
        deadline: Instant,
        owner: Option<&Link>,
    ) -> Result<bool, ActionError> {
        let request_id = format!("confirm-{}", crate::parts::ids::random_hex(8));
        let (answer, answered) = oneshot::channel();
        let asking = ConfirmationRequest {
            request_id: request_id.clone(),
            session_id: request.session_id.clone(),
            action_name: request.action.as_str().to_owned(),
            action_id: request.action_id.clone(),
            // Logged and shown beside the actions: typed text appears as its length only.
            summary: summary(request.action.as_str(), &request.logged(false).params),
        };
        self.pending().insert(
            request_id.clone(),
            Asked {
                session_id: request.session_id.clone(),
                answer,
                asking: asking.clone(),
            },
        );
        if let Some(owner) = owner {
            owner.send(Envelope::of(Message::ConfirmationRequested(asking.clone())));
        }
        events.session(
            &request.session_id,
            Direction::Out,
            Message::ConfirmationRequested(asking),
        );
        let timed_out = || {
            ActionError::new(
                ErrorCode::ActionTimeout,
                format!(
                    "no one answered confirmation {request_id} for {} before the action's deadline",
                    request.action
                ),
            )
        };
        let outcome = tokio::select! {
            answer = tokio::time::timeout_at(deadline, answered) => match answer {
                Ok(answer) => Ok(answer.unwrap_or(false)),
                Err(_) => Err(timed_out()),
            },
            _ = shutdown.reached(Phase::Aborting) => Err(ActionError::new(
                ErrorCode::Internal,
                "the relay stopped while the action waited for a person's answer",
            )),
        };
        if outcome.is_err() {
            self.pending().remove(&request_id);
        }
        outcome
    }

    /// Whether this relay waits for the answer to `request_id`.
    pub fn is_waiting(&self, request_id: &str) -> bool {
        self.pending().contains_key(request_id)
    }

    /// A person's answer. `may_answer` says whether the answering peer may see the asked
    /// session (an observer held to one session, a browser to the sessions bound to it);
    /// `refused` says why not when it may not.
    pub fn answer(
        &self,
        request_id: &str,
        approved: bool,
        may_answer: impl Fn(&str) -> bool,
        refused: &str,
    ) -> Result<String, ActionError> {
        let mut pending = self.pending();
        let unknown = || {
            ActionError::new(
                ErrorCode::InvalidParams,
                format!("no confirmation {request_id:?} is waiting (answered already, or timed out)"),
            )
        };
        let asked = pending.get(request_id).ok_or_else(unknown)?;
        if !may_answer(&asked.session_id) {
            return Err(ActionError::new(ErrorCode::Forbidden, refused));
        }
        let asked = pending.remove(request_id).ok_or_else(unknown)?;
        let _ = asked.answer.send(approved);
        Ok(asked.session_id)
    }
}

/// One line a person can decide on: the action and what it would touch.
pub fn summary(action_name: &str, params: &Value) -> String {
    let mut parts = vec![action_name.to_owned()];
    for key in ["url", "tabId", "xpath", "text"] {
        if let Some(value) = params.get(key).filter(|v| !v.is_null()) {
            let shown = match value {
                Value::String(s) if s.chars().count() > 80 => {
                    format!("{}…", s.chars().take(80).collect::<String>())
                }
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            parts.push(format!("{key}={shown}"));
        }
    }
    parts.join(" ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::core::request::Request;

    #[test]
    fn a_summary_shows_typed_text_as_its_length() {
        let request = Request {
            session_id: "s".into(),
            client_id: None,
            action_id: "a".into(),
            action: crate::core::request::Named::Action(tether_protocol::ActionName::BrowserType),
            params: json!({ "tabId": 1, "xpath": "//input", "text": "hunter2" }),
            timeout: None,
            peek: false,
        };
        let shown = super::summary(request.action.as_str(), &request.logged(false).params);
        assert_eq!(shown, "browser_type tabId=1 xpath=//input text=<typed: 7 chars>");
    }
}
