//! What the relay has to say to one WebSocket peer, in order: envelopes, then perhaps the end
//! of the connection. Anything may write to an outbox (the peer's own handler, the scheduler
//! finishing an action, an event subscription); one writer task drains it onto the socket.

use serde_json::Value;
use tether_protocol::{ActionError, Envelope};
use tokio::sync::mpsc;

#[derive(Debug)]
pub enum Outgoing {
    Frame(Envelope),
    Close,
}

#[derive(Debug, Clone)]
pub struct Outbox(mpsc::UnboundedSender<Outgoing>);

impl Outbox {
    pub fn new() -> (Self, mpsc::UnboundedReceiver<Outgoing>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self(tx), rx)
    }

    /// Queues a frame. False once the connection is gone.
    pub fn send(&self, envelope: Envelope) -> bool {
        self.0.send(Outgoing::Frame(envelope)).is_ok()
    }

    /// Queues `kind` with `payload` as the reply to the request `reply_to`.
    pub fn reply(&self, reply_to: Option<String>, kind: &str, payload: Value) -> bool {
        self.send(Envelope::new(kind, payload).reply_to(reply_to))
    }

    /// Queues an `error` envelope.
    pub fn error(&self, reply_to: Option<String>, error: ActionError) -> bool {
        self.reply(reply_to, "error", serde_json::json!(error))
    }

    /// Ends the connection after what is already queued.
    pub fn close(&self) {
        let _ = self.0.send(Outgoing::Close);
    }

    pub fn is_closed(&self) -> bool {
        self.0.is_closed()
    }
}
