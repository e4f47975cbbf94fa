//! What the relay has to say to one WebSocket peer, in order: envelopes, then perhaps the end
//! of the connection. Anything may write to an outbox (the peer's own handler, the scheduler
//! finishing an action, an event subscription); one writer task drains it onto the socket.
//!
//! The outbox is bounded: a peer that does not read (a stalled subscriber) is disconnected
//! when its outbox fills, rather than letting the relay hold ever more for it. Its results
//! are kept for replay, and a session's events are in the log, so nothing is lost to it.

use std::sync::Arc;

use serde_json::Value;
use tether_protocol::{ActionError, Envelope};
use tokio::sync::{mpsc, Notify};

/// How many frames may wait for one peer.
pub const CAPACITY: usize = 4096;

#[derive(Debug)]
pub enum Outgoing {
    Frame(Envelope),
    Close,
}

#[derive(Debug, Clone)]
pub struct Outbox {
    queue: mpsc::Sender<Outgoing>,
    /// Rung when the peer fell too far behind: the writer closes the connection.
    overflow: Arc<Notify>,
}

/// The writer's end.
pub struct Inbox {
    pub queue: mpsc::Receiver<Outgoing>,
    pub overflow: Arc<Notify>,
}

impl Outbox {
    pub fn new() -> (Self, Inbox) {
        let (queue, rx) = mpsc::channel(CAPACITY);
        let overflow = Arc::new(Notify::new());
        let inbox = Inbox {
            queue: rx,
            overflow: overflow.clone(),
        };
        (Self { queue, overflow }, inbox)
    }

    /// Queues a frame without waiting. False once the connection is gone or too far behind.
    pub fn send(&self, envelope: Envelope) -> bool {
        match self.queue.try_send(Outgoing::Frame(envelope)) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                tracing::warn!("a peer is {CAPACITY} frames behind; disconnecting it");
                self.overflow.notify_one();
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }

    /// Queues a frame, waiting for room: for senders that can fall behind and catch up (event
    /// subscriptions). False once the connection is gone.
    pub async fn send_when_room(&self, envelope: Envelope) -> bool {
        self.queue.send(Outgoing::Frame(envelope)).await.is_ok()
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
        if self.queue.try_send(Outgoing::Close).is_err() {
            self.overflow.notify_one();
        }
    }

    pub fn is_closed(&self) -> bool {
        self.queue.is_closed()
    }
}
