//! Session events across the deployment: the relay that owns a session publishes each event it
//! logs on the session's subject; every relay hands the events of the others to its own
//! subscribers, and a subscriber that catches up reads the owner's log through it.

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::future::BoxFuture;
use tether_protocol::between_relays::{LogRequest, SessionEvent};

use super::{on_each, subject, Cluster, FROM};
use crate::core::state::Relay;
use crate::stores::events::{Event, Scope, SharedLogs};

/// How long a catching-up subscriber waits for the owner's log before going on live.
const REPLAY_TIMEOUT: Duration = Duration::from_secs(5);

struct Shared {
    cluster: Cluster,
    relay: Weak<Relay>,
}

impl SharedLogs for Shared {
    fn publish(&self, event: &Event) {
        let (Scope::Session(session_id), Some(index)) = (&event.scope, event.index) else {
            return;
        };
        let shared = SessionEvent {
            session_id: session_id.clone(),
            event_index: index,
            kind: event.kind.clone(),
            payload: event.payload.clone(),
            timestamp: event.timestamp_ms,
            copy: event.copy,
        };
        match serde_json::to_vec(&shared) {
            Ok(body) => self.cluster.send(subject::session_events(session_id), body),
            Err(e) => tracing::error!("cannot encode a session event: {e}"),
        }
    }

    fn replay(&self, session: String, after: Option<u64>) -> BoxFuture<'static, Vec<Arc<Event>>> {
        let (cluster, relay) = (self.cluster.clone(), self.relay.clone());
        Box::pin(async move {
            let Some(relay) = relay.upgrade() else {
                return Vec::new();
            };
            match cluster.current_owner(&session).await {
                Some(owner) if owner != cluster.relay_id => {
                    read_log(
                        &cluster,
                        &owner,
                        LogRequest {
                            session_id: session,
                            after,
                        },
                    )
                    .await
                }
                _ => relay.events.replay(&session, after),
            }
        })
    }
}

async fn read_log(cluster: &Cluster, owner: &str, request: LogRequest) -> Vec<Arc<Event>> {
    let Ok(body) = serde_json::to_vec(&request) else {
        return Vec::new();
    };
    let asked = cluster.client.request(subject::relay(owner, "log"), body.into());
    let answer = match tokio::time::timeout(REPLAY_TIMEOUT, asked).await {
        Ok(Ok(answer)) => answer,
        _ => {
            tracing::warn!(
                session_id = request.session_id,
                owner,
                "the session's owner did not send its log"
            );
            return Vec::new();
        }
    };
    let events: Vec<SessionEvent> = serde_json::from_slice(&answer.payload).unwrap_or_default();
    events.into_iter().map(|e| Arc::new(from_shared(e))).collect()
}

fn from_shared(shared: SessionEvent) -> Event {
    Event {
        scope: Scope::Session(shared.session_id),
        index: Some(shared.event_index),
        kind: shared.kind,
        payload: shared.payload,
        timestamp_ms: shared.timestamp,
        copy: shared.copy,
    }
}

/// Shares this relay's session events, takes the others', and serves its logs.
pub(super) async fn serve(cluster: &Cluster, relay: &Arc<Relay>) -> anyhow::Result<()> {
    relay.events.join(Box::new(Shared {
        cluster: cluster.clone(),
        relay: Arc::downgrade(relay),
    }));
    on_each(
        cluster,
        relay,
        subject::ALL_SESSION_EVENTS.into(),
        |cluster, relay, message| async move {
            let from = message.headers.as_ref().and_then(|h| h.get(FROM));
            if from.is_some_and(|from| from.as_str() == cluster.relay_id) {
                return;
            }
            match serde_json::from_slice::<SessionEvent>(&message.payload) {
                Ok(shared) => relay.events.relayed(from_shared(shared)),
                Err(e) => tracing::warn!("an unreadable session event from another relay: {e}"),
            }
        },
    )
    .await?;
    on_each(
        cluster,
        relay,
        subject::relay(&cluster.relay_id, "log"),
        |cluster, relay, message| async move {
            let Ok(request) = serde_json::from_slice::<LogRequest>(&message.payload) else {
                return;
            };
            let logged: Vec<SessionEvent> = relay
                .events
                .replay(&request.session_id, request.after)
                .iter()
                .map(|e| SessionEvent {
                    session_id: request.session_id.clone(),
                    event_index: e.index.unwrap_or_default(),
                    kind: e.kind.clone(),
                    payload: e.payload.clone(),
                    timestamp: e.timestamp_ms,
                    copy: e.copy,
                })
                .collect();
            cluster.respond(message.reply, &logged).await;
        },
    )
    .await
}
