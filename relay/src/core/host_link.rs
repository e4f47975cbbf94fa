//! The relay's side of one host connection: where its envelopes go (the host's socket, or,
//! in a deployment of several relays, the relay holding that socket), and the actions sent over
//! it that still wait for an ack or a result. When the link closes, every waiting action learns
//! it at once (the scheduler turns that into `CLIENT_OFFLINE`), and nothing can be sent on it
//! later.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tether_protocol::{ActionResult, Envelope};
use tokio::sync::oneshot;

use crate::parts::outbox::Outbox;

/// A live connection to a host.
#[derive(Clone)]
pub struct Link {
    pub connection_id: String,
    route: Route,
    pending: Arc<Mutex<Pending>>,
}

/// Where a link's envelopes go.
#[derive(Clone)]
pub enum Route {
    /// The host's socket on this relay.
    Socket(Outbox),
    /// The relay of the deployment that holds the host's socket (docs/protocol.md §14).
    Relayed(Arc<dyn RelayedRoute>),
}

/// How a deployment reaches a host whose socket another relay holds.
pub trait RelayedRoute: Send + Sync {
    /// Sends an envelope; `undelivered` is told its id when it surely did not reach the host.
    fn send(&self, envelope: Envelope, undelivered: Box<dyn FnOnce(String) + Send>);
}

#[derive(Default)]
struct Pending {
    closed: bool,
    actions: HashMap<String, Waiting>,
}

/// A host's result, or why it could not be read.
pub type HostAnswer = Result<ActionResult, String>;

struct Waiting {
    ack: Option<oneshot::Sender<()>>,
    result: oneshot::Sender<HostAnswer>,
}

/// What the scheduler awaits for one action sent to the host. A receiver that errors means
/// the link closed.
pub struct Dispatched {
    pub ack: oneshot::Receiver<()>,
    pub result: oneshot::Receiver<HostAnswer>,
}

/// The link closed before the action could be sent.
#[derive(Debug)]
pub struct LinkClosed;

impl Link {
    pub fn new(connection_id: String, outbox: Outbox) -> Self {
        Self::routed(connection_id, Route::Socket(outbox))
    }

    pub fn routed(connection_id: String, route: Route) -> Self {
        Self {
            connection_id,
            route,
            pending: Arc::default(),
        }
    }

    /// The host's socket, when it is on this relay.
    pub fn socket(&self) -> Option<&Outbox> {
        match &self.route {
            Route::Socket(outbox) => Some(outbox),
            Route::Relayed(_) => None,
        }
    }

    /// Sends an envelope to the host; false if it cannot go (the link closed). An envelope
    /// relayed through another relay that the host turns out not to get there ends its
    /// action as if the link had closed under it.
    pub fn send(&self, envelope: Envelope) -> bool {
        match &self.route {
            Route::Socket(outbox) => outbox.send(envelope),
            Route::Relayed(route) => {
                let undelivered = self.clone();
                route.send(
                    envelope,
                    Box::new(move |envelope_id| undelivered.forget(&envelope_id)),
                );
                true
            }
        }
    }

    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers an action under the envelope id it will be sent with. Registering and the
    /// closed check happen under one lock, so an action can never wait on a link that has
    /// already closed.
    pub fn expect(&self, envelope_id: &str) -> Result<Dispatched, LinkClosed> {
        let mut pending = self.pending();
        if pending.closed {
            return Err(LinkClosed);
        }
        let (ack_tx, ack) = oneshot::channel();
        let (result_tx, result) = oneshot::channel();
        pending.actions.insert(
            envelope_id.to_owned(),
            Waiting {
                ack: Some(ack_tx),
                result: result_tx,
            },
        );
        Ok(Dispatched { ack, result })
    }

    /// Forgets an action the scheduler gave up on (timed out): a late answer is dropped.
    pub fn forget(&self, envelope_id: &str) {
        self.pending().actions.remove(envelope_id);
    }

    /// The host acknowledged the action sent as `envelope_id`. False if nothing waits for it.
    pub fn acked(&self, envelope_id: &str) -> bool {
        let ack = self
            .pending()
            .actions
            .get_mut(envelope_id)
            .and_then(|w| w.ack.take());
        ack.is_some_and(|ack| ack.send(()).is_ok())
    }

    /// The host's result for the action sent as `envelope_id`; handed back if nothing waits
    /// for it (an action that already ended, or one sent before a relay restart).
    pub fn answered(&self, envelope_id: &str, answer: HostAnswer) -> Option<HostAnswer> {
        match self.pending().actions.remove(envelope_id) {
            Some(waiting) => waiting.result.send(answer).err(),
            None => Some(answer),
        }
    }

    /// Closes the link: every action still waiting learns it now.
    pub fn close(&self) {
        let mut pending = self.pending();
        pending.closed = true;
        pending.actions.clear();
    }

    pub fn in_flight(&self) -> usize {
        self.pending().actions.len()
    }
}
