//! Session events across the deployment: the relay that owns a session publishes each event it
//! logs on the session's subject; every relay hands the events of the others to its own
//! subscribers, and a subscriber that catches up reads the owner's log through it.

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::future::BoxFuture;
use tether_protocol::cluster::{LogRequest, SessionEvent};

use super::{on_each, subject, Cluster, FROM};
use crate::events::{Deployment, Event, Scope};
use crate::state::Relay;

/// How long a catching-up subscriber waits for the owner's log before going on live.
const REPLAY_TIMEOUT: Duration = Duration::from_secs(5);

struct Shared(Weak<Relay>);

impl Deployment for Shared {
    fn publish(&self, event: &Event) {
        let (Some(relay), Scope::Session(session_id), Some(index)) =
            (self.0.upgrade(), &event.scope, event.index)
        else {
            return;
        };
        let Some(cluster) = &relay.cluster else { return };
        let shared = SessionEvent {
            session_id: session_id.clone(),
            event_index: index,
            kind: event.kind.clone(),
            payload: event.payload.clone(),
            timestamp: event.timestamp_ms,
            copy: event.copy,
        };
        match serde_json::to_vec(&shared) {
            Ok(body) => cluster.send(subject::session_events(session_id), body),
            Err(e) => tracing::error!("cannot encode a session event: {e}"),
        }
    }

    fn replay(&self, session: String, after: Option<u64>) -> BoxFuture<'static, Vec<Arc<Event>>> {
        let relay = self.0.clone();
        Box::pin(async move {
            let Some(relay) = relay.upgrade() else {
                return Vec::new();
            };
            let owner = match &relay.cluster {
                Some(cluster) => cluster.current_owner(&session).await,
                None => None,
            };
            match (owner, &relay.cluster) {
                (Some(owner), Some(cluster)) if owner != cluster.relay_id => {
                    read_log(
                        cluster,
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
pub(super) async fn serve(relay: &Arc<Relay>) -> anyhow::Result<()> {
    let Some(cluster) = &relay.cluster else {
        return Ok(());
    };
    relay.events.join(Box::new(Shared(Arc::downgrade(relay))));
    on_each(
        relay,
        subject::ALL_SESSION_EVENTS.into(),
        |relay, message| async move {
            let me = relay.cluster.as_ref().map(|c| c.relay_id.as_str());
            let from = message.headers.as_ref().and_then(|h| h.get(FROM));
            if from.is_some_and(|from| Some(from.as_str()) == me) {
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
        relay,
        subject::relay(&cluster.relay_id, "log"),
        |relay, message| async move {
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
            if let Some(cluster) = &relay.cluster {
                cluster.respond(message.reply, &logged).await;
            }
        },
    )
    .await
}
