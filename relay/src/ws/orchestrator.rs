//! What an orchestrator sends (PROTOCOL.md §2.2), and the part of it an observer may send: an
//! observer reads the events, state and twin of the session it joined for, and answers
//! confirmations of that session; nothing else.

use serde_json::{json, Value};
use tether_protocol::{ActionError, Envelope, ErrorCode};

use super::{forbidden, unknown, JoinRole, Peer};
use crate::events::Filter;
use crate::outbox::Outbox;
use crate::scheduler::{self, Reply};
use crate::state::AppState;
use tokio::sync::OwnedSemaphorePermit;

pub async fn handle(state: &AppState, outbox: &Outbox, peer: &mut Peer, envelope: Envelope) {
    let observer = peer.role == JoinRole::Observer;
    let result = match envelope.kind.as_str() {
        "subscribe" => {
            if let Err(error) = subscribe(state, outbox, peer, &envelope) {
                outbox.error(envelope.id, error);
            }
            return;
        }
        "twin.get" => twin(state, peer, &envelope),
        "session.get" => {
            session_id(peer, &envelope.payload).map(|id| ("session.state", state.sessions.state(&id)))
        }
        "browser_task.confirm" => confirm(state, peer, &envelope.payload),
        "heartbeat" => Ok(("heartbeat", json!({}))),
        "relay.join" => Err(ActionError::new(
            ErrorCode::InvalidMessage,
            "this connection has already joined",
        )),
        "extension.list" | "session.bind" | "browser_action" | "catalog.get" if observer => {
            return forbidden(outbox, peer, envelope, "is not open to observers");
        }
        "extension.list" => Ok(("extension.list.result", state.clients())),
        "catalog.get" => Ok(("catalog", json!({ "actions": state.catalog }))),
        "session.bind" => bind(state, &envelope.payload),
        "browser_action" => {
            // Waiting here stops reading this socket: a peer far ahead of its results is
            // slowed down rather than buffered for.
            let slot = outbox.action_slot().await;
            return action(state, outbox, envelope, slot);
        }
        "browser_action.ack" | "browser_action.result" | "full_state_sync" | "tab_event" => {
            return forbidden(outbox, peer, envelope, "is a host's message");
        }
        _ => return unknown(outbox, envelope),
    };
    match result {
        Ok((kind, payload)) => {
            if envelope.id.is_some() || kind != "heartbeat" {
                outbox.reply(envelope.id, kind, payload);
            }
        }
        Err(error) => {
            outbox.error(envelope.id, error);
        }
    }
}

type Answer = Result<(&'static str, Value), ActionError>;

fn action(state: &AppState, outbox: &Outbox, envelope: Envelope, slot: OwnedSemaphorePermit) {
    match scheduler::parse(&envelope.payload) {
        Ok(parsed) => {
            let reply = Reply::Socket {
                outbox: outbox.clone(),
                request_id: envelope.id,
                slot,
            };
            scheduler::submit(state, parsed, reply);
        }
        Err(not_an_action) => {
            outbox.error(envelope.id, not_an_action.0);
        }
    }
}

fn text<'a>(payload: &'a Value, key: &str) -> Result<&'a str, ActionError> {
    payload
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| {
            ActionError::new(
                ErrorCode::InvalidParams,
                format!("{key:?} is required (a string)"),
            )
        })
}

/// The session a message is about; an observer's is always its own.
fn session_id(peer: &Peer, payload: &Value) -> Result<String, ActionError> {
    let named = payload.get("sessionId").and_then(Value::as_str);
    match (&peer.role, &peer.session_id, named) {
        (JoinRole::Observer, Some(own), Some(named)) if named != own => Err(ActionError::new(
            ErrorCode::Forbidden,
            format!("this observer watches session {own}, not {named}"),
        )),
        (JoinRole::Observer, Some(own), _) => Ok(own.clone()),
        _ => text(payload, "sessionId").map(str::to_owned),
    }
}

fn bind(state: &AppState, payload: &Value) -> Answer {
    let session = text(payload, "sessionId")?;
    let client = text(payload, "clientId")?;
    state.bind(session, client).map(|bound| ("session.bound", bound))
}

fn twin(state: &AppState, peer: &Peer, envelope: &Envelope) -> Answer {
    let client_id = text(&envelope.payload, "clientId")?;
    if peer.role == JoinRole::Observer {
        let own = peer.session_id.as_deref().unwrap_or_default();
        if state.sessions.client_of(own).as_deref() != Some(client_id) {
            return Err(ActionError::new(
                ErrorCode::Forbidden,
                format!("this observer may read the twin of session {own}'s browser only"),
            ));
        }
    }
    match state.twins.get(client_id) {
        Some(twin) => Ok(("twin_state_sync", twin.payload(client_id))),
        None => Err(ActionError::new(
            ErrorCode::InvalidParams,
            format!("no twin for clientId {client_id:?}: that browser has not reported its tabs"),
        )),
    }
}

fn confirm(state: &AppState, peer: &Peer, payload: &Value) -> Answer {
    let request_id = text(payload, "requestId")?;
    let approved = payload.get("approved").and_then(Value::as_bool).ok_or_else(|| {
        ActionError::new(
            ErrorCode::InvalidParams,
            "\"approved\" is required (true or false)",
        )
    })?;
    let only = match peer.role {
        JoinRole::Observer => peer.session_id.as_deref(),
        _ => None,
    };
    state.confirmations.answer(request_id, approved, only)?;
    Ok((
        "browser_task.confirmed",
        json!({ "requestId": request_id, "approved": approved }),
    ))
}

/// Starts forwarding events to this peer: a session's (from after `from` in its log, when
/// given), a browser's, or (orchestrators only) everything.
fn subscribe(
    state: &AppState,
    outbox: &Outbox,
    peer: &mut Peer,
    envelope: &Envelope,
) -> Result<(), ActionError> {
    let payload = &envelope.payload;
    let session = match (peer.role, payload.get("sessionId")) {
        (JoinRole::Observer, _) => Some(session_id(peer, payload)?),
        (_, Some(_)) => Some(text(payload, "sessionId")?.to_owned()),
        _ => None,
    };
    let client = match payload.get("clientId") {
        Some(_) => Some(text(payload, "clientId")?.to_owned()),
        None => None,
    };
    if let (JoinRole::Observer, Some(client)) = (peer.role, &client) {
        let own = session.as_deref().unwrap_or_default();
        if state.sessions.client_of(own).as_deref() != Some(client.as_str()) {
            return Err(ActionError::new(
                ErrorCode::Forbidden,
                format!("this observer may follow session {own}'s browser only"),
            ));
        }
    }
    let from = payload.get("from").and_then(Value::as_u64);
    let filter = Filter {
        session: session.clone(),
        client: client.clone(),
    };
    let mut subscription = state.events.subscribe(filter, from);
    // `subscribed` goes out before any event of the subscription.
    outbox.reply(
        envelope.id.clone(),
        "subscribed",
        json!({ "sessionId": session, "clientId": client }),
    );
    let (relay, out) = (state.clone(), outbox.clone());
    peer.subscriptions.push(tokio::spawn(async move {
        while let Some(event) = subscription.next(&relay.events).await {
            // Waiting for room makes a slow subscriber fall behind the broadcast, which it
            // then catches up on from the log: the relay holds no more for it.
            if !out
                .send_when_room(Envelope::new(event.kind.clone(), (*event.payload).clone()))
                .await
            {
                break;
            }
        }
    }));
    Ok(())
}
