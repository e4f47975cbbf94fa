//! One action's turn (PROTOCOL.md §2.3): check the session may act, pick its browser, ask a
//! person if the relay is told to, then send the action to the host and wait for its ack and
//! its result, each bounded. Whatever happens ends in one [`ActionResult`].

use std::sync::atomic::{AtomicU64, Ordering};

use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use tether_protocol::{ActionError, ActionResult, Envelope, ErrorCode};
use tokio::time::Instant;

use crate::config::ConfirmMode;
use crate::host_link::Link;
use crate::scheduler::ActionRequest;
use crate::session_log::Direction;
use crate::sessions::Activity;
use crate::shutdown::Phase;
use crate::state::Relay;

/// Envelope ids of actions sent to hosts: unique for the relay's lifetime.
static NEXT_DISPATCH: AtomicU64 = AtomicU64::new(1);

/// Runs one action; `on_ack` is called when the host acknowledges it.
pub async fn run(relay: &Relay, request: &ActionRequest, on_ack: impl FnOnce()) -> ActionResult {
    let started = Utc::now();
    let deadline = Instant::now() + request.timeout.unwrap_or(relay.settings.action_timeout);
    let (client_id, link) = match prepare(relay, request) {
        Ok(chosen) => chosen,
        Err((client, error)) => return request.failed(client.as_deref(), started, error),
    };
    if let Err(error) = confirm(relay, request, deadline).await {
        return request.failed(Some(&client_id), started, error);
    }
    begin(relay, request, &client_id, started);
    match exchange(relay, request, &client_id, &link, deadline, on_ack).await {
        Ok(payload) => from_host(request, &client_id, started, payload),
        Err(error) => request.failed(Some(&client_id), started, error),
    }
}

/// Checks the session may act and picks the browser: the action's `clientId`, else the
/// session's binding, else the only host online (which the session is then bound to).
fn prepare(relay: &Relay, request: &ActionRequest) -> Result<(String, Link), (Option<String>, ActionError)> {
    // Lock order: sessions, then registry (nothing takes them the other way round).
    let mut sessions = relay.sessions.lock();
    let session = sessions.entry(request.session_id.clone()).or_default();
    if request.action_name == "session_start" {
        session.completed = false;
    } else if session.completed {
        let error = ActionError::new(
            ErrorCode::SessionNotActive,
            format!(
                "session {} was stopped; start it again with session_start",
                request.session_id
            ),
        );
        return Err((session.client_id.clone(), error));
    }
    let chosen = request.client_id.clone().or_else(|| session.client_id.clone());
    let client_id = match chosen {
        Some(client) => client,
        None => {
            let online = relay.registry.online();
            if let [only] = online.as_slice() {
                only.clone()
            } else {
                session.activity = Some(Activity::WaitingForBrowserSelection);
                return Err((None, no_client(online.len())));
            }
        }
    };
    if session.client_id.is_none() {
        session.client_id = Some(client_id.clone());
    }
    match relay.registry.link(&client_id) {
        Some(link) => Ok((client_id, link)),
        None => {
            let error = ActionError::new(
                ErrorCode::ClientOffline,
                format!("the browser {client_id} is not connected to the relay"),
            );
            Err((Some(client_id), error))
        }
    }
}

fn no_client(online: usize) -> ActionError {
    let message = if online == 0 {
        "no browser is online; start a host, then bind the session with session.bind".to_owned()
    } else {
        format!(
            "{online} browsers are online; choose one with session.bind or the action's clientId (see extension.list)"
        )
    };
    ActionError::new(ErrorCode::NoClientSelected, message)
}

/// Waits for a person's approval when `--confirm` asks for it.
async fn confirm(relay: &Relay, request: &ActionRequest, deadline: Instant) -> Result<(), ActionError> {
    let needed = match relay.settings.confirm {
        ConfirmMode::Never => false,
        ConfirmMode::Every => true,
        ConfirmMode::First => !relay
            .sessions
            .lock()
            .get(&request.session_id)
            .is_some_and(|s| s.confirmed),
    };
    if !needed {
        return Ok(());
    }
    set_activity(relay, &request.session_id, Activity::WaitingForUserConfirmation);
    let approved = relay.confirmations.ask(relay, request, deadline).await?;
    if !approved {
        return Err(ActionError::new(
            ErrorCode::UserDenied,
            format!(
                "a person declined {} in session {}",
                request.action_name, request.session_id
            ),
        ));
    }
    if let Some(session) = relay.sessions.lock().get_mut(&request.session_id) {
        session.confirmed = true;
    }
    Ok(())
}

fn set_activity(relay: &Relay, session_id: &str, activity: Activity) {
    let mut sessions = relay.sessions.lock();
    let session = sessions.entry(session_id.to_owned()).or_default();
    session.activity = Some(activity);
    let state = session.state(session_id);
    drop(sessions);
    relay
        .events
        .session(session_id, Direction::Internal, "session.state", state);
}

/// Marks the action as running and tells the subscribers.
fn begin(relay: &Relay, request: &ActionRequest, client_id: &str, started: DateTime<Utc>) {
    if let Some(session) = relay.sessions.lock().get_mut(&request.session_id) {
        session.in_flight = Some(request.action_id.clone());
    }
    set_activity(relay, &request.session_id, Activity::Running);
    relay.events.session(
        &request.session_id,
        Direction::Internal,
        "action.started",
        json!({
            "actionId": request.action_id,
            "actionName": request.action_name,
            "sessionId": request.session_id,
            "clientId": client_id,
            "startedAt": tether_protocol::result::rfc3339_ms(started),
        }),
    );
}

/// Sends the action to the host and waits: for its ack within the ack timeout, for its result
/// until the deadline, and for neither once the link drops.
async fn exchange(
    relay: &Relay,
    request: &ActionRequest,
    client_id: &str,
    link: &Link,
    deadline: Instant,
    on_ack: impl FnOnce(),
) -> Result<Value, ActionError> {
    let offline = || {
        ActionError::new(
            ErrorCode::ClientOffline,
            format!(
                "the link to browser {client_id} dropped while {} was running; it may or may not have happened",
                request.action_name
            ),
        )
    };
    let envelope_id = format!("d{}", NEXT_DISPATCH.fetch_add(1, Ordering::Relaxed));
    let mut waiting = link.expect(&envelope_id).map_err(|_| offline())?;
    let left = deadline.saturating_duration_since(Instant::now());
    let envelope = Envelope::new("browser_action", request.forwarded(client_id, left)).with_id(&envelope_id);
    if !link.outbox.send(envelope) {
        link.forget(&envelope_id);
        return Err(offline());
    }
    let ack_deadline = (Instant::now() + relay.settings.ack_timeout).min(deadline);
    let mut acked = false;
    let mut on_ack = Some(on_ack);
    let outcome = loop {
        tokio::select! {
            // An ack that came is passed on before the result (or the end of the link).
            biased;
            ack = &mut waiting.ack, if !acked => {
                // An ack that can no longer come (the result came without one, or the link
                // closed) is settled by the result branch.
                acked = true;
                if let (Ok(()), Some(on_ack)) = (ack, on_ack.take()) {
                    on_ack();
                    relay.events.record(
                        &request.session_id,
                        Direction::In,
                        "browser_action.ack",
                        json!({ "actionId": request.action_id }),
                    );
                }
            }
            result = &mut waiting.result => break result.map_err(|_| offline()),
            _ = tokio::time::sleep_until(ack_deadline), if !acked && ack_deadline < deadline => {
                break Err(ActionError::new(
                    ErrorCode::AckTimeout,
                    format!(
                        "browser {client_id} did not acknowledge {} within {} ms",
                        request.action_name,
                        relay.settings.ack_timeout.as_millis()
                    ),
                ));
            }
            _ = relay.shutdown.reached(Phase::Aborting) => {
                break Err(ActionError::new(
                    ErrorCode::Internal,
                    format!(
                        "the relay stopped before {} finished; it may or may not have happened",
                        request.action_name
                    ),
                ));
            }
            _ = tokio::time::sleep_until(deadline) => {
                let limit = request.timeout.unwrap_or(relay.settings.action_timeout);
                break Err(ActionError::new(
                    ErrorCode::ActionTimeout,
                    format!("{} did not finish within {} ms", request.action_name, limit.as_millis()),
                ));
            }
        }
    };
    if outcome.is_err() {
        link.forget(&envelope_id);
    }
    outcome
}

/// The host's result payload, held to the request it answers.
fn from_host(
    request: &ActionRequest,
    client_id: &str,
    started: DateTime<Utc>,
    payload: Value,
) -> ActionResult {
    match serde_json::from_value::<ActionResult>(payload) {
        Ok(mut result) => {
            let header = request.header(Some(client_id));
            result.action_id = header.action_id;
            result.action_name = header.action_name;
            result.session_id = header.session_id;
            result.client_id = header.client_id;
            result.replayed = None;
            result
        }
        Err(e) => request.failed(
            Some(client_id),
            started,
            ActionError::new(
                ErrorCode::Internal,
                format!("browser {client_id} sent a result the relay cannot read: {e}"),
            ),
        ),
    }
}
