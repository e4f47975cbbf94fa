//! One WebSocket peer on `/ws` (docs/protocol.md §2): read envelopes, check them, hand them to the
//! handler of the peer's role; one writer task sends what the relay has to say. A frame that
//! is not an envelope gets `INVALID_MESSAGE` and the connection stays open; a failed join gets
//! `UNAUTHORIZED` (or `FORBIDDEN` for another role's token) and the connection closes.

mod host;
pub mod join;
pub mod live_view;
mod orchestrator;

use axum::extract::ws::{close_code, CloseFrame, Message, WebSocket};
use futures::stream::SplitSink;
use futures::{SinkExt, StreamExt};
use tether_protocol::envelope::PROTOCOL_VERSION;
use tether_protocol::messages::Role;
use tether_protocol::{ActionError, Envelope, ErrorCode};
use tokio::task::JoinHandle;

use std::sync::Arc;
use std::time::Duration;

use crate::core::host_link::Link;
use crate::core::state::AppState;
use crate::edge::listener::ReadBudget;
use crate::parts::outbox::{Inbox, Outbox, Outgoing};
use crate::parts::shutdown::Phase;

/// A peer that has joined.
pub struct Peer {
    pub role: Role,
    pub connection_id: String,
    /// A host's clientId.
    pub client_id: Option<String>,
    /// The session an observer (or an orchestrator) joined for.
    pub session_id: Option<String>,
    /// A host's link, which the scheduler sends actions through.
    pub link: Option<Link>,
    /// Event subscriptions feeding this peer's outbox; they end with the connection.
    pub subscriptions: Vec<JoinHandle<()>>,
    /// When a host's frame last told the registry it is alive.
    pub touched: Option<std::time::Instant>,
}

/// What a peer may send before its `relay.join` is read (docs/protocol.md §15: frames before the
/// join are at most 64 KiB), with room for the frames' own headers.
pub const PRE_JOIN_BYTES: u64 = 64 * 1024 + 1024;

/// How long a peer has to join.
pub const JOIN_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves one connection until it closes. `upgrade_token` is a token given on the upgrade
/// request (already checked to be valid there); `budget` bounds what the connection reads
/// until the peer has joined.
pub async fn serve(
    socket: WebSocket,
    state: AppState,
    upgrade_token: Option<String>,
    budget: Arc<ReadBudget>,
) {
    let (sink, mut stream) = socket.split();
    let (outbox, inbox) = Outbox::new();
    let writer = tokio::spawn(write(sink, inbox));

    let _counted = state.shutdown.socket();
    let mut peer: Option<Peer> = None;
    let closed = state.shutdown.reached(Phase::Closed);
    let join_deadline = tokio::time::sleep(JOIN_TIMEOUT);
    tokio::pin!(closed, join_deadline);
    loop {
        let message = tokio::select! {
            message = stream.next() => message,
            // Every result has been queued on this socket: close after them.
            _ = &mut closed => {
                outbox.close();
                break;
            }
            _ = &mut join_deadline, if peer.is_none() => {
                let error = ActionError::new(
                    ErrorCode::Unauthorized,
                    format!("no relay.join within {} s; closing", JOIN_TIMEOUT.as_secs()),
                );
                outbox.error(None, error);
                outbox.close();
                break;
            }
        };
        let message = match message {
            Some(Ok(message)) => message,
            Some(Err(e)) if e.to_string().contains(ReadBudget::EXCEEDED) => {
                let error = ActionError::new(
                    ErrorCode::PayloadTooLarge,
                    format!(
                        "frames before relay.join are at most {} KiB; join first",
                        (PRE_JOIN_BYTES - 1024) / 1024
                    ),
                );
                outbox.error(None, error);
                outbox.close();
                break;
            }
            Some(Err(e)) => {
                // tungstenite refuses an oversize frame from its header, before reading it.
                if e.to_string().contains("Space limit exceeded") {
                    let error = ActionError::new(
                        ErrorCode::PayloadTooLarge,
                        format!(
                            "a message is over {} bytes; big outputs go to PUT /artifacts: {e}",
                            state.settings.max_message_bytes
                        ),
                    );
                    outbox.error(None, error);
                    outbox.close();
                }
                break;
            }
            None => break,
        };
        let text = match message {
            Message::Text(text) => text,
            Message::Close(_) => break,
            _ => continue,
        };
        let Some(envelope) = read_envelope(&outbox, &text) else {
            continue;
        };
        let (id, reply_to) = (envelope.id.clone(), envelope.reply_to.clone());
        match &mut peer {
            None => match join::join(&state, &outbox, envelope, upgrade_token.as_deref()) {
                Ok(joined) => {
                    budget.unbounded();
                    peer = Some(joined);
                }
                Err(error) => {
                    outbox.error(id, error);
                    outbox.close();
                    break;
                }
            },
            Some(p) => match p.role {
                Role::Host => {
                    let read = envelope.read_from_host();
                    host::handle(&state, &outbox, p, (id, reply_to), read)
                }
                Role::Orchestrator | Role::Observer => {
                    let read = envelope.read_from_client(p.role);
                    orchestrator::handle(&state, &outbox, p, id, read).await
                }
            },
        }
    }

    if let Some(peer) = peer {
        leave(&state, peer);
    }
    drop(outbox);
    let _ = writer.await;
}

/// Drains the outbox onto the socket until the connection ends.
async fn write(mut sink: SplitSink<WebSocket, Message>, mut inbox: Inbox) {
    // Waited on for the whole connection, not registered anew for every frame.
    let overflow = inbox.overflow.notified();
    tokio::pin!(overflow);
    loop {
        let out = tokio::select! {
            out = inbox.queue.recv() => out,
            _ = &mut overflow => {
                let frame = CloseFrame { code: close_code::POLICY, reason: "too far behind: read faster".into() };
                let _ = sink.send(Message::Close(Some(frame))).await;
                return;
            }
        };
        // An action's slot is given back only once its result is on the socket.
        let (frame, _slot) = match out {
            Some(Outgoing::Frame(text, slot)) => (Message::Text(text.into()), slot),
            Some(Outgoing::Close) | None => {
                let _ = sink.send(Message::Close(None)).await;
                return;
            }
        };
        if sink.send(frame).await.is_err() {
            return;
        }
    }
}

/// Parses one text frame; answers `INVALID_MESSAGE` for anything that is not an envelope of
/// this protocol version.
fn read_envelope(outbox: &Outbox, text: &str) -> Option<Envelope> {
    let envelope = match serde_json::from_str::<Envelope>(text) {
        Ok(envelope) => envelope,
        Err(e) => {
            let error = ActionError::new(
                ErrorCode::InvalidMessage,
                format!("not a relay envelope {{v, type, id?, replyTo?, payload}}: {e}"),
            );
            outbox.error(None, error);
            return None;
        }
    };
    if envelope.v != PROTOCOL_VERSION {
        let error = ActionError::new(
            ErrorCode::InvalidMessage,
            format!(
                "protocol version {:?} is not served here; this relay speaks \"{PROTOCOL_VERSION}\"",
                envelope.v
            ),
        );
        outbox.error(envelope.id, error);
        return None;
    }
    Some(envelope)
}

/// The peer is gone: its subscriptions end; a host's actions in flight fail `CLIENT_OFFLINE`.
fn leave(state: &AppState, peer: Peer) {
    for subscription in peer.subscriptions {
        subscription.abort();
    }
    live_view::stop(state, &peer.connection_id, None);
    if let (Some(client_id), Some(link)) = (&peer.client_id, &peer.link) {
        link.close();
        if state.registry.disconnect(client_id, &peer.connection_id) {
            tracing::info!(client_id, "host offline");
            state
                .deployment
                .host_offline(state, client_id, &peer.connection_id);
            // Browsers that join under ever new clientIds are bounded as they leave.
            state.forget_offline_browsers();
        }
    }
}
