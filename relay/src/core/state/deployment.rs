//! The seam between the relay's core and its deployment: what the core asks of wherever it
//! runs (where a session runs, where a browser is connected, who hears a browser's events,
//! where an artifact is kept), answered by a relay on its own ([`Standalone`]) or by one of
//! several joined through NATS (docs/protocol.md §14). `main` chooses
//! one; nothing else in the relay knows which.
//!
//! The core calls these at the points where a deployment may differ; each has the standalone
//! answer beside it in [`Standalone`], which is the relay's whole behaviour without `--nats`.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;
use tether_protocol::between_relays::{ConfirmAnswer, ConfirmOutcome};
use tether_protocol::messages::{Binding, ClientRef, ClientSummary, Message, SessionState};
use tether_protocol::{ActionError, Envelope};

use super::Relay;
use crate::core::host_link::Link;
use crate::core::reply::Reply;
use crate::core::request::{Refused, Request};

/// An action the deployment gives back to run on this relay.
pub type RunHere = (Result<Request, Refused>, Reply);

pub trait Deployment: Send + Sync {
    /// Starts the deployment's part, once the relay is shared: what it serves to others.
    fn start<'a>(&'a self, relay: &'a Arc<Relay>) -> BoxFuture<'a, anyhow::Result<()>>;

    // Where browsers are.

    /// Every browser that has joined, wherever.
    fn clients(&self, relay: &Relay) -> Vec<ClientSummary>;
    /// Whether a browser has joined, wherever.
    fn knows_client(&self, relay: &Relay, client_id: &str) -> bool;
    /// A browser's meta and whether it is online, wherever it joined.
    fn client_meta(&self, relay: &Relay, client_id: &str) -> Option<(Value, bool)>;
    /// Whether the owner of a browser approves each of its actions (§12), wherever it joined.
    fn owner_confirms(&self, relay: &Relay, client_id: &str) -> bool;
    /// The browsers online now, sorted.
    fn online_clients(&self, relay: &Relay) -> Vec<String>;
    /// The link to a browser another relay holds, if it is online.
    fn link_elsewhere(&self, client_id: &str) -> Option<Link>;
    /// The connection a browser reached through another relay has now (None: offline).
    fn connection_elsewhere(&self, client_id: &str) -> Option<String>;
    /// Publishes a browser's event to its subscribers and the sessions bound to it, wherever.
    fn client_event(&self, relay: &Relay, client_id: &str, event: Message);

    // The hosts this relay holds.

    /// A host joined this relay: the deployment learns where it is, then its subscribers.
    fn host_online(&self, relay: &Arc<Relay>, client_id: &str, connection_id: &str, meta: &Value);
    /// A host's socket on this relay closed and no newer one replaced it.
    fn host_offline(&self, relay: &Arc<Relay>, client_id: &str, connection_id: &str);
    /// The owner of a browser this relay holds changed its `client.settings`.
    fn host_settings(&self, relay: &Arc<Relay>, client_id: &str, confirm_every_action: bool);
    /// A host's ack or result that no action of its link waits for: handed to the relay that
    /// sent the action (`sender`, read from the envelope id it answers). False if there is none
    /// to hand it to.
    fn pass_answer(&self, relay: &Relay, client_id: &str, sender: &str, answer: Envelope) -> bool;

    // Sessions.

    /// Takes an orchestrator's action to the relay that runs its session; hands it back when
    /// that is this relay.
    fn route<'a>(
        &'a self,
        relay: &'a Arc<Relay>,
        parsed: Result<Request, Refused>,
        reply: Reply,
    ) -> BoxFuture<'a, Option<RunHere>>;
    /// `session.bind`, wherever the session runs.
    fn bind<'a>(
        &'a self,
        relay: &'a Arc<Relay>,
        binding: Binding,
    ) -> BoxFuture<'a, Result<Binding, ActionError>>;
    /// `session.get`, wherever the session runs.
    fn session_state<'a>(
        &'a self,
        relay: &'a Arc<Relay>,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<SessionState, ActionError>>;
    /// A person's answer to a confirmation, applied wherever the action waits for it.
    fn answer_confirmation<'a>(
        &'a self,
        relay: &'a Relay,
        answer: ConfirmAnswer,
    ) -> BoxFuture<'a, ConfirmOutcome>;

    // Artifacts.

    /// Keeps an artifact where every relay finds it; `description` is the store's own.
    fn share_artifact<'a>(
        &'a self,
        id: &'a str,
        description: String,
        bytes: &'a [u8],
    ) -> BoxFuture<'a, anyhow::Result<()>>;
    /// An artifact another relay kept: its description and bytes.
    fn fetch_artifact<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Option<(String, Vec<u8>)>>;

    // Monitoring.

    /// The link to the other relays (`None`: a relay on its own has none).
    fn nats_link(&self) -> Option<crate::parts::metrics::NatsLink> {
        None
    }
}

/// A relay on its own: every browser, session and artifact it knows is its own.
pub struct Standalone;

impl Deployment for Standalone {
    fn start<'a>(&'a self, _: &'a Arc<Relay>) -> BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(async { Ok(()) })
    }

    fn clients(&self, relay: &Relay) -> Vec<ClientSummary> {
        relay.registry.list()
    }

    fn knows_client(&self, relay: &Relay, client_id: &str) -> bool {
        relay.registry.is_known(client_id)
    }

    fn client_meta(&self, relay: &Relay, client_id: &str) -> Option<(Value, bool)> {
        relay.registry.meta(client_id)
    }

    fn owner_confirms(&self, relay: &Relay, client_id: &str) -> bool {
        relay.registry.confirms_every_action(client_id)
    }

    fn online_clients(&self, relay: &Relay) -> Vec<String> {
        relay.registry.online()
    }

    fn link_elsewhere(&self, _: &str) -> Option<Link> {
        None
    }

    fn connection_elsewhere(&self, _: &str) -> Option<String> {
        None
    }

    fn client_event(&self, relay: &Relay, client_id: &str, event: Message) {
        relay.local_client_event(client_id, event);
    }

    fn host_online(&self, relay: &Arc<Relay>, client_id: &str, _: &str, _: &Value) {
        let online = ClientRef {
            client_id: client_id.to_owned(),
        };
        relay.local_client_event(client_id, Message::ClientOnline(online));
    }

    fn host_offline(&self, relay: &Arc<Relay>, client_id: &str, _: &str) {
        let offline = ClientRef {
            client_id: client_id.to_owned(),
        };
        relay.local_client_event(client_id, Message::ClientOffline(offline));
    }

    fn host_settings(&self, _: &Arc<Relay>, _: &str, _: bool) {}

    fn pass_answer(&self, _: &Relay, _: &str, _: &str, _: Envelope) -> bool {
        false
    }

    fn route<'a>(
        &'a self,
        _: &'a Arc<Relay>,
        parsed: Result<Request, Refused>,
        reply: Reply,
    ) -> BoxFuture<'a, Option<RunHere>> {
        Box::pin(async { Some((parsed, reply)) })
    }

    fn bind<'a>(
        &'a self,
        relay: &'a Arc<Relay>,
        binding: Binding,
    ) -> BoxFuture<'a, Result<Binding, ActionError>> {
        Box::pin(async move { relay.bind(&binding.session_id, &binding.client_id).await })
    }

    fn session_state<'a>(
        &'a self,
        relay: &'a Arc<Relay>,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<SessionState, ActionError>> {
        Box::pin(async move { Ok(relay.sessions.state(session_id)) })
    }

    fn answer_confirmation<'a>(
        &'a self,
        relay: &'a Relay,
        answer: ConfirmAnswer,
    ) -> BoxFuture<'a, ConfirmOutcome> {
        Box::pin(async move { relay.answer_confirmation(&answer) })
    }

    fn share_artifact<'a>(&'a self, _: &'a str, _: String, _: &'a [u8]) -> BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(async { Ok(()) })
    }

    fn fetch_artifact<'a>(&'a self, _: &'a str) -> BoxFuture<'a, Option<(String, Vec<u8>)>> {
        Box::pin(async { None })
    }
}
