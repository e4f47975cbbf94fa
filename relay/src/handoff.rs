//! A person takes the wheel (`browser_handoff`, docs/protocol.md §18). The action runs on the
//! host like any other and waits there for the person; the relay tells the session's
//! subscribers (the console) `handoff.requested` when it starts and `handoff.ended` with its
//! result, and passes a person's Done or Decline (`handoff.answer`) to the host running it.

use std::sync::Arc;

use serde_json::Value;
use tether_protocol::actions::browser_handoff;
use tether_protocol::messages::{
    HandoffAnswer, HandoffEnded, HandoffOutcome, HandoffRequested, Message, SessionStatus,
};
use tether_protocol::{ActionError, ActionResult, Envelope, ErrorCode};

use crate::request::Request;
use crate::state::Relay;

/// `handoff.requested`, for a handoff the browser is about to run.
pub fn requested(request: &Request) -> Option<Message> {
    let params: browser_handoff::Params = serde_json::from_value(request.params.clone()).ok()?;
    Some(Message::HandoffRequested(HandoffRequested {
        session_id: request.session_id.clone(),
        tab_id: params.tab_id,
        action_id: request.action_id.clone(),
        message: params.message,
    }))
}

/// `handoff.ended`, for a handoff's result.
pub fn ended(result: &ActionResult, params: &Value) -> Option<Message> {
    let tab_id = params.get("tabId").and_then(Value::as_i64)?;
    let (outcome, note) = match &result.error {
        None => {
            let output = result
                .result
                .as_ref()
                .map(|r| r.read::<browser_handoff::Output>());
            (
                HandoffOutcome::Done,
                output.and_then(Result::ok).and_then(|o| o.note),
            )
        }
        Some(error) if error.code == ErrorCode::UserDenied => (HandoffOutcome::Declined, None),
        Some(error) if error.code == ErrorCode::ActionTimeout => (HandoffOutcome::Timeout, None),
        // The browser went away or refused the tab: no person was asked to act.
        Some(_) => return None,
    };
    Some(Message::HandoffEnded(HandoffEnded {
        session_id: result.session_id.clone(),
        tab_id,
        action_id: result.action_id.clone(),
        outcome,
        note,
    }))
}

/// Passes a person's answer to the browser whose handoff waits for it. Refused unless the
/// session waits for a person in that very action.
pub async fn answer(relay: &Arc<Relay>, answer: HandoffAnswer) -> Result<Message, ActionError> {
    let note_chars = answer.note.as_deref().map_or(0, |n| n.chars().count());
    if note_chars > browser_handoff::MAX_MESSAGE_CHARS {
        return Err(ActionError::invalid_params(format!(
            "note must be at most {} characters",
            browser_handoff::MAX_MESSAGE_CHARS
        )));
    }
    let state = relay.deployment.session_state(relay, &answer.session_id).await?;
    let waiting = state.status == SessionStatus::WaitingForUser
        && state.in_flight.as_deref() == Some(answer.action_id.as_str());
    let Some(client_id) = state.client_id.filter(|_| waiting) else {
        return Err(ActionError::invalid_params(format!(
            "session {} is not waiting for a person in action {} (its status: {}); a person's \
             answer goes only to a running browser_handoff",
            answer.session_id,
            answer.action_id,
            serde_json::to_value(state.status)
                .unwrap_or_default()
                .as_str()
                .unwrap_or("?"),
        )));
    };
    let link = relay.link_to(&client_id).ok_or_else(|| {
        ActionError::new(
            ErrorCode::ClientOffline,
            format!("the browser {client_id} is not connected to the relay"),
        )
    })?;
    let echo = Message::HandoffAnswer(answer.clone());
    if !link.send(Envelope::of(Message::HandoffAnswer(answer))) {
        return Err(ActionError::new(
            ErrorCode::ClientOffline,
            format!("the browser {client_id} left before the answer reached it"),
        ));
    }
    Ok(echo)
}
