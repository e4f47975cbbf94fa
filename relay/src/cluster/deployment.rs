//! The NATS deployment behind the relay's [`Deployment`] seam: each of the core's questions
//! answered from the deployment's directory and session owners, each change told to the other
//! relays. A browser this relay holds is still answered from its own registry.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::Value;
use tether_protocol::between_relays::{ConfirmAnswer, ConfirmOutcome};
use tether_protocol::messages::{Binding, ClientSummary, Message, SessionState};
use tether_protocol::{ActionError, Envelope};

use super::{confirm, forward, Cluster};
use crate::core::host_link::Link;
use crate::core::reply::Reply;
use crate::core::request::{Refused, Request};
use crate::core::state::{Deployment, Relay, RunHere};
use crate::parts::metrics::NatsLink;

impl Deployment for Cluster {
    fn nats_link(&self) -> Option<NatsLink> {
        Some(super::Member::nats_link(self))
    }

    fn start<'a>(&'a self, relay: &'a Arc<Relay>) -> BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(self.serve(relay))
    }

    fn clients(&self, _: &Relay) -> Vec<ClientSummary> {
        self.directory.list()
    }

    fn knows_client(&self, _: &Relay, client_id: &str) -> bool {
        self.directory.is_known(client_id)
    }

    fn client_meta(&self, relay: &Relay, client_id: &str) -> Option<(Value, bool)> {
        if relay.registry.holds(client_id) {
            return relay.registry.meta(client_id);
        }
        let entry = self.directory.entry(client_id)?;
        Some((entry.meta, self.directory.is_online(client_id)))
    }

    fn owner_confirms(&self, relay: &Relay, client_id: &str) -> bool {
        match relay.registry.holds(client_id) {
            true => relay.registry.confirms_every_action(client_id),
            false => self.directory.confirms_every_action(client_id),
        }
    }

    fn online_clients(&self, _: &Relay) -> Vec<String> {
        self.directory.online()
    }

    fn link_elsewhere(&self, client_id: &str) -> Option<Link> {
        self.link(client_id)
    }

    fn connection_elsewhere(&self, client_id: &str) -> Option<String> {
        self.directory.online_connection(client_id)
    }

    fn client_event(&self, _: &Relay, client_id: &str, event: Message) {
        self.share_client_event(client_id, event);
    }

    fn host_online(&self, relay: &Arc<Relay>, client_id: &str, connection_id: &str, meta: &Value) {
        // The directory says where the host is first; its subscribers hear it after.
        self.host_joined(relay, client_id, connection_id, meta);
    }

    fn host_offline(&self, _: &Arc<Relay>, client_id: &str, connection_id: &str) {
        self.host_left(client_id, connection_id);
    }

    fn host_settings(&self, _: &Arc<Relay>, client_id: &str, confirm_every_action: bool) {
        self.share_settings(client_id, confirm_every_action);
    }

    fn pass_answer(&self, relay: &Relay, client_id: &str, sender: &str, answer: Envelope) -> bool {
        self.pass_to_sender(relay, client_id, sender, answer);
        true
    }

    fn route<'a>(
        &'a self,
        relay: &'a Arc<Relay>,
        parsed: Result<Request, Refused>,
        reply: Reply,
    ) -> BoxFuture<'a, Option<RunHere>> {
        Box::pin(async move {
            forward::submit(self, relay, parsed, reply).await;
            None
        })
    }

    fn bind<'a>(
        &'a self,
        relay: &'a Arc<Relay>,
        binding: Binding,
    ) -> BoxFuture<'a, Result<Binding, ActionError>> {
        Box::pin(forward::bind(self, relay, binding))
    }

    fn session_state<'a>(
        &'a self,
        relay: &'a Arc<Relay>,
        session_id: &'a str,
    ) -> BoxFuture<'a, Result<SessionState, ActionError>> {
        Box::pin(forward::session_state(self, relay, session_id))
    }

    fn answer_confirmation<'a>(
        &'a self,
        relay: &'a Relay,
        answer: ConfirmAnswer,
    ) -> BoxFuture<'a, ConfirmOutcome> {
        Box::pin(confirm::answer(self, relay, answer))
    }

    fn share_artifact<'a>(
        &'a self,
        id: &'a str,
        description: String,
        bytes: &'a [u8],
    ) -> BoxFuture<'a, anyhow::Result<()>> {
        Box::pin(self.put_artifact(id, description, bytes))
    }

    fn fetch_artifact<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Option<(String, Vec<u8>)>> {
        Box::pin(self.get_artifact(id))
    }
}
