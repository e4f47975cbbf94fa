//! `relay.join` (PROTOCOL.md §2.1): the first frame of every peer. It names a role and proves
//! it with that role's token; a host also names its stable clientId and describes itself.

use serde_json::{json, Value};
use tether_protocol::{ActionError, Envelope, ErrorCode};

use super::{JoinRole, Peer};
use crate::auth::Role;
use crate::host_link::Link;
use crate::ids::random_hex;
use crate::outbox::Outbox;
use crate::state::AppState;

/// The token role that may join as `role`. An observer (a web UI) is given the orchestrator's
/// token by its orchestrator: the spec has no third token.
fn token_role(role: JoinRole) -> Role {
    match role {
        JoinRole::Host => Role::Host,
        JoinRole::Orchestrator | JoinRole::Observer => Role::Orchestrator,
    }
}

/// Checks a `relay.join`, registers the peer and answers `relay.joined`.
pub fn join(
    state: &AppState,
    outbox: &Outbox,
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
        Some(granted) if granted != token_role(role) => {
            return Err(ActionError::new(
                ErrorCode::Forbidden,
                format!("a {} token cannot join as {}", granted.as_str(), role.as_str()),
            ))
        }
        Some(_) => {}
    }
    let session_id = text("sessionId").filter(|s| !s.is_empty()).map(str::to_owned);
    if role == JoinRole::Observer && session_id.is_none() {
        return Err(ActionError::new(
            ErrorCode::InvalidMessage,
            "an observer's relay.join names the sessionId it watches",
        ));
    }
    let connection_id = random_hex(16);
    let mut peer = Peer {
        role,
        connection_id: connection_id.clone(),
        client_id: None,
        session_id,
        link: None,
        subscriptions: Vec::new(),
    };
    if role == JoinRole::Host {
        join_host(state, outbox, payload, &mut peer)?;
    } else {
        peer.client_id = text("clientId").map(str::to_owned);
    }
    let mut joined = json!({ "role": role.as_str(), "connectionId": connection_id });
    if let Some(id) = &peer.client_id {
        joined["clientId"] = json!(id);
    }
    if let Some(session) = &peer.session_id {
        joined["sessionId"] = json!(session);
    }
    outbox.reply(envelope.id.clone(), "relay.joined", joined);
    if let (JoinRole::Host, Some(client_id)) = (role, &peer.client_id) {
        state.client_event(client_id, "client.online", json!({ "clientId": client_id }));
    }
    Ok(peer)
}

/// Registers a host under its clientId; a second join with the same clientId replaces the
/// first connection, whose actions in flight then fail `CLIENT_OFFLINE`.
fn join_host(state: &AppState, outbox: &Outbox, payload: &Value, peer: &mut Peer) -> Result<(), ActionError> {
    let client_id = payload
        .get("clientId")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty() && id.len() <= 256)
        .ok_or_else(|| {
            ActionError::new(
                ErrorCode::InvalidMessage,
                "a host's relay.join needs its clientId (1 to 256 characters)",
            )
        })?;
    let link = Link::new(peer.connection_id.clone(), outbox.clone());
    let meta = payload.get("meta").cloned().unwrap_or(Value::Null);
    if let Some(old) = state.registry.connect(client_id, meta, link.clone()) {
        old.close();
        let error = ActionError::new(
            ErrorCode::Unauthorized,
            "replaced by a newer connection of the same clientId",
        );
        old.outbox.error(None, error);
        old.outbox.close();
    }
    tracing::info!(client_id, "host online");
    peer.client_id = Some(client_id.to_owned());
    peer.link = Some(link);
    Ok(())
}
