//! `relay.join` (docs/protocol.md §2.1): the first frame of every peer. It names a role and proves
//! it with that role's token; a host also names its stable clientId and describes itself.

use serde_json::Value;
use tether_protocol::messages::{Join, Joined, Message, Role, Unreadable};
use tether_protocol::{ActionError, Envelope, ErrorCode};

use super::Peer;
use crate::core::host_link::Link;
use crate::core::state::AppState;
use crate::edge::auth;
use crate::parts::ids::random_hex;
use crate::parts::outbox::Outbox;

/// Whether a token of `granted` may join as `role`: each role with its own token, and an
/// observer with the orchestrator's too (its orchestrator may hand a UI its own token).
fn may_join(granted: auth::Role, role: Role) -> bool {
    matches!(
        (granted, role),
        (auth::Role::Host, Role::Host)
            | (auth::Role::Orchestrator, Role::Orchestrator | Role::Observer)
            | (auth::Role::Observer, Role::Observer)
    )
}

/// Checks a `relay.join`, registers the peer and answers `relay.joined`.
pub fn join(
    state: &AppState,
    outbox: &Outbox,
    envelope: Envelope,
    upgrade_token: Option<&str>,
) -> Result<Peer, ActionError> {
    let id = envelope.id.clone();
    let join = read(envelope)?;
    let bound_to = check_token(state, &join, upgrade_token)?;
    // An observer that names a session watches that one only; without, every session.
    let session_id = join.session_id.clone().filter(|s| !s.is_empty());
    let mut peer = Peer {
        role: join.role,
        connection_id: random_hex(16),
        client_id: None,
        session_id,
        link: None,
        subscriptions: Vec::new(),
        touched: None,
    };
    if join.role == Role::Host {
        join_host(state, outbox, join, bound_to, &mut peer)?;
    } else {
        peer.client_id = join.client_id;
    }
    let joined = Joined {
        role: peer.role,
        connection_id: peer.connection_id.clone(),
        client_id: peer.client_id.clone(),
        session_id: peer.session_id.clone(),
        relay_origins: match peer.role {
            Role::Host => state.origins.for_hosts(),
            _ => Vec::new(),
        },
    };
    outbox.reply(id, Message::Joined(joined));
    if let (Role::Host, Some(client_id)) = (peer.role, &peer.client_id) {
        let meta = state
            .registry
            .meta(client_id)
            .map(|(meta, _)| meta)
            .unwrap_or_default();
        state
            .deployment
            .host_online(state, client_id, &peer.connection_id, &meta);
    }
    Ok(peer)
}

/// A peer's first frame as a `relay.join`, or why it is not one (`INVALID_MESSAGE` for a join
/// that says too little, `UNAUTHORIZED` for anything else). What a stranger's first frame
/// reaches before its token is looked at.
pub fn read(envelope: Envelope) -> Result<Join, ActionError> {
    match envelope.message() {
        Ok(Message::Join(join)) => Ok(join),
        Err(Unreadable::BadPayload { kind, why, .. }) if kind == "relay.join" => Err(ActionError::new(
            ErrorCode::InvalidMessage,
            format!("relay.join: {why} (a role, \"orchestrator\", \"host\" or \"observer\", and its token)"),
        )),
        Ok(other) => Err(not_a_join(other.kind())),
        Err(
            Unreadable::UnknownType(kind)
            | Unreadable::BadPayload { kind, .. }
            | Unreadable::NotYours { kind, .. },
        ) => Err(not_a_join(&kind)),
    }
}

fn not_a_join(kind: &str) -> ActionError {
    ActionError::new(
        ErrorCode::Unauthorized,
        format!("the first frame must be relay.join, not {kind:?}"),
    )
}

/// The join's token (or the upgrade request's) must be the token of the role it names. The
/// browser a host token is bound to, if it is one of those.
fn check_token(
    state: &AppState,
    join: &Join,
    upgrade_token: Option<&str>,
) -> Result<Option<String>, ActionError> {
    let token = join.token.as_deref().or(upgrade_token).ok_or_else(|| {
        ActionError::new(
            ErrorCode::Unauthorized,
            "relay.join needs a token (or one on the upgrade request)",
        )
    })?;
    match state.tokens.identify(token) {
        None => Err(ActionError::new(
            ErrorCode::Unauthorized,
            "the token is not valid for this relay",
        )),
        Some((granted, _)) if !may_join(granted, join.role) => Err(ActionError::new(
            ErrorCode::Forbidden,
            format!(
                "the {} token cannot join as {}",
                granted.as_str(),
                join.role.as_str()
            ),
        )),
        Some((_, bound_to)) => Ok(bound_to),
    }
}

/// The most a host's `meta` may take, as JSON: the relay keeps it while the browser is known.
const MAX_META_BYTES: usize = 16 * 1024;

/// Registers a host under its clientId, which its token must allow (docs/protocol.md §15). A
/// second connection for a browser that is online is refused, unless it holds the browser's
/// own token: then it replaces the first (a reconnect), whose actions in flight fail
/// `CLIENT_OFFLINE`.
fn join_host(
    state: &AppState,
    outbox: &Outbox,
    join: Join,
    bound_to: Option<String>,
    peer: &mut Peer,
) -> Result<(), ActionError> {
    let client_id = join
        .client_id
        .filter(|id| !id.is_empty() && id.len() <= 256)
        .ok_or_else(|| {
            ActionError::new(
                ErrorCode::InvalidMessage,
                "a host's relay.join needs its clientId (1 to 256 bytes)",
            )
        })?;
    let replace = join.replace.unwrap_or(true);
    if let Err(refused) = may_be(state, &client_id, bound_to.as_deref(), replace) {
        if state.registry.holds(&client_id) {
            state.registry.contest(&client_id);
        }
        return Err(refused);
    }
    let link = Link::new(peer.connection_id.clone(), outbox.clone());
    let meta = join
        .meta
        .map_or(Value::Null, |meta| serde_json::to_value(meta).unwrap_or_default());
    if meta.to_string().len() > MAX_META_BYTES {
        return Err(ActionError::new(
            ErrorCode::InvalidMessage,
            format!("a host's meta is at most {} KiB of JSON", MAX_META_BYTES / 1024),
        ));
    }
    if let Some(old) = state.registry.connect(&client_id, meta, link.clone()) {
        state.registry.contest(&client_id);
        old.close();
        // `replaced` tells the host it was another's join, not a lost link: it must not take
        // the place back (it rejoins with `replace: false`).
        let error = ActionError::new(
            ErrorCode::Unauthorized,
            "replaced by a newer connection of the same clientId: another host runs under this clientId",
        )
        .with_details(serde_json::json!({ "replaced": true }));
        if let Some(outbox) = old.socket() {
            outbox.error(None, error);
            outbox.close();
        }
    }
    tracing::info!(client_id, "host online");
    peer.client_id = Some(client_id);
    peer.link = Some(link);
    Ok(())
}

/// Whether a host whose token is bound to `bound_to` (or is the shared one) may join as
/// `client_id` now; with `replace`, a join with the bound token takes the place of the
/// connection that holds it.
fn may_be(
    state: &AppState,
    client_id: &str,
    bound_to: Option<&str>,
    replace: bool,
) -> Result<(), ActionError> {
    match bound_to {
        Some(owner) if owner != client_id => Err(ActionError::new(
            ErrorCode::Forbidden,
            format!("this host token belongs to the browser {owner:?}; it cannot join as {client_id:?}"),
        )),
        Some(_) if !replace && state.registry.holds(client_id) => Err(ActionError::new(
            ErrorCode::Forbidden,
            format!(
                "the browser {client_id:?} is held by another connection with its token; this join asked not to replace it"
            ),
        )
        .with_details(serde_json::json!({ "alreadyConnected": true }))),
        Some(_) => Ok(()),
        None if state.tokens.bound.is_bound(client_id) => Err(ActionError::new(
            ErrorCode::Forbidden,
            format!(
                "the browser {client_id:?} has a host token of its own (tether-relay host-token); the shared host token can no longer join as it"
            ),
        )),
        None if state.registry.holds(client_id) => Err(ActionError::new(
            ErrorCode::Forbidden,
            format!(
                "the browser {client_id:?} is already connected; a second connection is refused (one holding the browser's own token replaces it)"
            ),
        )
        .with_details(serde_json::json!({ "alreadyConnected": true }))),
        None => Ok(()),
    }
}
