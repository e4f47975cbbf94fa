//! A relay's place in a deployment of several relays joined through NATS (docs/protocol.md §14;
//! the design is docs/scale-out.md). Without `--nats` none of this runs. A floor beside the
//! edge: uses `parts`, `stores`, `config` and `core` (it is a `core::state::Deployment`, and
//! runs what other relays forward through `core::scheduler`); never the edge.
//!
//! Who holds what: the relay holding a host's socket serves that host's subject; the relay
//! that owns a session (`owners`) runs its queue and writes its log; the others forward to
//! them. Liveness is one key per relay in a bucket whose entries expire: a relay that stops
//! beating for [`LEASE`] is dead, and what it owned may be taken.

mod artifacts;
mod confirm;
mod deployment;
mod directory;
mod events;
mod forward;
mod journal;
mod nats_outbox;
mod owners;
mod remote;

use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_nats::jetstream::{self, kv};
use bytes::Bytes;
use futures::StreamExt;
use tokio::time::Instant;

use crate::core::state::Relay;

pub use directory::Directory;
pub use owners::Owner;

/// How long a relay that stopped beating still owns its sessions and holds its hosts.
pub const LEASE: Duration = Duration::from_secs(3);
/// How often a relay says it is alive.
const BEAT: Duration = Duration::from_secs(1);

/// This relay as one of the deployment: the [`crate::core::state::Deployment`] `main` chooses with
/// `--nats`. Cloned into each task that serves what other relays send.
#[derive(Clone)]
pub struct Cluster(Arc<Member>);

impl Member {
    /// The NATS link now: up or not, and how far behind.
    pub fn nats_link(&self) -> crate::parts::metrics::NatsLink {
        crate::parts::metrics::NatsLink {
            connected: self.client.connection_state() == async_nats::connection::State::Connected,
            behind_bytes: self.outgoing.waiting(),
        }
    }
}

impl Deref for Cluster {
    type Target = Member;

    fn deref(&self) -> &Member {
        &self.0
    }
}

pub struct Member {
    /// This relay's name in the deployment: its run id (a restarted relay is a new member).
    pub relay_id: String,
    client: async_nats::Client,
    relays: kv::Store,
    owners: owners::Owners,
    pub directory: Directory,
    /// Envelopes to other relays, published in the order they were handed over (an ack
    /// before its result).
    outgoing: nats_outbox::NatsOutbox,
    last_beat: Mutex<Instant>,
    forwards: forward::Forwards,
    remote: remote::RemoteHosts,
    next_ticket: AtomicU64,
    artifacts: async_nats::jetstream::object_store::ObjectStore,
    journal: async_nats::jetstream::stream::Stream,
    /// The artifact signing secret every relay of the deployment uses.
    pub artifact_secret: Vec<u8>,
}

/// What a relay brings to the deployment when it joins.
pub struct Joining<'a> {
    pub url: &'a str,
    pub relay_id: &'a str,
    /// The artifacts' time to live (the first relay's holds for the object store).
    pub artifact_ttl: Duration,
    /// This relay's own artifact secret, used by all if this relay is the first.
    pub artifact_secret: Vec<u8>,
}

/// NATS subjects of the deployment. Ids are hex-encoded: any string a client or session id
/// may be is then a valid subject token.
pub mod subject {
    pub fn relay(relay_id: &str, what: &str) -> String {
        format!("tether.relay.{relay_id}.{what}")
    }
    pub fn host(client_id: &str) -> String {
        format!("tether.host.{}", hex::encode(client_id))
    }
    pub fn session_events(session_id: &str) -> String {
        format!("tether.events.{}", hex::encode(session_id))
    }
    pub const ALL_SESSION_EVENTS: &str = "tether.events.>";
    pub fn client_events(client_id: &str) -> String {
        format!("tether.client-events.{}", hex::encode(client_id))
    }
    pub const ALL_CLIENT_EVENTS: &str = "tether.client-events.>";
    pub const ALL_JOURNALS: &str = "tether.journal.*";
    pub fn journal(session_id: &str) -> String {
        format!("tether.journal.{}", hex::encode(session_id))
    }
}

/// The NATS header naming the relay that published a message.
const FROM: &str = "Tether-Relay";

impl Cluster {
    /// Connects to the deployment's NATS server and makes sure its buckets exist.
    pub async fn join(joining: Joining<'_>) -> anyhow::Result<Self> {
        let Joining {
            url,
            relay_id,
            artifact_ttl,
            artifact_secret,
        } = joining;
        let client = async_nats::ConnectOptions::new()
            .name(format!("tether-relay {relay_id}"))
            // The client's own queue is counted in messages, not bytes: kept short, so what
            // waits for NATS waits in this relay's outbox, which is bounded (`nats_outbox`).
            .client_capacity(nats_outbox::CLIENT_CAPACITY)
            .connect(url)
            .await
            .map_err(|e| anyhow::anyhow!("cannot reach NATS at {url}: {e}"))?;
        let js = jetstream::new(client.clone());
        let relays = bucket(&js, "tether-relays", LEASE).await?;
        let owners = bucket(&js, "tether-owners", Duration::ZERO).await?;
        let clients = bucket(&js, "tether-clients", Duration::ZERO).await?;
        let config = bucket(&js, "tether-config", Duration::ZERO).await?;
        let artifact_secret = artifacts::shared_secret(&config, artifact_secret).await?;
        let artifacts = artifacts::store(&js, artifact_ttl).await?;
        let journal = journal::stream(&js).await?;
        let outgoing = nats_outbox::NatsOutbox::start(client.clone(), from(relay_id));
        let cluster = Self(Arc::new(Member {
            relay_id: relay_id.to_owned(),
            client,
            relays,
            owners: owners::Owners::new(owners),
            directory: Directory::new(clients),
            outgoing,
            last_beat: Mutex::new(Instant::now()),
            forwards: forward::Forwards::default(),
            remote: remote::RemoteHosts::default(),
            next_ticket: AtomicU64::new(1),
            artifacts,
            artifact_secret,
            journal,
        }));
        cluster.beat().await?;
        Ok(cluster)
    }

    /// Starts this relay's part: beating, following the directory, and answering what other
    /// relays send it.
    async fn serve(&self, relay: &Arc<Relay>) -> anyhow::Result<()> {
        let weak = Arc::downgrade(&self.0);
        let left = move |client_id: &str| {
            if let Some(member) = weak.upgrade() {
                member.remote.close(client_id);
            }
        };
        self.directory.follow(&self.relays, left).await?;
        forward::serve(self, relay).await?;
        remote::serve(self, relay).await?;
        directory::serve_events(self, relay).await?;
        events::serve(self, relay).await?;
        confirm::serve(self, relay).await?;
        journal::share(self, relay);
        let (cluster, beating) = (self.clone(), relay.clone());
        tokio::spawn(async move { keep_beating(cluster, beating).await });
        tracing::info!(relay_id = self.relay_id, "joined the deployment");
        Ok(())
    }

    /// Says this relay is alive, for [`LEASE`].
    async fn beat(&self) -> anyhow::Result<()> {
        let now = chrono::Utc::now().timestamp_millis().to_string();
        self.relays.put(&self.relay_id, now.into()).await?;
        *self.last_beat.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
        Ok(())
    }

    /// Whether this relay may still act as an owner: it has said it is alive recently enough
    /// that no other relay can have taken what it owns. A relay cut off from NATS stops
    /// starting actions well before its lease runs out.
    pub fn in_touch(&self) -> bool {
        let last = *self.last_beat.lock().unwrap_or_else(|p| p.into_inner());
        last.elapsed() < LEASE - BEAT
    }

    /// Whether a relay of the deployment is alive, asked of NATS now.
    pub async fn is_alive(&self, relay_id: &str) -> bool {
        relay_id == self.relay_id || matches!(self.relays.get(relay_id).await, Ok(Some(_)))
    }

    /// Waits, bounded by its lease, until a relay that stopped answering is taken for dead.
    pub async fn until_gone(&self, relay_id: &str) {
        let deadline = Instant::now() + LEASE + BEAT;
        while Instant::now() < deadline && self.is_alive(relay_id).await {
            // Its key expires on NATS's clock; there is nothing to be told of.
            tokio::time::sleep(BEAT / 4).await;
        }
    }

    /// Hands an envelope to another relay, after everything handed over before it.
    fn send(&self, subject: String, body: impl Into<Bytes>) {
        self.outgoing.send(subject, body.into());
    }

    /// Answers a NATS request (a message without a reply subject wants no answer).
    async fn respond(&self, to: Option<async_nats::Subject>, answer: &impl serde::Serialize) {
        let (Some(to), Ok(body)) = (to, serde_json::to_vec(answer)) else {
            return;
        };
        if let Err(e) = self.client.publish(to, body.into()).await {
            tracing::warn!("cannot answer another relay: {e}");
        }
    }

    fn ticket(&self) -> u64 {
        self.next_ticket.fetch_add(1, Ordering::Relaxed)
    }
}

/// Subscribes to `subject` and hands each message to `take`, one at a time, in order.
async fn on_each<F, Fut>(
    cluster: &Cluster,
    relay: &Arc<Relay>,
    subject: String,
    take: F,
) -> anyhow::Result<()>
where
    F: Fn(Cluster, Arc<Relay>, async_nats::Message) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let mut messages = cluster.client.subscribe(subject).await?;
    let (cluster, relay) = (cluster.clone(), relay.clone());
    tokio::spawn(async move {
        while let Some(message) = messages.next().await {
            take(cluster.clone(), relay.clone(), message).await;
        }
    });
    Ok(())
}

/// Headers naming this relay as the publisher.
fn from(relay_id: &str) -> async_nats::HeaderMap {
    let mut headers = async_nats::HeaderMap::new();
    headers.insert(FROM, relay_id);
    headers
}

/// The bucket `name`, made if it is not there yet (each relay of a deployment asks at start).
///
/// The bucket's stream is made here, laid out as a key-value bucket is, because the client's
/// own `create_key_value` first reads account fields that Debian's nats-server 2.9 does not
/// send (`reserved_memory`), and fails on it.
async fn bucket(js: &jetstream::Context, name: &str, max_age: Duration) -> anyhow::Result<kv::Store> {
    if let Ok(store) = js.get_key_value(name).await {
        return Ok(store);
    }
    let config = jetstream::stream::Config {
        name: format!("KV_{name}"),
        subjects: vec![format!("$KV.{name}.>")],
        max_messages_per_subject: 1,
        max_age,
        // The duplicate window may not be longer than what the stream keeps.
        duplicate_window: if max_age.is_zero() {
            Duration::from_secs(120)
        } else {
            max_age
        },
        discard: jetstream::stream::DiscardPolicy::New,
        allow_rollup: true,
        deny_delete: true,
        allow_direct: true,
        storage: jetstream::stream::StorageType::File,
        num_replicas: 1,
        ..Default::default()
    };
    if let Err(made) = js.get_or_create_stream(config).await {
        anyhow::bail!("cannot make the bucket {name} in NATS JetStream: {made}");
    }
    Ok(js.get_key_value(name).await?)
}

/// Beats every [`BEAT`] and refreshes which relays are alive; when another relay dies, the
/// actions forwarded to it go to the session's next owner, and the hosts it held show offline.
async fn keep_beating(cluster: Cluster, relay: Arc<Relay>) {
    let mut ticks = tokio::time::interval(BEAT);
    loop {
        ticks.tick().await;
        if let Err(e) = cluster.beat().await {
            tracing::warn!("cannot tell NATS this relay is alive: {e}");
        }
        let mut alive = match live_relays(&cluster.relays).await {
            Ok(alive) => alive,
            Err(e) => {
                tracing::warn!("cannot read which relays are alive: {e}");
                continue;
            }
        };
        // A listing of the bucket can miss a key another relay writes while it is read
        // (nats-io/nats.go#1884): one missing is asked for by name before it is taken for dead.
        for missing in cluster.directory.missing_from(&alive) {
            if cluster.is_alive(&missing).await {
                alive.insert(missing);
            }
        }
        let gone = cluster.directory.set_alive(alive);
        for relay_id in gone {
            tracing::warn!(relay_id, "a relay of the deployment stopped");
            cluster.owners.forget_relay(&relay_id);
            forward::owner_gone(&cluster, &relay, &relay_id).await;
        }
    }
}

async fn live_relays(relays: &kv::Store) -> anyhow::Result<std::collections::HashSet<String>> {
    use futures::TryStreamExt;
    Ok(relays.keys().await?.try_collect().await?)
}
