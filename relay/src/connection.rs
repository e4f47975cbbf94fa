//! One WebSocket peer on `/ws` (PROTOCOL.md §2): the `relay.join` handshake, then its frames
//! dispatched by role. A frame that is not an envelope gets `INVALID_MESSAGE` and the
//! connection stays open; a failed join gets `UNAUTHORIZED` (or `FORBIDDEN` for another
//! role's token) and the connection closes.

use axum::extract::ws::{Message, WebSocket};
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tether_protocol::envelope::PROTOCOL_VERSION;
use tether_protocol::{ActionError, Envelope, ErrorCode};
use tokio::sync::mpsc;

use crate::auth::Role;
use crate::ids::random_hex;
use crate::registry::Link;
use crate::server::AppState;

/// What the writer task sends: a frame, or the end of the connection.
#[derive(Debug)]
pub enum Outgoing {
    Frame(Envelope),
    Close,
}

/// The joined peer.
struct Peer {
    role: JoinRole,
    client_id: Option<String>,
    connection_id: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum JoinRole {
    Orchestrator,
    Host,
    Observer,
}

impl JoinRole {
    fn parse(role: &str) -> Option<Self> {
        match role {
            "orchestrator" => Some(Self::Orchestrator),
            "host" => Some(Self::Host),
            "observer" => Some(Self::Observer),
            _ => None,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Self::Orchestrator => "orchestrator",
            Self::Host => "host",
            Self::Observer => "observer",
        }
    }

    /// The token role that may join as this role. An observer (a web UI) is given the
    /// orchestrator's token by its orchestrator.
    fn token_role(self) -> Role {
        match self {
            Self::Host => Role::Host,
            Self::Orchestrator | Self::Observer => Role::Orchestrator,
        }
    }
}

/// Serves one connection until it closes. `upgrade_token` is a token given on the upgrade
/// request (already checked to be valid there).
pub async fn serve(socket: WebSocket, state: AppState, upgrade_token: Option<String>) {
    let (mut sink, mut stream) = socket.split();
    let (outbox, mut queue) = mpsc::unbounded_channel::<Outgoing>();
    let writer = tokio::spawn(async move {
        while let Some(out) = queue.recv().await {
            let frame = match out {
                Outgoing::Frame(envelope) => match serde_json::to_string(&envelope) {
                    Ok(text) => Message::Text(text.into()),
                    Err(e) => {
                        tracing::error!("cannot encode an envelope: {e}");
                        continue;
                    }
                },
                Outgoing::Close => {
                    let _ = sink.send(Message::Close(None)).await;
                    break;
                }
            };
            if sink.send(frame).await.is_err() {
                break;
            }
        }
    });

    let mut peer: Option<Peer> = None;
    while let Some(Ok(message)) = stream.next().await {
        let text = match message {
            Message::Text(text) => text,
            Message::Close(_) => break,
            _ => continue,
        };
        let envelope = match serde_json::from_str::<Envelope>(&text) {
            Ok(envelope) => envelope,
            Err(e) => {
                let error = ActionError::new(
                    ErrorCode::InvalidMessage,
                    format!("not a relay envelope {{v, type, id?, replyTo?, payload}}: {e}"),
                );
                send_error(&outbox, None, error);
                continue;
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
            send_error(&outbox, envelope.id, error);
            continue;
        }
        match &peer {
            None => match join(&state, &outbox, &envelope, upgrade_token.as_deref()) {
                Ok(joined) => peer = Some(joined),
                Err(error) => {
                    send_error(&outbox, envelope.id.clone(), error);
                    let _ = outbox.send(Outgoing::Close);
                    break;
                }
            },
            Some(p) => dispatch(&state, &outbox, p, envelope),
        }
    }

    if let Some(Peer {
        client_id: Some(client_id),
        connection_id,
        ..
    }) = &peer
    {
        if state.registry.disconnect(client_id, connection_id) {
            tracing::info!(client_id, "host offline");
        }
    }
    drop(outbox);
    let _ = writer.await;
}

fn send_error(outbox: &mpsc::UnboundedSender<Outgoing>, reply_to: Option<String>, error: ActionError) {
    let envelope = Envelope::new("error", json!(error)).reply_to(reply_to);
    let _ = outbox.send(Outgoing::Frame(envelope));
}

fn reply(outbox: &mpsc::UnboundedSender<Outgoing>, request: &Envelope, kind: &str, payload: Value) {
    let envelope = Envelope::new(kind, payload).reply_to(request.id.clone());
    let _ = outbox.send(Outgoing::Frame(envelope));
}

/// Checks a `relay.join` and registers the peer.
fn join(
    state: &AppState,
    outbox: &mpsc::UnboundedSender<Outgoing>,
    envelope: &Envelope,
    upgrade_token: Option<&str>,
) -> Result<Peer, ActionError> {
    if envelope.kind != "relay.join" {
        return Err(ActionError::new(
            ErrorCode::Unauthorized,
            format!("the first frame must be relay.join, not {:?}", envelope.kind),
        ));
    }
    let payload = &envelope.payload;
    let text = |key: &str| payload.get(key).and_then(Value::as_str);
    let role = text("role").and_then(JoinRole::parse).ok_or_else(|| {
        ActionError::new(
            ErrorCode::InvalidMessage,
            "relay.join needs a role: \"orchestrator\", \"host\" or \"observer\"",
        )
    })?;
    let token = text("token").or(upgrade_token).ok_or_else(|| {
        ActionError::new(
            ErrorCode::Unauthorized,
            "relay.join needs a token (or one on the upgrade request)",
        )
    })?;
    match state.tokens.role_of(token) {
        None => {
            return Err(ActionError::new(
                ErrorCode::Unauthorized,
                "the token is not valid for this relay",
            ))
        }
        Some(granted) if granted != role.token_role() => {
            return Err(ActionError::new(
                ErrorCode::Forbidden,
                format!("a {} token cannot join as {}", granted.as_str(), role.as_str()),
            ))
        }
        Some(_) => {}
    }
    let connection_id = random_hex(16);
    let client_id = text("clientId").map(str::to_owned);
    if role == JoinRole::Host {
        let client_id = client_id.as_deref().filter(|id| !id.is_empty()).ok_or_else(|| {
            ActionError::new(
                ErrorCode::InvalidMessage,
                "a host's relay.join needs its clientId",
            )
        })?;
        let link = Link {
            connection_id: connection_id.clone(),
            outbox: outbox.clone(),
        };
        let meta = payload.get("meta").cloned().unwrap_or(Value::Null);
        if let Some(old) = state.registry.connect(client_id, meta, link) {
            let error = ActionError::new(
                ErrorCode::Unauthorized,
                "replaced by a newer connection of the same clientId",
            );
            send_error(&old.outbox, None, error);
            let _ = old.outbox.send(Outgoing::Close);
        }
        tracing::info!(client_id, "host online");
    }
    let mut joined = json!({ "role": role.as_str(), "connectionId": connection_id });
    if let Some(id) = &client_id {
        joined["clientId"] = json!(id);
    }
    if let Some(session) = text("sessionId") {
        joined["sessionId"] = json!(session);
    }
    reply(outbox, envelope, "relay.joined", joined);
    Ok(Peer {
        role,
        client_id,
        connection_id,
    })
}

/// Handles one frame of a joined peer.
fn dispatch(state: &AppState, outbox: &mpsc::UnboundedSender<Outgoing>, peer: &Peer, envelope: Envelope) {
    if let Some(client_id) = &peer.client_id {
        state.registry.touch(client_id);
    }
    let orchestrator_only = matches!(
        envelope.kind.as_str(),
        "extension.list" | "session.bind" | "browser_action" | "catalog.get" | "twin.get" | "session.get"
    );
    if orchestrator_only && peer.role != JoinRole::Orchestrator {
        let error = ActionError::new(
            ErrorCode::Forbidden,
            format!(
                "{} is an orchestrator's message; this connection joined as {}",
                envelope.kind,
                peer.role.as_str()
            ),
        );
        return send_error(outbox, envelope.id, error);
    }
    match envelope.kind.as_str() {
        "extension.list" => reply(
            outbox,
            &envelope,
            "extension.list.result",
            json!({ "clients": state.registry.list() }),
        ),
        "catalog.get" => reply(outbox, &envelope, "catalog", json!({ "actions": *state.catalog })),
        "heartbeat" => {}
        "relay.join" => send_error(
            outbox,
            envelope.id,
            ActionError::new(ErrorCode::InvalidMessage, "this connection has already joined"),
        ),
        "session.bind"
        | "browser_action"
        | "twin.get"
        | "subscribe"
        | "session.get"
        | "browser_task.confirm"
        | "browser_action.ack"
        | "browser_action.result"
        | "full_state_sync"
        | "tab_event" => send_error(
            outbox,
            envelope.id,
            ActionError::new(
                ErrorCode::Internal,
                format!("{} is not served by this relay version yet", envelope.kind),
            ),
        ),
        other => send_error(
            outbox,
            envelope.id,
            ActionError::new(
                ErrorCode::InvalidMessage,
                format!("unknown message type {other:?}"),
            ),
        ),
    }
}
