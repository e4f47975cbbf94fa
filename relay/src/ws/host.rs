//! What a host sends once joined (PROTOCOL.md §2.5): acks and results of the actions the relay
//! sent it, its twin (`full_state_sync`, `tab_event`) and heartbeats.

use serde_json::json;
use tether_protocol::{ActionError, Envelope, ErrorCode};

use super::{forbidden, unknown, Peer};
use crate::outbox::Outbox;
use crate::state::AppState;

pub fn handle(state: &AppState, outbox: &Outbox, peer: &mut Peer, envelope: Envelope) {
    let (Some(client_id), Some(link)) = (peer.client_id.clone(), peer.link.clone()) else {
        return;
    };
    state.registry.touch(&client_id);
    match envelope.kind.as_str() {
        "browser_action.ack" | "browser_action.result" => {
            let Some(reply_to) = envelope.reply_to.as_deref() else {
                let error = ActionError::new(
                    ErrorCode::InvalidMessage,
                    format!(
                        "{} needs replyTo: the id of the browser_action it answers",
                        envelope.kind
                    ),
                );
                outbox.error(envelope.id, error);
                return;
            };
            let taken = if envelope.kind == "browser_action.ack" {
                link.acked(reply_to)
            } else {
                link.answered(reply_to, envelope.payload)
            };
            if !taken {
                // The action already ended (it timed out): its one result is out.
                tracing::debug!(
                    client_id,
                    reply_to,
                    kind = envelope.kind,
                    "late or unknown answer dropped"
                );
            }
        }
        "full_state_sync" | "tab_event" => {
            match state.twins.update(&client_id, &envelope.kind, &envelope.payload) {
                Ok(twin) => state.client_event(&client_id, "twin_state_sync", twin),
                Err(message) => {
                    outbox.error(envelope.id, ActionError::new(ErrorCode::InvalidMessage, message));
                }
            }
        }
        "heartbeat" => {
            if envelope.id.is_some() {
                outbox.reply(envelope.id, "heartbeat", json!({}));
            }
        }
        "relay.join" => {
            let error = ActionError::new(ErrorCode::InvalidMessage, "this connection has already joined");
            outbox.error(envelope.id, error);
        }
        "extension.list"
        | "session.bind"
        | "browser_action"
        | "catalog.get"
        | "twin.get"
        | "subscribe"
        | "session.get"
        | "browser_task.confirm" => forbidden(outbox, peer, envelope, "is an orchestrator's message"),
        _ => unknown(outbox, envelope),
    }
}
