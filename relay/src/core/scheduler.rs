//! Runs `browser_action`s (docs/protocol.md §2.3): one at a time per session, the rest in a
//! bounded FIFO; an action id is an idempotency key; every accepted action ends in exactly one
//! result, and a session's results come back in the order its actions were accepted.
//!
//! A session with work has one runner task that drains its queue; it exists only while there
//! is something to run. Each action goes through [`crate::core::dispatch`], which selects the
//! browser, asks for confirmation and talks to the host.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use chrono::Utc;
use tether_protocol::envelope::payload;
use tether_protocol::messages::{Message, SessionStatus, RESULT_KIND};
use tether_protocol::{ActionError, ActionName, ActionResult, ErrorCode};

use crate::core::job::Job;
use crate::core::reply::Reply;
use crate::core::request::{Refused, Request};
use crate::core::sessions::Fact;
use crate::core::sessions::{Admitted, Changed, Kept, Stored};
use crate::core::state::Relay;
use crate::parts::shutdown::Phase;
use crate::stores::events::Logged;
use crate::stores::session_log::Direction;
use crate::stores::store::Action;

/// Takes an orchestrator's action wherever its session runs: into this relay's queue, or
/// through the deployment to the relay that runs it.
///
/// The deployment's routing is a boxed future: inline, its state would grow the task of every
/// connection, hosts' included (measured with 1000 hosts: 28.4 KiB per host inline, 20.4 boxed).
pub async fn take(relay: &Arc<Relay>, parsed: Result<Request, Refused>, reply: Reply) {
    if let Some((parsed, reply)) = relay.deployment.route(relay, parsed, reply).await {
        submit(relay, parsed, reply);
    }
}

/// Accepts a parsed `browser_action` for its session's queue, or answers it at once (a
/// replayed id, a full queue, a request refused before it ran).
pub fn submit(relay: &Arc<Relay>, parsed: Result<Request, Refused>, reply: Reply) {
    let (request, refused) = match parsed {
        Ok(request) => (request, None),
        Err((request, error)) => (request, Some(error)),
    };
    let session_id = request.session_id.clone();
    relay.events.record_held(
        &session_id,
        Direction::In,
        Message::BrowserAction(request.logged(relay.settings.log_typed_text)),
    );
    let refused = refused.or_else(|| (relay.shutdown.phase() >= Phase::Draining).then(stopping));
    if let Some(error) = refused {
        let result = request.failed(None, Utc::now(), error);
        return finish_refused(relay, result, reply);
    }
    let crowded = relay.sessions.waiting.load(Ordering::Relaxed) >= relay.settings.waiting_limit;
    // A crowded relay still starts an idle session's action: only waiting is refused.
    let limit = if crowded { 0 } else { relay.settings.queue_limit };
    let answered_now = relay.sessions.update(&session_id, |session| {
        match session.admit(Job { request, reply }, limit) {
            Admitted::Queued { start_runner } => {
                relay.sessions.waiting.fetch_add(1, Ordering::Relaxed);
                if start_runner {
                    tokio::spawn(drain(relay.clone(), session_id.clone()));
                }
                None
            }
            Admitted::Repeat(job) => {
                // Acked under the session's lock: the result cannot overtake the ack.
                job.reply.ack(&job.request.action_id);
                session.attach(&job.request.action_id, job.reply);
                None
            }
            other => Some(other),
        }
    });
    match answered_now {
        Some(Admitted::Replay(job, stored)) => {
            job.reply.ack(&job.request.action_id);
            let result = match serde_json::from_str::<ActionResult>(stored.get()) {
                Ok(result) => replayed(result),
                Err(e) => job.request.failed(
                    None,
                    Utc::now(),
                    ActionError::internal(format!("the stored result is unreadable: {e}")),
                ),
            };
            finish_refused(relay, result, job.reply);
        }
        Some(Admitted::Full(job)) => {
            let why = if crowded {
                let limit = relay.settings.waiting_limit;
                format!("the relay has {limit} actions waiting across its sessions")
            } else {
                format!("session {session_id} already has {limit} actions waiting")
            };
            let error = ActionError::new(
                ErrorCode::QueueFull,
                format!("{why}; wait for results before sending more"),
            );
            let result = job.request.failed(None, Utc::now(), error);
            finish_refused(relay, result, job.reply);
        }
        _ => {}
    }
}

fn stopping() -> ActionError {
    ActionError::new(
        ErrorCode::Internal,
        "the relay is shutting down and did not run this action; send it again once the relay is back",
    )
}

/// Hands out a result that was decided without running anything new.
fn finish_refused(relay: &Relay, result: ActionResult, reply: Reply) {
    relay.metrics.finished(&result);
    let written = payload(&result);
    relay
        .events
        .session_all(&result.session_id, vec![result_event(&written)]);
    reply.deliver_written(result, &written);
}

/// A result's line in the session's log and its event, as written once.
fn result_event(written: &Stored) -> Logged {
    Logged {
        direction: Direction::Out,
        kind: RESULT_KIND,
        payload: written.clone(),
    }
}

fn replayed(mut result: ActionResult) -> ActionResult {
    result.replayed = Some(true);
    result
}

/// Runs a session's queue until it is empty.
async fn drain(relay: Arc<Relay>, session_id: String) {
    loop {
        // The tab an action left out is the session's current one as the action starts.
        let next = relay
            .sessions
            .update(&session_id, |s| Some((s.next_job()?, s.current_tab())));
        let Some((Job { mut request, reply }, current)) = next else {
            relay.shutdown.idle.notify_waiters();
            return;
        };
        relay.sessions.waiting.fetch_sub(1, Ordering::Relaxed);
        let untabbed = request.name_current_tab(current).err();
        // A stopping relay starts nothing new; queued actions still end in order.
        let result = if relay.shutdown.phase() >= Phase::Draining {
            request.failed(None, Utc::now(), stopping())
        } else if let Some(error) = untabbed {
            request.failed(None, Utc::now(), error)
        } else {
            crate::core::dispatch::run(&relay, &request, || reply.ack(&request.action_id)).await
        };
        finish(&relay, result, reply, &request.params).await;
    }
}

/// Records a finished action: its outcome for repeats and the store, the session's new
/// status, the log and the subscribers; then the result goes to whoever asked, and to each
/// repeat.
async fn finish(relay: &Relay, result: ActionResult, reply: Reply, params: &serde_json::Value) {
    relay.metrics.finished(&result);
    let stored = payload(&result);
    let ((waiting, changed), kept) = relay.sessions.keep(&result.session_id, |s| {
        s.follow_tab(params, &result);
        let ended = s.finish(&result, stored.clone());
        (ended, s.finished_fact(&result.action_id, &stored))
    });
    kept.wait().await;
    publish_end(relay, &result, &stored, waiting, changed);
    if result.action_name == ActionName::BrowserHandoff.as_str() {
        relay.handoffs.ended(&result.session_id, &result.action_id);
        if let Some(ended) = crate::core::handoff::ended(&result, params) {
            let event = Logged::of(Direction::Internal, &ended);
            relay.events.session_all(&result.session_id, vec![event]);
        }
    }
    reply.deliver_written(result, &stored);
}

/// Tells the log and the subscribers how an action ended (the result as stored, then the
/// session's new state, in one write), and hands the result to the repeats waiting for it.
fn publish_end(relay: &Relay, result: &ActionResult, stored: &Stored, waiting: Vec<Reply>, changed: Changed) {
    let completed = changed
        .as_ref()
        .is_some_and(|s| s.status == SessionStatus::Completed);
    let mut events = vec![result_event(stored)];
    events.extend(crate::core::state::state_events(changed));
    relay.events.session_all(&result.session_id, events);
    if completed {
        relay.events.log().close(&result.session_id);
    }
    for repeat in waiting {
        repeat.deliver(replayed(result.clone()));
    }
}

/// A result a browser kept while its link was down, or one the relay stopped waiting for
/// (docs/protocol.md §13). It ends an action the relay restarted in the middle of, as that
/// action's one result; it replaces the relay's `CLIENT_OFFLINE` or timeout for later repeats;
/// a browser may only speak for the sessions bound to it.
pub fn kept(relay: &Relay, client_id: &str, mut result: ActionResult) {
    // It is the browser's first word on this action to the relay, whatever it says.
    result.replayed = None;
    let session_id = result.session_id.clone();
    if !relay.sessions.is_bound_to(&session_id, client_id) {
        return tracing::warn!(
            client_id,
            session_id,
            "a result for a session not bound to this browser"
        );
    }
    let stored = payload(&result);
    let (fate, kept) = relay.sessions.keep(&session_id, |s| {
        let fate = s.kept(&result, stored.clone());
        let fact = match &fate {
            Kept::Ignored => Fact::none(),
            Kept::Replaced => Fact::action(Action::Kept {
                action_id: result.action_id.clone(),
                result: stored.clone(),
            }),
            Kept::Ended(..) => s.finished_fact(&result.action_id, &stored),
        };
        (fate, fact)
    });
    if let Kept::Ignored = fate {
        return tracing::debug!(action_id = result.action_id, "a result the relay has already");
    }
    // In the store's queue in the session's order, committed with the next batch: this runs
    // on a host link's reader, which does not wait for disks.
    drop(kept);
    match fate {
        Kept::Ended(waiting, changed) => {
            relay.metrics.finished(&result);
            publish_end(relay, &result, &stored, waiting, changed);
        }
        _ => relay
            .events
            .record(&session_id, Direction::In, Message::BrowserActionResult(result)),
    }
}
