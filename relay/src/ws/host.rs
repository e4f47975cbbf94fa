//! What a host sends once joined (docs/protocol.md §2.5): acks and results of the actions the relay
//! sent it, its twin (`full_state_sync`, `tab_event`) and heartbeats. A report the relay cannot
//! read is INVALID_MESSAGE and changes nothing; a result it cannot read still ends its action
//! (INTERNAL), so the orchestrator is not left waiting for a timeout.

use std::time::{Duration, Instant};

use tether_protocol::cluster::ConfirmAnswer;
use tether_protocol::messages::{Empty, Message, Role, Unreadable, RESULT_KIND};
use tether_protocol::twin::TwinReport;
use tether_protocol::{ActionError, Envelope, ErrorCode};

use super::Peer;

use crate::outbox::Outbox;
use crate::state::AppState;

/// A frame's `id` and `replyTo`.
pub type Ids = (Option<String>, Option<String>);

/// How often a host's frames update when the registry last saw it.
const TOUCH_EVERY: Duration = Duration::from_secs(1);

pub fn handle(
    state: &AppState,
    outbox: &Outbox,
    peer: &mut Peer,
    (id, reply_to): Ids,
    read: Result<Message, Unreadable>,
) {
    let (Some(client_id), Some(link)) = (peer.client_id.as_deref(), peer.link.as_ref()) else {
        return;
    };
    // Any frame says the host is alive; the registry hears it once a second at most (under
    // load its lock, taken for every ack and result, was one the runtime's threads queued on).
    if peer.touched.is_none_or(|at| at.elapsed() >= TOUCH_EVERY) {
        state.registry.touch(client_id);
        peer.touched = Some(Instant::now());
    }
    let report = match read {
        Ok(Message::BrowserActionAck(ack)) => {
            if let Some(envelope_id) = answering(outbox, id, reply_to, "browser_action.ack") {
                if !link.acked(&envelope_id) {
                    pass_on(state, client_id, envelope_id, Message::BrowserActionAck(ack));
                }
            }
            return;
        }
        Ok(Message::BrowserActionResult(result)) => {
            let Some(envelope_id) = answering(outbox, id, reply_to, RESULT_KIND) else {
                return;
            };
            // A result no action of this link waits for: one another relay of the deployment
            // sent, or one the host kept (§13).
            if let Some(Ok(result)) = link.answered(&envelope_id, Ok(result)) {
                let passed = Message::BrowserActionResult(result.clone());
                if !pass_on(state, client_id, envelope_id, passed) {
                    crate::scheduler::kept(state, client_id, result);
                }
            }
            return;
        }
        Err(Unreadable::BadPayload { kind, why, .. }) if kind == RESULT_KIND => {
            if let Some(envelope_id) = answering(outbox, id, reply_to, RESULT_KIND) {
                link.answered(&envelope_id, Err(why));
            }
            return;
        }
        Ok(Message::FullStateSync(full)) => TwinReport::Full(full),
        Ok(Message::TabEvent(event)) => TwinReport::Event(event),
        Ok(Message::Heartbeat(_)) => {
            if id.is_some() {
                outbox.reply(id, Message::Heartbeat(Empty {}));
            }
            return;
        }
        Ok(Message::Join(_)) => {
            outbox.error(id, already_joined());
            return;
        }
        // The browser's owner asks to approve every action on it, or no longer (§12).
        Ok(Message::ClientSettings(settings)) => {
            state
                .registry
                .set_confirm_every_action(client_id, settings.confirm_every_action);
            crate::cluster::Cluster::host_settings(state, client_id, settings.confirm_every_action);
            if id.is_some() {
                outbox.reply(id, Message::ClientSettings(settings));
            }
            return;
        }
        // The browser's owner talks to the agents of the sessions bound to it (§12).
        Ok(Message::UserMessage(words)) => {
            let said = if state.sessions.is_bound_to(&words.session_id, client_id) {
                crate::talk::say(state, Message::UserMessage(words))
            } else {
                Err(ActionError::new(
                    ErrorCode::Forbidden,
                    "a browser may only write to the sessions bound to it",
                ))
            };
            match said {
                Ok(receipt) => outbox.reply(id, receipt),
                Err(error) => outbox.error(id, error),
            };
            return;
        }
        // The browser's owner answers, from the extension, for sessions bound to it (§12).
        Ok(Message::Confirm(confirmation)) => {
            let answer = ConfirmAnswer {
                request_id: confirmation.request_id.clone(),
                approved: confirmation.approved,
                only_session: None,
                only_client: Some(client_id.to_owned()),
                refused: "a browser may only answer confirmations of the sessions bound to it".into(),
            };
            let (state, outbox) = (state.clone(), outbox.clone());
            // The relay waiting for the answer may be another of the deployment.
            tokio::spawn(async move {
                match crate::cluster::answer_confirmation(&state, answer).await {
                    Ok(_) => outbox.reply(id, Message::Confirmed(confirmation)),
                    Err(error) => outbox.error(id, error),
                };
            });
            return;
        }
        Ok(other) => {
            outbox.error(
                id,
                ActionError::internal(format!("{} is not handled here", other.kind())),
            );
            return;
        }
        Err(Unreadable::BadPayload { kind, why, .. }) => {
            outbox.error(
                id,
                ActionError::new(ErrorCode::InvalidMessage, format!("{kind}: {why}")),
            );
            return;
        }
        Err(unreadable) => {
            outbox.error(id, unreadable.error(Role::Host));
            return;
        }
    };
    let twin = state.twins.update(client_id, report);
    state.client_event(client_id, Message::TwinStateSync(twin));
}

/// The envelope id of the action an ack or result answers (its `replyTo`), which it must name.
fn answering(outbox: &Outbox, id: Option<String>, reply_to: Option<String>, kind: &str) -> Option<String> {
    if reply_to.is_none() {
        let error = ActionError::new(
            ErrorCode::InvalidMessage,
            format!("{kind} needs replyTo: the id of the browser_action it answers"),
        );
        outbox.error(id, error);
    }
    reply_to
}

/// Hands a host's ack or result that no action of this link waits for to the relay of the
/// deployment that sent the action (docs/protocol.md §14); false without a deployment.
fn pass_on(state: &AppState, client_id: &str, reply_to: String, answer: Message) -> bool {
    if state.cluster.is_none() {
        return false;
    }
    let Some(sender) = crate::dispatch::sender_of(&reply_to) else {
        return false;
    };
    let envelope = Envelope::of(answer).reply_to(Some(reply_to.clone()));
    crate::cluster::Cluster::pass_answer(state, client_id, sender, envelope);
    true
}

pub fn already_joined() -> ActionError {
    ActionError::new(ErrorCode::InvalidMessage, "this connection has already joined")
}
