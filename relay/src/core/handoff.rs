//! A person takes the wheel (`browser_handoff`, docs/protocol.md §18). The action runs on the
//! host like any other and waits there for the person; the relay tells the session's
//! subscribers (the console) `handoff.requested` when it starts and `handoff.ended` with its
//! result, and passes a person's Done or Decline (`handoff.answer`) and, while it waits, their
//! input in the live view (`handoff.input`) to the host running it.

use std::sync::Arc;

use serde_json::Value;
use tether_protocol::actions::browser_handoff;
use tether_protocol::messages::{
    HandoffAnswer, HandoffEnded, HandoffInput, HandoffOutcome, HandoffRequested, Message, SessionStatus,
};
use tether_protocol::{ActionError, ActionResult, Envelope, ErrorCode};

use crate::core::request::Request;
use crate::core::state::Relay;

/// `handoff.requested`, for a handoff the browser is about to run.
pub fn requested(request: &Request) -> Option<HandoffRequested> {
    let params: browser_handoff::Params = serde_json::from_value(request.params.clone()).ok()?;
    Some(HandoffRequested {
        session_id: request.session_id.clone(),
        tab_id: params.tab_id,
        action_id: request.action_id.clone(),
        message: params.message,
    })
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
        // The browser went away or refused the tab: the action's result says so (and ends the
        // request in the console); there is no person's outcome to tell.
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
    let echo = Message::HandoffAnswer(answer.clone());
    let (session_id, action_id) = (answer.session_id.clone(), answer.action_id.clone());
    to_running_handoff(relay, &session_id, &action_id, Message::HandoffAnswer(answer)).await?;
    Ok(echo)
}

/// Passes a person's input in the live view to the browser whose handoff waits for them;
/// refused outside a handoff. Answered with the input itself, as a receipt.
pub async fn input(relay: &Arc<Relay>, input: HandoffInput) -> Result<Message, ActionError> {
    let echo = Message::HandoffInput(input.clone());
    let (session_id, action_id) = (input.session_id.clone(), input.action_id.clone());
    to_running_handoff(relay, &session_id, &action_id, Message::HandoffInput(input)).await?;
    Ok(echo)
}

/// Sends a person's message to the browser of the session whose running action is the
/// handoff `action_id`.
async fn to_running_handoff(
    relay: &Arc<Relay>,
    session_id: &str,
    action_id: &str,
    message: Message,
) -> Result<(), ActionError> {
    let state = relay.deployment.session_state(relay, session_id).await?;
    let waiting =
        state.status == SessionStatus::WaitingForUser && state.in_flight.as_deref() == Some(action_id);
    let Some(client_id) = state.client_id.filter(|_| waiting) else {
        let status = serde_json::to_value(state.status).unwrap_or_default();
        return Err(ActionError::invalid_params(format!(
            "session {session_id} is not waiting for a person in action {action_id} (its status: {}); \
             a person's answer or input goes only to a running browser_handoff",
            status.as_str().unwrap_or("?"),
        )));
    };
    let gone = || {
        ActionError::new(
            ErrorCode::ClientOffline,
            format!("the browser {client_id} is not connected to the relay"),
        )
    };
    let link = relay.link_to(&client_id).ok_or_else(gone)?;
    if !link.send(Envelope::of(message)) {
        return Err(gone());
    }
    Ok(())
}
