//! Actions and session requests that reach a relay which does not own their session: handed to
//! the owner over NATS, their ack and result handed back. A forwarded action waits here, with
//! the reply it owes its orchestrator, until its result comes; if the owner dies first, it is
//! forwarded again, in order and by its `actionId`, to the session's next owner, so it still
//! ends in exactly one result (a browser that already ran it answers from what it kept).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use tether_protocol::between_relays::{Forwarded, Taken};
use tether_protocol::messages::{Ack, Binding, Message, SessionRef, SessionState};
use tether_protocol::{ActionError, ActionResult, Envelope, ErrorCode};
use tokio::time::Instant;

use super::{on_each, subject, Cluster, Owner};
use crate::core::reply::{RelayedReply, Reply};
use crate::core::request::{Refused, Request};
use crate::core::scheduler;
use crate::core::state::Relay;

/// Actions this relay forwarded and still owes a result, by ticket (so in the order taken).
#[derive(Default)]
pub struct Forwards(Mutex<BTreeMap<u64, Waiting>>);

struct Waiting {
    owner: String,
    forwarded: Forwarded,
    reply: Reply,
}

impl Forwards {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Waiting>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Where the owner sends a forwarded action's ack and result: the relay that took it.
pub struct Answering {
    cluster_subject: String,
    ticket: u64,
    outgoing: super::nats_outbox::NatsOutbox,
}

impl RelayedReply for Answering {
    fn ack(&self, action_id: &str) {
        let ack = Ack {
            action_id: action_id.to_owned(),
        };
        self.send(Message::BrowserActionAck(ack));
    }

    fn deliver(&self, result: ActionResult) {
        self.send(Message::BrowserActionResult(result));
    }
}

impl Answering {
    fn send(&self, message: Message) {
        let envelope = Envelope::of(message).reply_to(Some(self.ticket.to_string()));
        if let Ok(body) = serde_json::to_vec(&envelope) {
            self.outgoing.send(self.cluster_subject.clone(), body.into());
        }
    }
}

/// Takes an orchestrator's action: into this relay's queue when it owns the session, else to
/// the owner.
pub async fn submit(cluster: &Cluster, relay: &Arc<Relay>, parsed: Result<Request, Refused>, reply: Reply) {
    let (Ok(request) | Err((request, _))) = &parsed;
    // A link to NATS that cannot keep up slows the caller (its socket is not read meanwhile,
    // an HTTP caller waits) for as long as the action's own timeout allows.
    let timeout = request.timeout.unwrap_or(relay.settings.action_timeout);
    if let Err(behind) = cluster.outgoing.room(Instant::now() + timeout).await {
        let (Ok(request) | Err((request, _))) = parsed;
        return reply.deliver(request.failed(None, chrono::Utc::now(), link_behind(behind)));
    }
    let session_id = &request.session_id;
    // A session this relay owns takes the request as it is; only one owned elsewhere is
    // written out for the wire.
    if cluster.owner_of(relay, session_id).await.ok() == Some(Owner::This) {
        return run_here(cluster, relay, parsed, reply);
    }
    let (request, refused) = match parsed {
        Ok(request) => (request, None),
        Err((request, error)) => (request, Some(error)),
    };
    let forwarded = Forwarded {
        from: cluster.relay_id.clone(),
        ticket: cluster.ticket(),
        request: request.as_received(),
        refused,
    };
    route(cluster, relay, forwarded, reply).await;
}

/// Runs a forwarded action here if this relay owns its session, else hands it to the owner.
async fn route(cluster: &Cluster, relay: &Arc<Relay>, forwarded: Forwarded, reply: Reply) {
    let session_id = forwarded.request.session_id.clone();
    let mut reply = Some(reply);
    for _ in 0..3 {
        match cluster.owner_of(relay, &session_id).await {
            Ok(Owner::This) => {
                let Some(reply) = reply.take() else { return };
                return run_here(cluster, relay, parsed(&forwarded), reply);
            }
            Ok(Owner::Other(owner)) => {
                let Some(back) = reply.take() else { return };
                match hand_over(cluster, &owner, forwarded.clone(), back).await {
                    Ok(()) => return,
                    Err(NotTaken::NotOwner(back)) => {
                        // Another relay owns it now: look again.
                        cluster.owners.forget_session(&session_id);
                        reply = Some(back);
                    }
                    Err(NotTaken::Silent(back)) => {
                        // A dead owner: look again once its lease has run out, when the
                        // session can be taken.
                        cluster.owners.forget_session(&session_id);
                        cluster.until_gone(&owner).await;
                        reply = Some(back);
                    }
                }
            }
            Err(e) => {
                tracing::warn!(session_id, "cannot find the session's owner: {e}");
                break;
            }
        }
    }
    if let Some(reply) = reply {
        let error = ActionError::internal(
            "the relays of this deployment cannot agree which of them runs this session now; send the action again by its actionId",
        );
        let (request, _) = read(&forwarded);
        reply.deliver(request.failed(None, chrono::Utc::now(), error));
    }
}

/// The forwarded request, and why it was refused if it was.
fn read(forwarded: &Forwarded) -> (Request, Option<ActionError>) {
    (
        Request::from_forwarded(forwarded.request.clone()),
        forwarded.refused.clone(),
    )
}

/// The forwarded request as the scheduler takes it.
#[allow(clippy::result_large_err)] // the scheduler's own `Refused` shape, built here once
fn parsed(forwarded: &Forwarded) -> Result<Request, Refused> {
    match read(forwarded) {
        (request, Some(error)) => Err((request, error)),
        (request, None) => Ok(request),
    }
}

/// Queues a request for a session this relay owns, unless the relay is out of touch.
fn run_here(cluster: &Cluster, relay: &Arc<Relay>, parsed: Result<Request, Refused>, reply: Reply) {
    if !cluster.in_touch() {
        // Another relay may be taking this relay's sessions: it must not run one too.
        let error = ActionError::internal(
            "this relay lost touch with the deployment (NATS) and runs nothing until it is back; send the action to another relay, by its actionId",
        );
        let (Ok(request) | Err((request, _))) = parsed;
        return reply.deliver(request.failed(None, chrono::Utc::now(), error));
    }
    if let Some(behind) = cluster.outgoing.behind() {
        // Taking more would only queue more for a link that cannot keep up (an action another
        // relay forwarded: its own caller is held there).
        let (Ok(request) | Err((request, _))) = parsed;
        return reply.deliver(request.failed(None, chrono::Utc::now(), link_behind(behind)));
    }
    scheduler::submit(relay, parsed, reply);
}

/// The refusal of an action that would wait past its timeout for NATS to take what this relay
/// queued (`behind` bytes).
fn link_behind(behind: usize) -> ActionError {
    ActionError::new(
        ErrorCode::QueueFull,
        format!(
            "this relay's link to the deployment (NATS) is {} MiB behind and did not catch up within the action's timeout; send the action again shortly, by its actionId",
            behind >> 20
        ),
    )
}

/// Why an owner did not take a forwarded action.
enum NotTaken {
    /// It answered that it does not own the session (any more).
    NotOwner(Reply),
    /// It did not answer: it is gone, or going.
    Silent(Reply),
}

/// Gives the action to its owner and keeps its reply until the result comes back; hands the
/// reply back when the owner did not take it.
async fn hand_over(
    cluster: &Cluster,
    owner: &str,
    forwarded: Forwarded,
    reply: Reply,
) -> Result<(), NotTaken> {
    let ticket = forwarded.ticket;
    let body = match serde_json::to_vec(&forwarded) {
        Ok(body) => body,
        Err(_) => return Err(NotTaken::NotOwner(reply)),
    };
    cluster.forwards.lock().insert(
        ticket,
        Waiting {
            owner: owner.to_owned(),
            forwarded,
            reply,
        },
    );
    let asked = cluster
        .client
        .request(subject::relay(owner, "actions"), body.into())
        .await;
    let taken = match &asked {
        Ok(answer) => serde_json::from_slice::<Taken>(&answer.payload)
            .map(|t| t.taken)
            .ok(),
        Err(_) => None,
    };
    if taken == Some(true) {
        return Ok(());
    }
    match cluster.forwards.lock().remove(&ticket) {
        Some(waiting) if taken.is_none() => Err(NotTaken::Silent(waiting.reply)),
        Some(waiting) => Err(NotTaken::NotOwner(waiting.reply)),
        // Its result already came (it cannot, untaken; but never answer twice).
        None => Ok(()),
    }
}

/// A relay of the deployment died: the actions forwarded to it go, in order, to whoever owns
/// their sessions now.
pub(super) async fn owner_gone(cluster: &Cluster, relay: &Arc<Relay>, dead: &str) {
    let orphans: Vec<Waiting> = {
        let mut forwards = cluster.forwards.lock();
        let tickets: Vec<u64> = forwards
            .iter()
            .filter(|(_, w)| w.owner == dead)
            .map(|(ticket, _)| *ticket)
            .collect();
        tickets.iter().filter_map(|t| forwards.remove(t)).collect()
    };
    for waiting in orphans {
        route(cluster, relay, waiting.forwarded, waiting.reply).await;
    }
}

/// Answers what other relays send this one: actions for the sessions it owns, their acks and
/// results coming back for the actions it forwarded, and session requests.
pub(super) async fn serve(cluster: &Cluster, relay: &Arc<Relay>) -> anyhow::Result<()> {
    let me = &cluster.relay_id;
    // One at a time, in order: a session's actions are queued as they were sent.
    on_each(
        cluster,
        relay,
        subject::relay(me, "actions"),
        |cluster, relay, message| async move { take_forwarded(&cluster, &relay, message).await },
    )
    .await?;
    on_each(
        cluster,
        relay,
        subject::relay(me, "answers"),
        |cluster, _, message| async move {
            match serde_json::from_slice::<Envelope>(&message.payload) {
                Ok(envelope) => answered(&cluster, envelope),
                Err(e) => tracing::warn!("an unreadable answer from another relay: {e}"),
            }
        },
    )
    .await?;
    on_each(
        cluster,
        relay,
        subject::relay(me, "sessions"),
        |cluster, relay, message| async move {
            let answer = session_request(&relay, &message.payload).await;
            cluster.respond(message.reply, &answer).await;
        },
    )
    .await
}

async fn take_forwarded(cluster: &Cluster, relay: &Arc<Relay>, message: async_nats::Message) {
    let taken = match serde_json::from_slice::<Forwarded>(&message.payload) {
        Ok(forwarded)
            if cluster.owner_of(relay, &forwarded.request.session_id).await.ok() == Some(Owner::This) =>
        {
            let reply = Reply::Relayed(Box::new(Answering {
                cluster_subject: subject::relay(&forwarded.from, "answers"),
                ticket: forwarded.ticket,
                outgoing: cluster.outgoing.clone(),
            }));
            scheduler::submit(relay, parsed(&forwarded), reply);
            true
        }
        Ok(_) => false,
        Err(e) => {
            tracing::warn!("an unreadable forwarded action: {e}");
            false
        }
    };
    cluster.respond(message.reply, &Taken { taken }).await;
}

fn answered(cluster: &Cluster, envelope: Envelope) {
    let Some(ticket) = envelope.reply_to.as_deref().and_then(|t| t.parse::<u64>().ok()) else {
        return;
    };
    match envelope.message() {
        Ok(Message::BrowserActionAck(ack)) => {
            if let Some(waiting) = cluster.forwards.lock().get(&ticket) {
                waiting.reply.ack(&ack.action_id);
            }
        }
        Ok(Message::BrowserActionResult(result)) => {
            let waiting = cluster.forwards.lock().remove(&ticket);
            if let Some(waiting) = waiting {
                waiting.reply.deliver(result);
            }
        }
        _ => tracing::warn!("another relay answered with something that is no answer"),
    }
}

/// `session.bind` wherever the session is owned.
pub async fn bind(cluster: &Cluster, relay: &Arc<Relay>, binding: Binding) -> Result<Binding, ActionError> {
    match ask_owner(
        relay,
        cluster,
        &binding.session_id.clone(),
        Message::SessionBind(binding),
    )
    .await?
    {
        Message::SessionBound(bound) => Ok(bound),
        other => Err(ActionError::internal(format!(
            "the session's owner answered {}",
            other.kind()
        ))),
    }
}

/// `session.get` wherever the session is owned.
pub async fn session_state(
    cluster: &Cluster,
    relay: &Arc<Relay>,
    session_id: &str,
) -> Result<SessionState, ActionError> {
    let get = Message::SessionGet(SessionRef {
        session_id: Some(session_id.to_owned()),
    });
    match ask_owner(relay, cluster, session_id, get).await? {
        Message::SessionState(state) => Ok(state),
        other => Err(ActionError::internal(format!(
            "the session's owner answered {}",
            other.kind()
        ))),
    }
}

async fn ask_owner(
    relay: &Arc<Relay>,
    cluster: &Cluster,
    session_id: &str,
    question: Message,
) -> Result<Message, ActionError> {
    let owner = cluster
        .owner_of(relay, session_id)
        .await
        .map_err(|e| ActionError::internal(format!("cannot find who runs session {session_id}: {e}")))?;
    let Owner::Other(owner) = owner else {
        return answer_here(relay, question).await;
    };
    let body =
        serde_json::to_vec(&Envelope::of(question)).map_err(|e| ActionError::internal(e.to_string()))?;
    let answer = cluster
        .client
        .request(subject::relay(&owner, "sessions"), body.into())
        .await
        .map_err(|e| {
            ActionError::internal(format!(
                "the relay running session {session_id} did not answer: {e}"
            ))
        })?;
    let envelope: Envelope =
        serde_json::from_slice(&answer.payload).map_err(|e| ActionError::internal(e.to_string()))?;
    match envelope.message() {
        Ok(Message::Error(error)) => Err(error),
        Ok(message) => Ok(message),
        Err(e) => Err(ActionError::internal(format!("an unreadable answer: {e:?}"))),
    }
}

async fn session_request(relay: &Arc<Relay>, body: &[u8]) -> Envelope {
    let question = serde_json::from_slice::<Envelope>(body).map(|e| e.message());
    let answer = match question {
        Ok(Ok(question)) => answer_here(relay, question).await,
        _ => Err(ActionError::internal(
            "an unreadable session request from another relay",
        )),
    };
    match answer {
        Ok(message) => Envelope::of(message),
        Err(error) => Envelope::of(Message::Error(error)),
    }
}

async fn answer_here(relay: &Arc<Relay>, question: Message) -> Result<Message, ActionError> {
    match question {
        Message::SessionBind(binding) => relay
            .bind(&binding.session_id, &binding.client_id)
            .await
            .map(Message::SessionBound),
        Message::SessionGet(SessionRef { session_id }) => Ok(Message::SessionState(
            relay.sessions.state(session_id.as_deref().unwrap_or_default()),
        )),
        other => Err(ActionError::internal(format!(
            "{} is not asked of an owner",
            other.kind()
        ))),
    }
}
