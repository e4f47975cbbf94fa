//! Where an action's result goes: an HTTP request waiting for it, or a WebSocket orchestrator
//! (an ack, then the result, each in reply to its request), or another relay of the deployment
//! that took it from one of those.

use tether_protocol::envelope::Payload;
use tether_protocol::messages::{Ack, Message, RESULT_KIND};
use tether_protocol::{ActionResult, Envelope};
use tokio::sync::{oneshot, OwnedSemaphorePermit};

use crate::parts::outbox::Outbox;

pub enum Reply {
    /// An HTTP request waiting for the result.
    Channel(oneshot::Sender<ActionResult>),
    /// A WebSocket orchestrator. The slot is the action's share of the peer's outbox, given
    /// back with the result.
    Socket {
        outbox: Outbox,
        request_id: Option<String>,
        slot: OwnedSemaphorePermit,
    },
    /// Another relay of the deployment, which took the action from its orchestrator.
    Relayed(Box<dyn RelayedReply>),
}

/// How a deployment answers the relay that took an action from its orchestrator.
pub trait RelayedReply: Send + Sync {
    fn ack(&self, action_id: &str);
    fn deliver(&self, result: ActionResult);
}

impl Reply {
    pub fn ack(&self, action_id: &str) {
        match self {
            Self::Socket {
                outbox, request_id, ..
            } => {
                let ack = Ack {
                    action_id: action_id.to_owned(),
                };
                outbox.reply(request_id.clone(), Message::BrowserActionAck(ack));
            }
            Self::Relayed(relay) => relay.ack(action_id),
            Self::Channel(_) => {}
        }
    }

    pub fn deliver(self, result: ActionResult) {
        match self {
            Self::Channel(tx) => {
                let _ = tx.send(result);
            }
            Self::Socket {
                outbox,
                request_id,
                slot,
            } => {
                let envelope = Envelope::of(Message::BrowserActionResult(result)).reply_to(request_id);
                outbox.send_releasing(envelope, Some(slot));
            }
            Self::Relayed(relay) => relay.deliver(result),
        }
    }

    /// Delivers a result already written out as JSON (`written`, the text kept for repeats):
    /// a socket sends that text rather than writing the result out once more.
    pub fn deliver_written(self, result: ActionResult, written: &Payload) {
        match self {
            Self::Socket {
                outbox,
                request_id,
                slot,
            } => {
                let envelope = Envelope::new(RESULT_KIND, written.clone()).reply_to(request_id);
                outbox.send_releasing(envelope, Some(slot));
            }
            other => other.deliver(result),
        }
    }
}
