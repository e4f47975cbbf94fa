//! The journal of the sessions a relay owns, shared with the deployment (docs/protocol.md §14):
//! each fact the relay keeps in its own store also goes, as a journal record, to the JetStream
//! stream `TETHER_JOURNAL`, on the session's subject. A relay that takes a session over from a
//! dead owner reads that subject and replays it with the code that imports an earlier version's
//! journal: the results kept for repeats, the binding, the status, the actions that may have
//! run; then keeps the session in its own store.

use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::{self, consumer, stream};
use futures::StreamExt;

use super::{subject, Cluster};
use crate::core::state::Relay;
use crate::stores::store::Record;

const STREAM: &str = "TETHER_JOURNAL";
/// How long the deployment keeps a session's records: a session idle for longer, whose owner
/// then dies, starts afresh on its next owner.
const KEEP: Duration = Duration::from_secs(7 * 24 * 3600);
/// How long reading a session's records may take before the takeover goes on without them.
const READ_TIMEOUT: Duration = Duration::from_secs(10);

pub(super) async fn stream(js: &jetstream::Context) -> anyhow::Result<stream::Stream> {
    let config = stream::Config {
        name: STREAM.into(),
        subjects: vec![subject::ALL_JOURNALS.into()],
        max_age: KEEP,
        storage: stream::StorageType::File,
        ..Default::default()
    };
    js.get_or_create_stream(config)
        .await
        .map_err(|e| anyhow::anyhow!("cannot make the journal stream in NATS JetStream: {e}"))
}

/// Shares every record this relay journals from now on.
pub(super) fn share(cluster: &Cluster, relay: &Arc<Relay>) {
    let outgoing = cluster.outgoing.clone();
    relay.sessions.store().share(Box::new(move |session_id, line| {
        outgoing.send(subject::journal(session_id), line.to_vec().into());
    }));
}

impl Cluster {
    /// Takes over a session from a dead owner: its records, replayed here.
    pub(super) async fn adopt(&self, relay: &Relay, session_id: &str) {
        let lines = match tokio::time::timeout(READ_TIMEOUT, self.records(session_id)).await {
            Ok(Ok(lines)) => lines,
            Ok(Err(e)) => {
                tracing::warn!(
                    session_id,
                    "cannot read the session's journal; it starts afresh: {e}"
                );
                Vec::new()
            }
            Err(_) => {
                tracing::warn!(
                    session_id,
                    "reading the session's journal took too long; it starts afresh"
                );
                Vec::new()
            }
        };
        let records = lines
            .iter()
            .filter_map(|line| serde_json::from_slice::<Record>(line).ok());
        relay.sessions.adopt(session_id, records).await;
        tracing::info!(
            session_id,
            records = lines.len(),
            "took the session over with its journal"
        );
    }

    /// Every record of a session in the deployment's journal, oldest first.
    async fn records(&self, session_id: &str) -> anyhow::Result<Vec<bytes::Bytes>> {
        let subject = subject::journal(session_id);
        let Ok(last) = self.journal.get_last_raw_message_by_subject(&subject).await else {
            return Ok(Vec::new());
        };
        let config = consumer::pull::OrderedConfig {
            filter_subject: subject,
            deliver_policy: consumer::DeliverPolicy::All,
            ..Default::default()
        };
        let mut messages = self.journal.create_consumer(config).await?.messages().await?;
        let mut lines = Vec::new();
        while let Some(message) = messages.next().await {
            let message = message?;
            let sequence = message
                .info()
                .map_err(|e| anyhow::anyhow!("{e}"))?
                .stream_sequence;
            lines.push(message.payload.clone());
            if sequence >= last.sequence {
                break;
            }
        }
        Ok(lines)
    }
}
