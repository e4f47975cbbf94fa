//! Actions for browsers held by another relay of the deployment. The owner of a session sends
//! the action's envelope to the host's subject, which only the relay holding that host's
//! socket serves; the host's ack and result come back to the owner by the envelope's id, which
//! names the relay that sent it (`d<relay>-<n>`). An answer that finds nobody waiting is a
//! result the host kept (docs/protocol.md §13): so a host that rejoins another relay after its relay
//! died still ends the actions it was running with their one result.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use tether_protocol::messages::Message;
use tether_protocol::{ActionResult, Envelope};
use tokio::task::JoinHandle;

use super::{on_each, subject, Cluster};
use crate::core::host_link::{Link, RelayedRoute, Route};
use crate::core::state::Relay;

/// How a relay reaches a host whose socket another relay holds.
struct HostRoute {
    client: async_nats::Client,
    subject: String,
}

/// What the relay holding the host answers to an envelope sent to it.
const SENT: &[u8] = b"sent";
const NOT_HERE: &[u8] = b"not here";
/// Longer than any hop on a working network; a host's relay that does not answer within it is
/// taken for gone.
const SEND_TIMEOUT: Duration = Duration::from_secs(5);

impl RelayedRoute for HostRoute {
    fn send(&self, envelope: Envelope, undelivered: Box<dyn FnOnce(String) + Send>) {
        let (client, subject) = (self.client.clone(), self.subject.clone());
        let id = envelope.id.clone().unwrap_or_default();
        let body = match serde_json::to_vec(&envelope) {
            Ok(body) => Bytes::from(body),
            Err(_) => return undelivered(id),
        };
        tokio::spawn(async move {
            let sent = tokio::time::timeout(SEND_TIMEOUT, client.request(subject, body)).await;
            match sent {
                Ok(Ok(answer)) if answer.payload.as_ref() == SENT => {}
                _ => undelivered(id),
            }
        });
    }
}

#[derive(Default)]
pub struct RemoteHosts {
    /// One link per browser held elsewhere, kept across the host's moves between relays, so
    /// an answer to an action sent before a move still finds its waiter.
    links: Mutex<HashMap<String, Link>>,
    /// The hosts whose subjects this relay serves (it holds their sockets).
    serving: Mutex<HashMap<String, JoinHandle<()>>>,
}

impl RemoteHosts {
    fn links(&self) -> std::sync::MutexGuard<'_, HashMap<String, Link>> {
        self.links.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn stop_serving(&self, client_id: &str) {
        let serving = self
            .serving
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(client_id);
        if let Some(task) = serving {
            task.abort();
        }
    }

    /// A host left its relay: actions waiting on it end now, as on a link of this relay.
    pub(super) fn close(&self, client_id: &str) {
        if let Some(link) = self.links().remove(client_id) {
            link.close();
        }
    }
}

impl Cluster {
    /// The link to a browser another relay holds, if it is online.
    pub(super) fn link(&self, client_id: &str) -> Option<Link> {
        let connection_id = self.directory.online_connection(client_id)?;
        let mut links = self.remote.links();
        let link = links.entry(client_id.to_owned()).or_insert_with(|| {
            let route = HostRoute {
                client: self.client.clone(),
                subject: subject::host(client_id),
            };
            Link::routed(connection_id, Route::Relayed(Arc::new(route)))
        });
        Some(link.clone())
    }

    /// Hands a host's ack or result to the relay that sent the action (this one too, when it
    /// sent it through another relay before the host moved here).
    pub(super) fn pass_to_sender(&self, relay: &Relay, client_id: &str, sender: &str, envelope: Envelope) {
        // A relay that is gone (or an earlier run of this one) waits for nothing: the result
        // is one the host kept, for the session's owner to take (§13).
        if sender == self.relay_id || !self.directory.is_relay_alive(sender) {
            return answered(self, relay, client_id, envelope);
        }
        match serde_json::to_vec(&(client_id, &envelope)) {
            Ok(body) => self.send(subject::relay(sender, "answers-from-hosts"), body),
            Err(e) => tracing::error!("cannot encode a host's answer: {e}"),
        }
    }
}

/// Serves a host this relay holds: envelopes other relays send to its subject go to its socket.
pub(super) async fn serve_host(cluster: &Cluster, relay: &Arc<Relay>, client_id: &str) {
    let mut envelopes = match cluster.client.subscribe(subject::host(client_id)).await {
        Ok(envelopes) => envelopes,
        Err(e) => return tracing::error!(client_id, "cannot serve a host's subject: {e}"),
    };
    let (answering, relay, client_id) = (cluster.clone(), relay.clone(), client_id.to_owned());
    let served = client_id.clone();
    let task = tokio::spawn(async move {
        while let Some(message) = envelopes.next().await {
            let envelope = serde_json::from_slice::<Envelope>(&message.payload).ok();
            let socket = relay.registry.link(&client_id);
            let sent = match (envelope, socket.as_ref().and_then(Link::socket)) {
                (Some(envelope), Some(outbox)) => outbox.send(envelope),
                _ => false,
            };
            if let Some(reply) = message.reply {
                let answer = if sent { SENT } else { NOT_HERE };
                let _ = answering.client.publish(reply, Bytes::from_static(answer)).await;
            }
        }
    });
    let mut serving = cluster.remote.serving.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(old) = serving.insert(served, task) {
        old.abort();
    }
}

/// Takes the acks and results hosts on other relays send for the actions this relay sent.
pub(super) async fn serve(cluster: &Cluster, relay: &Arc<Relay>) -> anyhow::Result<()> {
    let subject = subject::relay(&cluster.relay_id, "answers-from-hosts");
    on_each(cluster, relay, subject, |cluster, relay, message| async move {
        match serde_json::from_slice::<(String, Envelope)>(&message.payload) {
            Ok((client_id, envelope)) => answered(&cluster, &relay, &client_id, envelope),
            Err(e) => tracing::warn!("an unreadable answer from another relay: {e}"),
        }
    })
    .await
}

fn answered(cluster: &Cluster, relay: &Relay, client_id: &str, envelope: Envelope) {
    let link = cluster.remote.links().get(client_id).cloned();
    let reply_to = envelope.reply_to.clone().unwrap_or_default();
    match envelope.message() {
        Ok(Message::BrowserActionAck(_)) => {
            if let Some(link) = link {
                link.acked(&reply_to);
            }
        }
        Ok(Message::BrowserActionResult(result)) => {
            let unclaimed: Option<ActionResult> = match link {
                Some(link) => link.answered(&reply_to, Ok(result)).and_then(Result::ok),
                None => Some(result),
            };
            if let Some(result) = unclaimed {
                crate::core::scheduler::kept(relay, client_id, result);
            }
        }
        _ => tracing::warn!(client_id, "another relay passed on something that is no answer"),
    }
}
