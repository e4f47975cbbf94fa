//! What this relay has handed to NATS and NATS has not taken yet (docs/protocol.md §19): the
//! envelopes for other relays (events, answers, results), published in order by one task. It
//! is bounded where work enters, not where it leaves: past [`BEHIND_BYTES`] queued, a caller's
//! new action waits for room ([`NatsOutbox::room`]; its socket is not read meanwhile, an HTTP
//! caller is held), so a burst goes at the speed NATS takes; only an action that would wait
//! past its own timeout is refused (`QUEUE_FULL`, saying the link to NATS is behind). What the
//! relay already took still sends its results and events, none dropped. What it holds is then
//! the bound plus the tail of the actions already running.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use tokio::sync::{mpsc, Notify};
use tokio::time::Instant;

/// Past this many bytes waiting for NATS, new actions are refused.
pub const BEHIND_BYTES: usize = 32 << 20;

/// How many messages the NATS client itself may hold (its default is 2,048, of any size).
pub const CLIENT_CAPACITY: usize = 256;

#[derive(Clone)]
pub struct NatsOutbox {
    queue: mpsc::UnboundedSender<(String, Bytes)>,
    queued: Arc<AtomicUsize>,
    /// Rung whenever NATS took what was queued back under the bound.
    room: Arc<Notify>,
}

impl NatsOutbox {
    /// The bytes handed over that NATS has not taken yet: how far behind the link is.
    pub fn waiting(&self) -> usize {
        self.queued.load(Ordering::Relaxed)
    }

    /// An outbox, and the task that publishes what it queues, in order, with `headers`.
    pub fn start(client: async_nats::Client, headers: async_nats::HeaderMap) -> Self {
        let (queue, taken) = mpsc::unbounded_channel();
        let queued = Arc::new(AtomicUsize::new(0));
        let room = Arc::new(Notify::new());
        tokio::spawn(publish_in_order(
            client,
            headers,
            taken,
            queued.clone(),
            room.clone(),
        ));
        Self { queue, queued, room }
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

    /// Waits until NATS is back under the bound, or `until`: then how far behind it still is.
    pub async fn room(&self, until: Instant) -> Result<(), usize> {
        loop {
            let notified = self.room.notified();
            if self.behind().is_none() {
                return Ok(());
            }
            if tokio::time::timeout_at(until, notified).await.is_err() {
                return self.behind().map_or(Ok(()), Err);
            }
        }
    }
}

async fn publish_in_order(
    client: async_nats::Client,
    headers: async_nats::HeaderMap,
    mut taken: mpsc::UnboundedReceiver<(String, Bytes)>,
    queued: Arc<AtomicUsize>,
    room: Arc<Notify>,
) {
    while let Some((subject, body)) = taken.recv().await {
        let size = body.len();
        if let Err(e) = client.publish_with_headers(subject, headers.clone(), body).await {
            tracing::warn!("cannot publish to NATS: {e}");
        }
        let before = queued.fetch_sub(size, Ordering::Relaxed);
        if before > BEHIND_BYTES && before - size <= BEHIND_BYTES {
            room.notify_waiters();
        }
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
        // A caller waits for room as long as its action may, then is told how far behind.
        let until = Instant::now() + std::time::Duration::from_millis(50);
        assert!(matches!(outbox.room(until).await, Err(b) if b > BEHIND_BYTES));
        assert!(Instant::now() >= until, "it waited for its time");
    }

    #[tokio::test]
    async fn a_caller_waits_for_room_and_goes_on_once_nats_takes_the_backlog() {
        let nats = tether_tests::nats::NatsServer::start().await;
        let client = async_nats::ConnectOptions::new()
            .client_capacity(CLIENT_CAPACITY)
            .connect(nats.url.as_str())
            .await
            .unwrap();
        let outbox = NatsOutbox::start(client, async_nats::HeaderMap::new());
        for _ in 0..40 {
            outbox.send("tether.test".into(), Bytes::from(vec![0u8; 1 << 20]));
        }
        let until = Instant::now() + std::time::Duration::from_secs(30);
        assert_eq!(outbox.room(until).await, Ok(()));
        assert_eq!(outbox.behind(), None);
    }
}
