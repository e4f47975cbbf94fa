//! What this relay has handed to NATS and NATS has not taken yet (docs/protocol.md §19): the
//! envelopes for other relays (events, answers, results), published in order by one task. It
//! is bounded where work enters, not where it leaves: past [`BEHIND_BYTES`] queued, the relay
//! takes no new action (`QUEUE_FULL`, saying its link to NATS is behind) while what it has
//! already taken still sends its results and events, none dropped. What it holds is then the
//! bound plus the tail of the actions already running.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use tokio::sync::mpsc;

/// Past this many bytes waiting for NATS, new actions are refused.
pub const BEHIND_BYTES: usize = 32 << 20;

/// How many messages the NATS client itself may hold (its default is 2,048, of any size).
pub const CLIENT_CAPACITY: usize = 256;

#[derive(Clone)]
pub struct NatsOutbox {
    queue: mpsc::UnboundedSender<(String, Bytes)>,
    queued: Arc<AtomicUsize>,
}

impl NatsOutbox {
    /// An outbox, and the task that publishes what it queues, in order, with `headers`.
    pub fn start(client: async_nats::Client, headers: async_nats::HeaderMap) -> Self {
        let (queue, taken) = mpsc::unbounded_channel();
        let queued = Arc::new(AtomicUsize::new(0));
        tokio::spawn(publish_in_order(client, headers, taken, queued.clone()));
        Self { queue, queued }
    }

    /// Queues an envelope for `subject`, after everything queued before it.
    pub fn send(&self, subject: String, body: Bytes) {
        let size = body.len();
        self.queued.fetch_add(size, Ordering::Relaxed);
        if self.queue.send((subject, body)).is_err() {
            self.queued.fetch_sub(size, Ordering::Relaxed);
        }
    }

    /// How far behind NATS is, when it is past the bound: the bytes waiting.
    pub fn behind(&self) -> Option<usize> {
        let queued = self.queued.load(Ordering::Relaxed);
        (queued > BEHIND_BYTES).then_some(queued)
    }
}

async fn publish_in_order(
    client: async_nats::Client,
    headers: async_nats::HeaderMap,
    mut taken: mpsc::UnboundedReceiver<(String, Bytes)>,
    queued: Arc<AtomicUsize>,
) {
    while let Some((subject, body)) = taken.recv().await {
        let size = body.len();
        if let Err(e) = client.publish_with_headers(subject, headers.clone(), body).await {
            tracing::warn!("cannot publish to NATS: {e}");
        }
        queued.fetch_sub(size, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_link_that_does_not_keep_up_is_behind() {
        // No NATS at that port: the client takes a few messages into its own queue, then none.
        let client = async_nats::ConnectOptions::new()
            .retry_on_initial_connect()
            .client_capacity(4)
            .connect("nats://127.0.0.1:1")
            .await
            .unwrap();
        let outbox = NatsOutbox::start(client, async_nats::HeaderMap::new());
        assert_eq!(outbox.behind(), None);
        for _ in 0..40 {
            outbox.send("tether.test".into(), Bytes::from(vec![0u8; 1 << 20]));
        }
        let behind = outbox.behind().expect("past the bound");
        assert!(behind > BEHIND_BYTES && behind <= 40 << 20, "{behind}");
    }
}
