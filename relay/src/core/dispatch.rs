//! One action's turn (docs/protocol.md §2.3): check the session may act, pick its browser, ask a
//! person if the relay is told to, then send the action to the host and wait for its ack and
//! its result, each bounded. Whatever happens ends in one [`ActionResult`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::LazyLock;
use std::time::Duration;

use chrono::{DateTime, Utc};
use tether_protocol::messages::{Ack, ActionStarted, Message, Progress};
use tether_protocol::{ActionError, ActionName, ActionResult, Envelope, ErrorCode};
use tokio::time::Instant;

use crate::config::ConfirmMode;
use crate::core::host_link::{HostAnswer, Link};
use crate::core::request::Request;
use crate::core::sessions::Fact;
use crate::core::state::Relay;
use crate::parts::shutdown::Phase;
use crate::stores::events::Logged;
use crate::stores::session_log::Direction;
use crate::stores::store::Action;

/// Envelope ids of actions sent to hosts: a number, behind a prefix of this run of the relay.
/// A host may answer an envelope of an earlier run after a restart (its kept results); the
/// prefix keeps that answer from matching an action of this run.
static NEXT_DISPATCH: AtomicU64 = AtomicU64::new(1);
static RUN: LazyLock<String> = LazyLock::new(|| crate::parts::ids::random_hex(4));

/// This run of the relay: the prefix of its envelope ids, and its name in a deployment of
/// several relays, where a host's answer finds the relay that sent the action by it.
pub fn run_id() -> &'static str {
    &RUN
}

/// The relay whose run sent the envelope `envelope_id` (`d<run>-<n>`).
pub fn sender_of(envelope_id: &str) -> Option<&str> {
    envelope_id.strip_prefix('d')?.split_once('-').map(|(run, _)| run)
}

/// Runs one action; `on_ack` is called when the host acknowledges it.
pub async fn run(relay: &Relay, request: &Request, on_ack: impl FnOnce()) -> ActionResult {
    let started = Utc::now();
    let deadline = Instant::now() + request.timeout.unwrap_or(relay.settings.action_timeout);
    let (client_id, link) = match prepare(relay, request) {
        Ok(chosen) => chosen,
        Err((client, error)) => return request.failed(client.as_deref(), started, error),
    };
    if let Err(error) = confirm(relay, request, (&client_id, &link), deadline).await {
        return request.failed(Some(&client_id), started, error);
    }
    begin(relay, request, &client_id, started);
    match exchange(relay, request, &client_id, &link, deadline, on_ack).await {
        Ok(answer) => from_host(request, &client_id, started, answer),
        Err(error) => request.failed(Some(&client_id), started, error),
    }
}

/// Checks that the session may act and picks its browser (see `Session::choose_client`).
fn prepare(relay: &Relay, request: &Request) -> Result<(String, Link), (Option<String>, ActionError)> {
    // A binding made here is in the store's queue ahead of the action's facts (see `begin`).
    let ((chosen, changed), _bound) = relay.sessions.keep(&request.session_id, |session| {
        if let Err(error) = session.open_for(request.action.action()) {
            let client = session.client_id().map(str::to_owned);
            return ((Err((client, error)), None), Fact::none());
        }
        let unbound = session.client_id().is_none();
        let (chosen, changed) =
            session.choose_client(request.client_id.as_deref(), || relay.online_clients());
        let bound_now = unbound && session.client_id().is_some();
        let fact = if bound_now { Fact::head() } else { Fact::none() };
        ((chosen.map_err(|error| (None, error)), changed), fact)
    });
    relay.publish_state(changed);
    let client_id = chosen?;
    match relay.link_to(&client_id) {
        Some(link) => Ok((client_id, link)),
        None => {
            let error = not_connected(&client_id);
            Err((Some(client_id), error))
        }
    }
}

fn not_connected(client_id: &str) -> ActionError {
    ActionError::new(
        ErrorCode::ClientOffline,
        format!("the browser {client_id} is not connected to the relay"),
    )
}

/// Waits for a person's approval when `--confirm`, or the owner of the chosen browser, asks
/// for it; an owner who asks is asked on their browser too.
async fn confirm(
    relay: &Relay,
    request: &Request,
    (client_id, link): (&str, &Link),
    deadline: Instant,
) -> Result<(), ActionError> {
    // Stopping is always allowed: a person must never have to approve an end (docs/protocol.md §12).
    if request.action.is(ActionName::SessionStop) {
        return Ok(());
    }
    let owner_asks = relay.owner_confirms(client_id);
    let mode = if owner_asks {
        ConfirmMode::Every
    } else {
        relay.settings.confirm
    };
    let changed = relay.sessions.update(&request.session_id, |s| {
        s.needs_confirmation(mode).then(|| s.await_confirmation())
    });
    let Some(changed) = changed else {
        return Ok(());
    };
    relay.publish_state(changed);
    let approved = relay
        .confirmations
        .ask(
            &relay.events,
            &relay.shutdown,
            request,
            deadline,
            owner_asks.then_some(link),
        )
        .await?;
    if !approved {
        return Err(ActionError::new(
            ErrorCode::UserDenied,
            format!(
                "a person declined {} in session {}",
                request.action, request.session_id
            ),
        ));
    }
    // Kept with the session; not waited for: a crash that loses it asks the person again.
    let ((), _kept) = relay
        .sessions
        .keep(&request.session_id, |s| (s.confirmed(), Fact::head()));
    Ok(())
}

/// Marks the action as running and tells the subscribers. Its `started` fact is in the store's
/// queue before the browser has the action, and committed before its result is handed out
/// (the `finished` fact waits behind it): after a crash the relay knows the browser may have
/// run it. Not waited for here: a relay that dies between sending and committing has answered
/// no one, and a repeat reaches the browser, which runs each (session, action) once and answers
/// a repeat from what it kept (docs/architecture.md). One wait per action fewer.
fn begin(relay: &Relay, request: &Request, client_id: &str, started: DateTime<Utc>) {
    let handoff = request.action.is(ActionName::BrowserHandoff);
    let (changed, _kept) = relay.sessions.keep(&request.session_id, |s| {
        let changed = match handoff {
            true => s.hand_over(&request.action_id),
            false => s.start(&request.action_id),
        };
        let action = Action::Started {
            action_id: request.action_id.clone(),
            action_name: request.action.as_str().to_owned(),
            tab_id: request.params.get("tabId").and_then(serde_json::Value::as_i64),
        };
        // `session_start` may have opened a completed session again (`open_for`).
        let fact = match request.action.is(ActionName::SessionStart) {
            true => Fact::both(action),
            false => Fact::action(action),
        };
        (changed, fact)
    });
    let event = ActionStarted {
        action_id: request.action_id.clone(),
        action_name: request.action.as_str().to_owned(),
        session_id: request.session_id.clone(),
        client_id: client_id.to_owned(),
        started_at: tether_protocol::result::rfc3339_ms(started),
    };
    // The new state, then the start; logged with the action's end.
    let mut events = crate::core::state::state_events(changed);
    events.push(Logged::of(Direction::Internal, &Message::ActionStarted(event)));
    if let Some(asked) = handoff
        .then(|| crate::core::handoff::requested(request))
        .flatten()
    {
        relay.handoffs.asked(&asked);
        events.push(Logged::of(Direction::Internal, &Message::HandoffRequested(asked)));
    }
    relay.events.session_all_held(&request.session_id, events);
}

/// Sends the action to the host and waits: for its ack within the ack timeout, for its result
/// until the deadline, and for neither once the link drops.
async fn exchange(
    relay: &Relay,
    request: &Request,
    client_id: &str,
    link: &Link,
    deadline: Instant,
    on_ack: impl FnOnce(),
) -> Result<HostAnswer, ActionError> {
    let offline = || {
        ActionError::new(
            ErrorCode::ClientOffline,
            format!(
                "the link to browser {client_id} dropped while {} was running; it may or may not have happened",
                request.action
            ),
        )
    };
    let envelope_id = format!("d{}-{}", *RUN, NEXT_DISPATCH.fetch_add(1, Ordering::Relaxed));
    let mut waiting = link.expect(&envelope_id).map_err(|_| offline())?;
    let left = deadline.saturating_duration_since(Instant::now());
    let envelope =
        Envelope::of(Message::BrowserAction(request.forwarded(client_id, left))).with_id(&envelope_id);
    if !link.send(envelope) {
        link.forget(&envelope_id);
        return Err(offline());
    }
    let sent_to = relayed_connection(relay, client_id, link);
    let ack_deadline = (Instant::now() + relay.settings.ack_timeout).min(deadline);
    let waiting_for = request
        .action
        .action()
        .and_then(ActionName::waits_for)
        .filter(|_| !request.peek);
    let sent = Instant::now();
    let mut ticks = waiting_for.map(|_| tokio::time::interval_at(sent + PROGRESS_EVERY, PROGRESS_EVERY));
    // Made once for the whole wait, not again on each turn of the loop (the ack is one).
    let ack_late = tokio::time::sleep_until(ack_deadline);
    let too_late = tokio::time::sleep_until(deadline);
    let aborting = relay.shutdown.reached(Phase::Aborting);
    tokio::pin!(ack_late, too_late, aborting);
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
                    let ack = Ack { action_id: request.action_id.clone() };
                    relay.events.record_held(&request.session_id, Direction::In, Message::BrowserActionAck(ack));
                }
            }
            result = &mut waiting.result => break result.map_err(|_| offline()),
            _ = tick(&mut ticks), if ticks.is_some() => {
                let what = waiting_for.unwrap_or_default();
                let waited = sent.elapsed().as_secs_f64();
                let progress = Progress {
                    action_id: request.action_id.clone(),
                    session_id: request.session_id.clone(),
                    message: format!("{} {what} ({waited:.1} s)", request.action),
                    progress: None,
                };
                relay.events.session_passing(&request.session_id, Message::Progress(progress));
            }
            _ = &mut ack_late, if !acked && ack_deadline < deadline => {
                break Err(ActionError::new(
                    ErrorCode::AckTimeout,
                    format!(
                        "browser {client_id} did not acknowledge {} within {} ms",
                        request.action,
                        relay.settings.ack_timeout.as_millis()
                    ),
                ));
            }
            _ = &mut aborting => {
                break Err(ActionError::new(
                    ErrorCode::Internal,
                    format!(
                        "the relay stopped before {} finished; it may or may not have happened",
                        request.action
                    ),
                ));
            }
            _ = &mut too_late => {
                // A host held by a relay that died, and not back where it was sent to: the link
                // was lost, whatever kept the result from coming (§14).
                if sent_to.is_some() && relayed_connection(relay, client_id, link) != sent_to {
                    break Err(offline());
                }
                let limit = request.timeout.unwrap_or(relay.settings.action_timeout);
                break Err(ActionError::new(
                    ErrorCode::ActionTimeout,
                    format!("{} did not finish within {} ms", request.action, limit.as_millis()),
                ));
            }
        }
    };
    if outcome.is_err() {
        link.forget(&envelope_id);
    }
    outcome
}

/// The next progress tick, for an action that waits (never, for one that does not).
async fn tick(ticks: &mut Option<tokio::time::Interval>) {
    match ticks {
        Some(ticks) => {
            ticks.tick().await;
        }
        None => std::future::pending().await,
    }
}

/// The connection of the host at the other end of a link through another relay of the
/// deployment, as the deployment's directory has it now (None: not online, or a socket here).
fn relayed_connection(relay: &Relay, client_id: &str, link: &Link) -> Option<String> {
    if link.socket().is_some() {
        return None;
    }
    relay.deployment.connection_elsewhere(client_id)
}

/// How often an action that waits says so: "at least once a second" (docs/protocol.md §12), with
/// room for a busy scheduler.
const PROGRESS_EVERY: Duration = Duration::from_millis(750);

/// The host's result, held to the request it answers.
fn from_host(request: &Request, client_id: &str, started: DateTime<Utc>, answer: HostAnswer) -> ActionResult {
    match answer {
        Ok(mut result) => {
            let header = request.header(Some(client_id));
            result.action_id = header.action_id;
            result.action_name = header.action_name;
            result.session_id = header.session_id;
            result.client_id = header.client_id;
            // The browser says so when it answered a repeat from what it kept (§13).
            result.replayed = result.replayed.filter(|replayed| *replayed);
            result
        }
        Err(why) => request.failed(
            Some(client_id),
            started,
            ActionError::new(
                ErrorCode::Internal,
                format!("browser {client_id} sent a result the relay cannot read: {why}"),
            ),
        ),
    }
}
