//! What the relay has to say to one WebSocket peer, in order: envelopes, then perhaps the end
//! of the connection. Anything may write to an outbox (the peer's own handler, the scheduler
//! finishing an action, an event subscription); one writer task drains it onto the socket.
//!
//! The outbox is bounded: a peer that does not read (a stalled subscriber) is disconnected
//! when its outbox fills, rather than letting the relay hold ever more for it. Its results
//! are kept for replay, and a session's events are in the log, so nothing is lost to it.

use std::sync::Arc;

use tether_protocol::messages::Message;
use tether_protocol::{ActionError, Envelope};
use tokio::sync::{mpsc, Notify, OwnedSemaphorePermit, Semaphore};

/// How many frames may wait for one peer.
pub const CAPACITY: usize = 4096;
/// How many of a peer's actions may await their results at once. Each takes at most two
/// frames (ack, result), so replies alone never fill the outbox; past this the relay stops
/// reading the peer's socket until results go out, and TCP slows the sender down.
pub const ACTIONS_IN_FLIGHT: usize = CAPACITY / 2;

#[derive(Debug)]
pub enum Outgoing {
    /// A frame's text, and the action slot it gives back once it is on the socket. Written by
    /// the sender: a queued text is a fifth the size of a queued envelope, and every
    /// connection's queue starts with room for 32 (4 KiB less per connection).
    Frame(String, Option<OwnedSemaphorePermit>),
    Close,
}

#[derive(Debug, Clone)]
pub struct Outbox {
    queue: mpsc::Sender<Outgoing>,
    /// Rung when the peer fell too far behind: the writer closes the connection.
    overflow: Arc<Notify>,
    /// One per action of this peer awaiting its result.
    in_flight: Arc<Semaphore>,
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
        let in_flight = Arc::new(Semaphore::new(ACTIONS_IN_FLIGHT));
        (
            Self {
                queue,
                overflow,
                in_flight,
            },
            inbox,
        )
    }

    /// Room for one more action of this peer; waits while it has too many awaiting results.
    pub async fn action_slot(&self) -> OwnedSemaphorePermit {
        self.in_flight
            .clone()
            .acquire_owned()
            .await
            .expect("the semaphore is never closed")
    }

    /// How many frames wait to go out.
    pub fn queued(&self) -> usize {
        CAPACITY - self.queue.capacity()
    }

    /// Queues a frame without waiting. False once the connection is gone or too far behind.
    pub fn send(&self, envelope: Envelope) -> bool {
        self.send_releasing(envelope, None)
    }

    /// Queues a frame that gives an action slot back once written: an action's result.
    pub fn send_releasing(&self, envelope: Envelope, slot: Option<OwnedSemaphorePermit>) -> bool {
        let Some(text) = encoded(&envelope) else {
            return false;
        };
        match self.queue.try_send(Outgoing::Frame(text, slot)) {
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
        let Some(text) = encoded(&envelope) else {
            return false;
        };
        self.queue.send(Outgoing::Frame(text, None)).await.is_ok()
    }

    /// Queues a message as the reply to the request `reply_to`.
    pub fn reply(&self, reply_to: Option<String>, message: Message) -> bool {
        self.send(Envelope::of(message).reply_to(reply_to))
    }

    /// Queues an `error` envelope.
    pub fn error(&self, reply_to: Option<String>, error: ActionError) -> bool {
        self.reply(reply_to, Message::Error(error))
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

/// An envelope's text; none (and an error in the log) if it cannot be written, which plain
/// strings and JSON payloads never make happen.
fn encoded(envelope: &Envelope) -> Option<String> {
    envelope
        .to_text()
        .map_err(|e| tracing::error!("cannot encode an envelope: {e}"))
        .ok()
}
