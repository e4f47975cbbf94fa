//! What an orchestrator sends (docs/protocol.md §2.2), and the part of it an observer may send
//! (§12): an observer reads, binds and answers confirmations, never dispatches. One that
//! joined for a session is held to that session (and its browser); one that named none may
//! watch every session.

use tether_protocol::between_relays::ConfirmAnswer;
use tether_protocol::messages::{
    Binding, Catalog, ClientRef, Confirmation, Empty, FromClient, LiveView, Message, Role, SessionRef,
    Subscribe, Subscribed, Unreadable,
};
use tether_protocol::{ActionError, Envelope, ErrorCode};
use tokio::sync::OwnedSemaphorePermit;

use super::host::already_joined;
use super::Peer;
use crate::core::reply::Reply;
use crate::core::request::{self, Request};
use crate::core::scheduler;
use crate::core::state::AppState;
use crate::core::talk;
use crate::parts::outbox::Outbox;
use crate::stores::events::Filter;

pub async fn handle(
    state: &AppState,
    outbox: &Outbox,
    peer: &mut Peer,
    id: Option<String>,
    read: Result<FromClient, Unreadable>,
) {
    let message = match read {
        Ok(message) => message,
        // A malformed action that names its session is still answered with a result.
        Err(Unreadable::BadPayload { kind, why, payload }) if kind == "browser_action" => {
            return action(
                state,
                outbox,
                id,
                Request::malformed(&payload, format!("{kind}: {why}")),
            )
            .await;
        }
        Err(unreadable) => {
            outbox.error(id, unreadable.error(peer.role));
            return;
        }
    };
    let answer = match message {
        FromClient::BrowserAction(wire) => return action(state, outbox, id, Request::accept(wire)).await,
        FromClient::Subscribe(subscribe) => {
            if let Err(error) = start_subscription(state, outbox, peer, id.clone(), subscribe) {
                outbox.error(id, error);
            }
            return;
        }
        FromClient::Heartbeat(_) => {
            if id.is_some() {
                outbox.reply(id, Message::Heartbeat(Empty {}));
            }
            return;
        }
        FromClient::TwinGet(client) => twin(state, peer, client),
        FromClient::SessionGet(SessionRef { session_id }) => {
            Box::pin(session_get(state, peer, session_id)).await
        }
        FromClient::Confirm(confirmation) => Box::pin(confirm(state, peer, confirmation)).await,
        FromClient::HandoffAnswer(answer) => match session_id_of(peer, Some(answer.session_id.clone())) {
            Ok(_) => Box::pin(crate::core::handoff::answer(state, answer)).await,
            Err(refused) => Err(refused),
        },
        FromClient::HandoffInput(input) => match session_id_of(peer, Some(input.session_id.clone())) {
            Ok(_) => Box::pin(crate::core::handoff::input(state, input)).await,
            Err(refused) => Err(refused),
        },
        FromClient::LiveViewStart(view) => session_id_of(peer, Some(view.session_id))
            .and_then(|session| super::live_view::start(state, &peer.connection_id, outbox, &session)),
        FromClient::LiveViewStop(view) => session_id_of(peer, Some(view.session_id)).map(|session| {
            super::live_view::stop(state, &peer.connection_id, Some(&session));
            Message::LiveViewStop(LiveView {
                session_id: session,
                tab_id: None,
            })
        }),
        FromClient::ExtensionList(_) => Ok(Message::ExtensionListResult(state.clients())),
        FromClient::CatalogGet(_) => Ok(Message::Catalog(Catalog {
            actions: state.catalog.to_vec(),
        })),
        FromClient::SessionBind(binding) => Box::pin(session_bind(state, peer, binding)).await,
        FromClient::AgentMessage(words) => talk::say(state, Message::AgentMessage(words)),
        FromClient::UserMessage(words) => session_id_of(peer, Some(words.session_id.clone()))
            .and_then(|_| talk::say(state, Message::UserMessage(words))),
        FromClient::Join(_) => Err(already_joined()),
    };
    match answer {
        Ok(reply) => outbox.reply(id, reply),
        Err(error) => outbox.error(id, error),
    };
}

/// `session.get`: a session's state, wherever in the deployment it is owned.
async fn session_get(
    state: &AppState,
    peer: &Peer,
    session_id: Option<String>,
) -> Result<Message, ActionError> {
    let id = session_id_of(peer, session_id)?;
    state
        .deployment
        .session_state(state, &id)
        .await
        .map(Message::SessionState)
}

/// `session.bind`: a session bound to a browser (an observer's, within what it watches).
async fn session_bind(state: &AppState, peer: &Peer, binding: Binding) -> Result<Message, ActionError> {
    session_id_of(peer, Some(binding.session_id.clone()))?;
    required("sessionId", &binding.session_id)?;
    required("clientId", &binding.client_id)?;
    state
        .deployment
        .bind(state, binding)
        .await
        .map(Message::SessionBound)
}

async fn action(state: &AppState, outbox: &Outbox, id: Option<String>, read: request::Read) {
    match read {
        Ok(parsed) => {
            // Waiting here stops reading this socket: a peer far ahead of its results is
            // slowed down rather than buffered for.
            let slot: OwnedSemaphorePermit = outbox.action_slot().await;
            let reply = Reply::Socket {
                outbox: outbox.clone(),
                request_id: id,
                slot,
            };
            scheduler::take(state, parsed, reply).await;
        }
        Err(not_an_action) => {
            outbox.error(id, not_an_action);
        }
    }
}

fn required<'a>(key: &str, value: &'a str) -> Result<&'a str, ActionError> {
    if value.is_empty() {
        return Err(ActionError::new(
            ErrorCode::InvalidParams,
            format!("{key:?} is required (a string)"),
        ));
    }
    Ok(value)
}

/// The session a message is about; an observer's is always its own.
fn session_id_of(peer: &Peer, named: Option<String>) -> Result<String, ActionError> {
    match (&peer.role, &peer.session_id, named) {
        (Role::Observer, Some(own), Some(named)) if named != *own => Err(ActionError::new(
            ErrorCode::Forbidden,
            format!("this observer watches session {own}, not {named}"),
        )),
        (Role::Observer, Some(own), _) => Ok(own.clone()),
        (_, _, named) => required("sessionId", named.as_deref().unwrap_or_default()).map(str::to_owned),
    }
}

/// An observer that watches one session may follow its browser, and no other.
fn check_observed_client(
    state: &AppState,
    peer: &Peer,
    client_id: &str,
    what: &str,
) -> Result<(), ActionError> {
    let (Role::Observer, Some(own)) = (peer.role, peer.session_id.as_deref()) else {
        return Ok(());
    };
    if !state.sessions.is_bound_to(own, client_id) {
        return Err(ActionError::new(
            ErrorCode::Forbidden,
            format!("this observer may {what} session {own}'s browser only"),
        ));
    }
    Ok(())
}

fn twin(state: &AppState, peer: &Peer, client: ClientRef) -> Result<Message, ActionError> {
    let client_id = required("clientId", &client.client_id)?;
    check_observed_client(state, peer, client_id, "read the twin of")?;
    match state.twins.get(client_id) {
        Some(twin) => Ok(Message::TwinStateSync(twin.payload(client_id))),
        None => Err(ActionError::new(
            ErrorCode::InvalidParams,
            format!("no twin for clientId {client_id:?}: that browser has not reported its tabs"),
        )),
    }
}

async fn confirm(state: &AppState, peer: &Peer, confirmation: Confirmation) -> Result<Message, ActionError> {
    required("requestId", &confirmation.request_id)?;
    let only_session = match peer.role {
        Role::Observer => peer.session_id.clone(),
        _ => None,
    };
    let answer = ConfirmAnswer {
        request_id: confirmation.request_id.clone(),
        approved: confirmation.approved,
        only_session,
        only_client: None,
        refused: "this observer may only answer confirmations of the session it joined for".into(),
    };
    state.deployment.answer_confirmation(state, answer).await?;
    Ok(Message::Confirmed(confirmation))
}

/// Starts forwarding events to this peer: a session's (from after `from` in its log, when
/// given), a browser's, or everything (not for an observer held to one session).
fn start_subscription(
    state: &AppState,
    outbox: &Outbox,
    peer: &mut Peer,
    id: Option<String>,
    subscribe: Subscribe,
) -> Result<(), ActionError> {
    let session = match (peer.role, subscribe.session_id) {
        (Role::Observer, named) if peer.session_id.is_some() => Some(session_id_of(peer, named)?),
        (_, Some(named)) => Some(required("sessionId", &named)?.to_owned()),
        (_, None) => None,
    };
    let client = match subscribe.client_id {
        Some(client) => Some(required("clientId", &client)?.to_owned()),
        None => None,
    };
    if let Some(client) = &client {
        check_observed_client(state, peer, client, "follow")?;
    }
    let filter = Filter {
        session: session.clone(),
        client: client.clone(),
    };
    let replaying = subscribe.from.is_some();
    let mut subscription = state.events.subscribe(filter, subscribe.from);
    // `subscribed` goes out before any event of the subscription.
    outbox.reply(
        id,
        Message::Subscribed(Subscribed {
            session_id: session.clone(),
            client_id: client.clone(),
        }),
    );
    // Questions asked and handoffs begun before this subscriber came are still waiting for
    // someone to answer.
    if !replaying && client.is_none() {
        for asking in state.confirmations.waiting(session.as_deref()) {
            outbox.send(Envelope::of(Message::ConfirmationRequested(asking)));
        }
        for waiting in state.handoffs.of(session.as_deref()) {
            outbox.send(Envelope::of(Message::HandoffRequested(waiting)));
        }
    }
    let (relay, out) = (state.clone(), outbox.clone());
    peer.subscriptions.push(tokio::spawn(async move {
        while let Some(event) = subscription.next(&relay.events).await {
            // Waiting for room makes a slow subscriber fall behind the broadcast, which it
            // then catches up on from the log: the relay holds no more for it.
            if !out
                .send_when_room(Envelope::new(event.kind.clone(), event.payload.clone()))
                .await
            {
                break;
            }
        }
    }));
    Ok(())
}
