//! The deployment's directory of browsers: which relay holds each host's socket, and what
//! `extension.list` says of it. Each relay writes the entries of the hosts it holds to the
//! `tether-clients` bucket and keeps a copy of the whole bucket, followed live, so picking a
//! browser or listing them asks nothing of NATS. A browser's own events (its twin, online,
//! offline) go to every relay, each copying them into the logs of its sessions bound to it.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use async_nats::jetstream::kv;
use futures::{StreamExt, TryStreamExt};
use serde_json::Value;
use tether_protocol::between_relays::ClientEntry;
use tether_protocol::messages::{ClientRef, ClientSummary, Message};
use tether_protocol::result::rfc3339_ms;
use tether_protocol::Envelope;

use super::{on_each, subject, Cluster};
use crate::core::state::Relay;

pub struct Directory {
    clients: kv::Store,
    known: Arc<Mutex<Known>>,
}

#[derive(Default)]
struct Known {
    entries: HashMap<String, ClientEntry>,
    alive: HashSet<String>,
    /// Relays seen alive that stopped.
    gone: HashSet<String>,
}

impl Known {
    /// Applies a change of the bucket; returns the browser that went offline by it, if any.
    fn apply(&mut self, entry: &kv::Entry) -> Option<String> {
        match entry.operation {
            kv::Operation::Put => match serde_json::from_slice::<ClientEntry>(&entry.value) {
                Ok(client) => {
                    let left = (!client.online).then(|| client.client_id.clone());
                    self.entries.insert(client.client_id.clone(), client);
                    return left;
                }
                Err(e) => tracing::warn!(key = entry.key, "an unreadable directory entry: {e}"),
            },
            kv::Operation::Delete | kv::Operation::Purge => {
                let id = hex::decode(&entry.key)
                    .ok()
                    .and_then(|id| String::from_utf8(id).ok());
                if let Some(id) = &id {
                    self.entries.remove(id);
                }
                return id;
            }
        }
        None
    }

    /// Online: its entry says so, and the relay holding it has not stopped.
    fn is_online(&self, client: &ClientEntry) -> bool {
        client.online && !self.gone.contains(&client.relay_id)
    }
}

impl Directory {
    pub fn new(clients: kv::Store) -> Self {
        Self {
            clients,
            known: Arc::default(),
        }
    }

    fn known(&self) -> std::sync::MutexGuard<'_, Known> {
        self.known.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reads the whole bucket, then follows it; `left` is told of each browser whose relay says
    /// it went offline.
    pub(super) async fn follow(
        &self,
        relays: &kv::Store,
        left: impl Fn(&str) + Send + 'static,
    ) -> anyhow::Result<()> {
        self.set_alive(super::live_relays(relays).await?);
        // Watch first, then read: an entry written in between is applied twice, never missed.
        let mut watch = self.clients.watch_all().await?;
        let keys: Vec<String> = self.clients.keys().await?.try_collect().await?;
        for key in keys {
            if let Some(entry) = self.clients.entry(key).await? {
                self.known().apply(&entry);
            }
        }
        let known = self.known.clone();
        tokio::spawn(async move {
            while let Some(entry) = watch.next().await {
                match entry {
                    Ok(entry) => {
                        let gone = known.lock().unwrap_or_else(|p| p.into_inner()).apply(&entry);
                        if let Some(client_id) = gone {
                            left(&client_id);
                        }
                    }
                    Err(e) => tracing::warn!("the directory's watch failed: {e}"),
                }
            }
        });
        Ok(())
    }

    /// The relays alive now; returns those that were alive and no longer are. A relay that
    /// beats again after its lease ran out (a machine that stalled for seconds) is alive again:
    /// what it owned may have been taken over meanwhile, but the hosts it holds are online.
    pub(super) fn set_alive(&self, alive: HashSet<String>) -> Vec<String> {
        let mut known = self.known();
        let gone: Vec<String> = known.alive.difference(&alive).cloned().collect();
        let back: Vec<String> = known.gone.intersection(&alive).cloned().collect();
        for relay_id in back {
            tracing::warn!(relay_id, "a relay of the deployment that had stopped beats again");
            known.gone.remove(&relay_id);
        }
        known.gone.extend(gone.iter().cloned());
        known.alive = alive;
        gone
    }

    /// The relays alive at the last look that `alive` does not list.
    pub(super) fn missing_from(&self, alive: &HashSet<String>) -> Vec<String> {
        self.known().alive.difference(alive).cloned().collect()
    }

    /// Whether a relay may be alive: one that started since the last look is taken to be.
    pub fn is_relay_alive(&self, relay_id: &str) -> bool {
        !self.known().gone.contains(relay_id)
    }

    pub fn entry(&self, client_id: &str) -> Option<ClientEntry> {
        self.known().entries.get(client_id).cloned()
    }

    /// Whether a browser is online anywhere in the deployment.
    pub fn is_online(&self, client_id: &str) -> bool {
        self.online_connection(client_id).is_some()
    }

    /// The connection of a browser online anywhere in the deployment.
    pub fn online_connection(&self, client_id: &str) -> Option<String> {
        let known = self.known();
        let client = known.entries.get(client_id).filter(|c| known.is_online(c))?;
        Some(client.connection_id.clone())
    }

    /// Whether the owner of a browser approves each action on it (§12).
    pub fn confirms_every_action(&self, client_id: &str) -> bool {
        self.known()
            .entries
            .get(client_id)
            .is_some_and(|c| c.confirm_every_action)
    }

    pub fn is_known(&self, client_id: &str) -> bool {
        self.known().entries.contains_key(client_id)
    }

    /// The clientIds of the browsers online anywhere in the deployment, sorted.
    pub fn online(&self) -> Vec<String> {
        let known = self.known();
        let mut ids: Vec<String> = known
            .entries
            .values()
            .filter(|c| known.is_online(c))
            .map(|c| c.client_id.clone())
            .collect();
        ids.sort();
        ids
    }

    pub fn list(&self) -> Vec<ClientSummary> {
        let known = self.known();
        let mut list: Vec<ClientSummary> = known
            .entries
            .values()
            .map(|c| ClientSummary {
                client_id: c.client_id.clone(),
                online: known.is_online(c),
                meta: c.meta.clone(),
                last_seen: c.last_seen.clone(),
                sessions: Vec::new(),
                contested: None,
            })
            .collect();
        list.sort_by(|a, b| a.client_id.cmp(&b.client_id));
        list
    }

    /// Writes a host's entry: this relay holds it now (or held it until now).
    pub async fn write(&self, entry: &ClientEntry) {
        let value = match serde_json::to_vec(entry) {
            Ok(value) => value,
            Err(e) => return tracing::error!("cannot encode a directory entry: {e}"),
        };
        if let Err(e) = self
            .clients
            .put(hex::encode(&entry.client_id), value.into())
            .await
        {
            tracing::warn!(client_id = entry.client_id, "cannot write the directory: {e}");
        }
        self.known()
            .entries
            .insert(entry.client_id.clone(), entry.clone());
    }
}

impl Cluster {
    /// A host joined this relay: serve its subject, then tell the deployment where it is.
    pub(super) fn host_joined(&self, relay: &Arc<Relay>, client_id: &str, connection_id: &str, meta: &Value) {
        let entry = ClientEntry {
            client_id: client_id.to_owned(),
            relay_id: self.relay_id.clone(),
            connection_id: connection_id.to_owned(),
            online: true,
            meta: meta.clone(),
            last_seen: rfc3339_ms(chrono::Utc::now()),
            confirm_every_action: false,
        };
        let (cluster, relay) = (self.clone(), relay.clone());
        tokio::spawn(async move {
            super::remote::serve_host(&cluster, &relay, &entry.client_id).await;
            cluster.directory.write(&entry).await;
            let online = ClientRef {
                client_id: entry.client_id.clone(),
            };
            cluster.share_client_event(&entry.client_id, Message::ClientOnline(online));
        });
    }

    /// A host's socket on this relay closed (and no newer one replaced it).
    pub(super) fn host_left(&self, client_id: &str, connection_id: &str) {
        self.remote.stop_serving(client_id);
        let Some(mut entry) = self.directory.entry(client_id) else {
            return;
        };
        if entry.connection_id != connection_id {
            return;
        }
        entry.online = false;
        entry.last_seen = rfc3339_ms(chrono::Utc::now());
        let cluster = self.clone();
        tokio::spawn(async move {
            cluster.directory.write(&entry).await;
            let offline = ClientRef {
                client_id: entry.client_id.clone(),
            };
            cluster.share_client_event(&entry.client_id, Message::ClientOffline(offline));
        });
    }

    /// The owner of a browser changed its `client.settings`.
    pub(super) fn share_settings(&self, client_id: &str, confirm_every_action: bool) {
        let Some(mut entry) = self.directory.entry(client_id) else {
            return;
        };
        entry.confirm_every_action = confirm_every_action;
        let cluster = self.clone();
        tokio::spawn(async move { cluster.directory.write(&entry).await });
    }

    /// Tells every relay of a browser's event.
    pub(super) fn share_client_event(&self, client_id: &str, event: Message) {
        match serde_json::to_vec(&Envelope::of(event)) {
            Ok(body) => self.send(subject::client_events(client_id), body),
            Err(e) => tracing::error!("cannot encode a browser's event: {e}"),
        }
    }
}

/// Takes every browser's events: each relay copies them into the sessions it owns that are
/// bound to that browser, and hands them to its own subscribers of that browser.
pub(super) async fn serve_events(cluster: &Cluster, relay: &Arc<Relay>) -> anyhow::Result<()> {
    on_each(
        cluster,
        relay,
        subject::ALL_CLIENT_EVENTS.into(),
        |_, relay, message| async move {
            let client_id = message
                .subject
                .as_str()
                .rsplit('.')
                .next()
                .and_then(|hexed| hex::decode(hexed).ok())
                .and_then(|id| String::from_utf8(id).ok());
            let envelope = serde_json::from_slice::<Envelope>(&message.payload);
            match (client_id, envelope.map(|e| e.message())) {
                (Some(client_id), Ok(Ok(event))) => relay.local_client_event(&client_id, event),
                _ => tracing::warn!(subject = %message.subject, "an unreadable browser event"),
            }
        },
    )
    .await
}
