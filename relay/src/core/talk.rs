//! What the agent and the person say to each other beside a session's actions (docs/protocol.md
//! §12, seed 001): `agent.message` from an orchestrator, `user.message` from a person's console
//! or the browser's owner. Checked, logged, and sent to the session's subscribers (WS and SSE);
//! the agent's words also to the session's browser, for its owner.

use tether_protocol::messages::{Message, SessionMessage, MAX_MESSAGE_CHARS};
use tether_protocol::{ActionError, Envelope, ErrorCode};

use crate::core::state::Relay;
use crate::stores::session_log::Direction;

/// Publishes an `agent.message` or a `user.message`; the message, as the sender's receipt.
pub fn say(relay: &Relay, message: Message) -> Result<Message, ActionError> {
    let (Message::AgentMessage(words) | Message::UserMessage(words)) = &message else {
        return Err(ActionError::internal(format!(
            "{} is not a message",
            message.kind()
        )));
    };
    check(words)?;
    // The agent's words also reach the owner of the session's browser (its popup).
    if let Message::AgentMessage(_) = &message {
        let link = relay
            .sessions
            .client_of(&words.session_id)
            .and_then(|client| relay.link_to(&client));
        if let Some(link) = link {
            link.send(Envelope::of(message.clone()));
        }
    }
    relay
        .events
        .session(&words.session_id, Direction::In, message.clone());
    Ok(message)
}

fn check(words: &SessionMessage) -> Result<(), ActionError> {
    if words.session_id.is_empty() {
        return Err(ActionError::invalid_params(
            "\"sessionId\" is required (a string)",
        ));
    }
    if words.text.trim().is_empty() {
        return Err(ActionError::invalid_params("\"text\" must say something"));
    }
    let chars = words.text.chars().count();
    if chars > MAX_MESSAGE_CHARS {
        return Err(ActionError::new(
            ErrorCode::InvalidParams,
            format!("\"text\" is {chars} characters; a message holds {MAX_MESSAGE_CHARS} at most"),
        ));
    }
    Ok(())
}
