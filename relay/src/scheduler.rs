//! Runs `browser_action`s (PROTOCOL.md §2.3): one at a time per session, the rest in a
//! bounded FIFO; an action id is an idempotency key; every accepted action ends in exactly one
//! result, and a session's results come back in the order its actions were accepted.
//!
//! A session with work has one runner task that drains its queue; it exists only while there
//! is something to run. Each action goes through [`crate::dispatch`], which selects the
//! browser, asks for confirmation and talks to the host.

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use serde_json::{json, Value};
use tether_protocol::result::ActionHeader;
use tether_protocol::{ActionCall, ActionError, ActionResult, Envelope, ErrorCode};
use tokio::sync::{oneshot, OwnedSemaphorePermit};

use crate::outbox::Outbox;
use crate::session_log::Direction;
use crate::sessions::{Activity, Outcome, Session};
use crate::shutdown::Phase;
use crate::state::Relay;

/// Where a result goes.
pub enum Reply {
    /// An HTTP request waiting for it.
    Channel(oneshot::Sender<ActionResult>),
    /// A WebSocket orchestrator: an ack, then the result, each in reply to its request. The
    /// slot is the action's share of the peer's outbox, given back with the result.
    Socket {
        outbox: Outbox,
        request_id: Option<String>,
        slot: OwnedSemaphorePermit,
    },
}

impl Reply {
    fn ack(&self, action_id: &str) {
        if let Self::Socket {
            outbox, request_id, ..
        } = self
        {
            outbox.reply(
                request_id.clone(),
                "browser_action.ack",
                json!({ "actionId": action_id }),
            );
        }
    }

    fn deliver(self, result: ActionResult) {
        match self {
            Self::Channel(tx) => {
                let _ = tx.send(result);
            }
            Self::Socket {
                outbox,
                request_id,
                slot,
            } => {
                let envelope = Envelope::new("browser_action.result", json!(result)).reply_to(request_id);
                outbox.send_releasing(envelope, Some(slot));
            }
        }
    }
}

/// One accepted action waiting for its turn.
pub struct Job {
    pub request: ActionRequest,
    pub reply: Reply,
}

/// A `browser_action` payload, checked.
#[derive(Debug, Clone)]
pub struct ActionRequest {
    pub session_id: String,
    pub client_id: Option<String>,
    pub action_id: String,
    pub action_name: String,
    pub params: Value,
    pub timeout: Option<Duration>,
}

impl ActionRequest {
    pub fn header(&self, client_id: Option<&str>) -> ActionHeader {
        ActionHeader {
            action_id: self.action_id.clone(),
            action_name: self.action_name.clone(),
            session_id: self.session_id.clone(),
            client_id: client_id
                .or(self.client_id.as_deref())
                .unwrap_or_default()
                .to_owned(),
        }
    }

    /// A result the relay decided itself, without the browser.
    pub fn failed(
        &self,
        client_id: Option<&str>,
        started: chrono::DateTime<Utc>,
        error: ActionError,
    ) -> ActionResult {
        ActionResult::new(self.header(client_id), started, Utc::now(), Err(error))
    }

    /// The request as the session log keeps it.
    pub fn logged(&self) -> Value {
        json!({
            "actionId": self.action_id,
            "actionName": self.action_name,
            "params": self.params,
            "clientId": self.client_id,
            "timeoutMs": self.timeout.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
        })
    }

    /// The payload as forwarded to the host, with the time left for it.
    pub fn forwarded(&self, client_id: &str, timeout: Duration) -> Value {
        json!({
            "sessionId": self.session_id,
            "clientId": client_id,
            "actionId": self.action_id,
            "actionName": self.action_name,
            "params": self.params,
            "timeoutMs": u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
        })
    }
}

/// A body that is not a `browser_action` payload at all (no `sessionId` or `actionName`).
#[derive(Debug)]
pub struct NotAnAction(pub ActionError);

/// Reads a `browser_action` payload. A payload without a session or an action name is not
/// one (`Err`); anything else wrong with it is the action's error result (`Ok(Err)`), so
/// orchestrators handle one shape.
pub fn parse(payload: &Value) -> Result<Result<ActionRequest, (ActionRequest, ActionError)>, NotAnAction> {
    let text = |key: &str| payload.get(key).and_then(Value::as_str).map(str::to_owned);
    let (Some(session_id), Some(action_name)) = (text("sessionId"), text("actionName")) else {
        return Err(NotAnAction(ActionError::new(
            ErrorCode::InvalidMessage,
            "a browser_action payload needs \"sessionId\" and \"actionName\" strings",
        )));
    };
    if session_id.is_empty() {
        return Err(NotAnAction(ActionError::new(
            ErrorCode::InvalidMessage,
            "\"sessionId\" must not be empty",
        )));
    }
    let mut request = ActionRequest {
        session_id,
        client_id: text("clientId"),
        action_id: text("actionId")
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| format!("act-{}", crate::ids::random_hex(8))),
        action_name,
        params: payload.get("params").cloned().unwrap_or_else(|| json!({})),
        timeout: None,
    };
    let invalid = |request: &ActionRequest, message: String| {
        Ok(Err((
            request.clone(),
            ActionError::new(ErrorCode::InvalidParams, message),
        )))
    };
    for key in ["clientId", "actionId"] {
        if payload.get(key).is_some_and(|v| !v.is_null() && !v.is_string()) {
            return invalid(&request, format!("\"{key}\" must be a string"));
        }
    }
    match payload.get("timeoutMs") {
        None | Some(Value::Null) => {}
        Some(v) => match v.as_u64().filter(|ms| *ms > 0) {
            Some(ms) => request.timeout = Some(Duration::from_millis(ms)),
            None => {
                return invalid(
                    &request,
                    "\"timeoutMs\" must be a positive integer of milliseconds".into(),
                )
            }
        },
    }
    // The relay checks params with the host's own types, so a bad call fails fast and the
    // same way whichever browser would have run it.
    if let Err(error) = ActionCall::parse(&request.action_name, request.params.clone()) {
        return Ok(Err((request, error)));
    }
    Ok(Ok(request))
}

/// Accepts a parsed `browser_action` for its session's queue, or answers it at once (a
/// replayed id, a full queue, a request refused before it ran).
pub fn submit(relay: &Arc<Relay>, parsed: Result<ActionRequest, (ActionRequest, ActionError)>, reply: Reply) {
    let request = match parsed {
        Ok(request) => request,
        Err((request, error)) => {
            relay.events.record(
                &request.session_id,
                Direction::In,
                "browser_action",
                request.logged(),
            );
            let result = request.failed(None, Utc::now(), error);
            return finish_refused(relay, result, reply);
        }
    };
    let session_id = request.session_id.clone();
    relay
        .events
        .record(&session_id, Direction::In, "browser_action", request.logged());
    if relay.shutdown.phase() >= Phase::Draining {
        let result = request.failed(None, Utc::now(), stopping());
        return finish_refused(relay, result, reply);
    }
    let mut sessions = relay.sessions.lock();
    let session = sessions.entry(session_id.clone()).or_default();
    match session.outcome(&request.action_id) {
        Some(Outcome::Done(text)) => {
            let stored = serde_json::from_str::<ActionResult>(text);
            drop(sessions);
            let result = match stored {
                Ok(result) => replayed(result),
                Err(e) => request.failed(
                    None,
                    Utc::now(),
                    ActionError::internal(format!("the stored result is unreadable: {e}")),
                ),
            };
            reply.ack(&request.action_id);
            return finish_refused(relay, result, reply);
        }
        Some(Outcome::Running(waiting)) => {
            reply.ack(&request.action_id);
            waiting.push(reply);
            return;
        }
        None => {}
    }
    if session.busy && session.queue.len() >= relay.settings.queue_limit {
        drop(sessions);
        let error = ActionError::new(
            ErrorCode::QueueFull,
            format!(
                "session {session_id} already has {} actions waiting; wait for results before sending more",
                relay.settings.queue_limit
            ),
        );
        let result = request.failed(None, Utc::now(), error);
        return finish_refused(relay, result, reply);
    }
    session.start_outcome(&request.action_id);
    session.queue.push_back(Job { request, reply });
    if !session.busy {
        session.busy = true;
        tokio::spawn(drain(relay.clone(), session_id));
    }
}

fn stopping() -> ActionError {
    ActionError::new(
        ErrorCode::Internal,
        "the relay is shutting down and did not run this action; send it again once the relay is back",
    )
}

/// Hands out a result that was decided without running anything new.
fn finish_refused(relay: &Relay, result: ActionResult, reply: Reply) {
    relay.metrics.finished(&result);
    relay.events.session(
        &result.session_id,
        Direction::Out,
        "browser_action.result",
        json!(result),
    );
    reply.deliver(result);
}

fn replayed(mut result: ActionResult) -> ActionResult {
    result.replayed = Some(true);
    result
}

/// Runs a session's queue until it is empty.
async fn drain(relay: Arc<Relay>, session_id: String) {
    loop {
        let job = {
            let mut sessions = relay.sessions.lock();
            let Some(session) = sessions.get_mut(&session_id) else {
                return;
            };
            match session.queue.pop_front() {
                Some(job) => job,
                None => {
                    session.busy = false;
                    drop(sessions);
                    relay.shutdown.idle.notify_waiters();
                    return;
                }
            }
        };
        let Job { request, reply } = job;
        // A stopping relay starts nothing new; queued actions still end in order.
        let result = if relay.shutdown.phase() >= Phase::Draining {
            request.failed(None, Utc::now(), stopping())
        } else {
            crate::dispatch::run(&relay, &request, || reply.ack(&request.action_id)).await
        };
        finish(&relay, result, reply);
    }
}

/// Records a finished action: its outcome for repeats, the session's new status, the log and
/// the subscribers; then the result goes to whoever asked, and to each repeat.
fn finish(relay: &Relay, result: ActionResult, reply: Reply) {
    relay.metrics.finished(&result);
    let (waiting, state) = {
        let mut sessions = relay.sessions.lock();
        let session = sessions.entry(result.session_id.clone()).or_default();
        let before = session.status();
        settle(session, &result);
        let waiting = session.finish_outcome(&result);
        let state = (session.status() != before).then(|| session.state(&result.session_id));
        (waiting, state)
    };
    let session_id = result.session_id.clone();
    relay.events.session(
        &session_id,
        Direction::Out,
        "browser_action.result",
        json!(result),
    );
    if let Some(state) = state {
        let completed = state["status"] == "completed";
        relay
            .events
            .session(&session_id, Direction::Internal, "session.state", state);
        if completed {
            relay.events.session(
                &session_id,
                Direction::Internal,
                "stream_end",
                json!({ "sessionId": session_id, "reason": "session_stop" }),
            );
        }
    }
    for repeat in waiting {
        repeat.deliver(replayed(result.clone()));
    }
    reply.deliver(result);
}

/// The session's status after an action (PROTOCOL.md §2.3): a failure of the browser or the
/// link puts it in `error` until an action succeeds; an action's own error does not.
fn settle(session: &mut Session, result: &ActionResult) {
    session.in_flight = None;
    session.ran = true;
    let code = result.error.as_ref().map(|e| e.code);
    session.activity = Some(match code {
        Some(ErrorCode::NoClientSelected) => Activity::WaitingForBrowserSelection,
        _ => Activity::Idle,
    });
    match code {
        None => {
            session.failed = false;
            session.last_error = None;
            if result.action_name == "session_stop" {
                session.completed = true;
            }
        }
        Some(
            ErrorCode::AckTimeout
            | ErrorCode::ActionTimeout
            | ErrorCode::ClientOffline
            | ErrorCode::CdpError
            | ErrorCode::Internal,
        ) => {
            session.failed = true;
            session.last_error = result.error.clone();
        }
        Some(_) => session.last_error = result.error.clone(),
    }
}
