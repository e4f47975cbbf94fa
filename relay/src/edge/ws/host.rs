//! What a host sends once joined (docs/protocol.md §2.5): acks and results of the actions the relay
//! sent it, its twin (`full_state_sync`, `tab_event`) and heartbeats. A report the relay cannot
//! read is INVALID_MESSAGE and changes nothing; a result it cannot read still ends its action
//! (INTERNAL), so the orchestrator is not left waiting for a timeout.

use std::time::{Duration, Instant};

use tether_protocol::between_relays::ConfirmAnswer;
use tether_protocol::messages::{
    Ack, ClientSettings, Confirmation, Empty, FromHost, Message, Role, SessionMessage, Unreadable,
    RESULT_KIND,
};
use tether_protocol::twin::TwinReport;
use tether_protocol::ActionResult;
use tether_protocol::{ActionError, Envelope, ErrorCode};

use super::Peer;

use crate::core::host_link::Link;
use crate::core::state::AppState;
use crate::parts::outbox::Outbox;

/// A frame's `id` and `replyTo`.
pub type Ids = (Option<String>, Option<String>);

/// How often a host's frames update when the registry last saw it.
const TOUCH_EVERY: Duration = Duration::from_secs(1);

pub fn handle(
    state: &AppState,
    outbox: &Outbox,
    peer: &mut Peer,
    (id, reply_to): Ids,
    read: Result<FromHost, Unreadable>,
) {
    let (Some(client_id), Some(link)) = (peer.client_id.as_deref(), peer.link.as_ref()) else {
        return;
    };
    // Any frame says the host is alive; the registry hears it once a second at most (under
    // load its lock, taken for every ack and result, was one the runtime's threads queued on).
    if peer.touched.is_none_or(|at| at.elapsed() >= TOUCH_EVERY) {
        state.registry.touch(client_id);
        peer.touched = Some(Instant::now());
    }
    let host = Host {
        state,
        outbox,
        client_id,
        link,
    };
    match read {
        Ok(FromHost::BrowserActionAck(ack)) => host.ack(id, reply_to, ack),
        Ok(FromHost::BrowserActionResult(result)) => host.result(id, reply_to, Ok(result)),
        Err(Unreadable::BadPayload { kind, why, .. }) if kind == RESULT_KIND => {
            host.result(id, reply_to, Err(why))
        }
        Ok(FromHost::FullStateSync(full)) => host.twin(TwinReport::Full(full)),
        Ok(FromHost::TabEvent(event)) => host.twin(TwinReport::Event(event)),
        Ok(FromHost::Heartbeat(_)) if id.is_some() => {
            outbox.reply(id, Message::Heartbeat(Empty {}));
        }
        Ok(FromHost::Heartbeat(_)) => {}
        Ok(FromHost::Join(_)) => {
            outbox.error(id, already_joined());
        }
        Ok(FromHost::ClientSettings(settings)) => host.settings(id, settings),
        Ok(FromHost::UserMessage(words)) => host.user_message(id, words),
        Ok(FromHost::Confirm(confirmation)) => host.confirm(id, confirmation),
        Ok(FromHost::LiveViewFrame(frame)) => super::live_view::frame(state, client_id, frame),
        Err(Unreadable::BadPayload { kind, why, .. }) => {
            let error = ActionError::new(ErrorCode::InvalidMessage, format!("{kind}: {why}"));
            outbox.error(id, error);
        }
        Err(unreadable) => {
            outbox.error(id, unreadable.error(Role::Host));
        }
    }
}

/// A joined host, for the handling of one of its frames.
struct Host<'a> {
    state: &'a AppState,
    outbox: &'a Outbox,
    client_id: &'a str,
    link: &'a Link,
}

impl Host<'_> {
    fn ack(&self, id: Option<String>, reply_to: Option<String>, ack: Ack) {
        let Some(envelope_id) = answering(self.outbox, id, reply_to, "browser_action.ack") else {
            return;
        };
        if !self.link.acked(&envelope_id) {
            pass_on(
                self.state,
                self.client_id,
                envelope_id,
                Message::BrowserActionAck(ack),
            );
        }
    }

    /// A result, or why it could not be read (which still ends its action, `INTERNAL`).
    fn result(&self, id: Option<String>, reply_to: Option<String>, result: Result<ActionResult, String>) {
        let Some(envelope_id) = answering(self.outbox, id, reply_to, RESULT_KIND) else {
            return;
        };
        // A result no action of this link waits for: one another relay of the deployment
        // sent, or one the host kept (§13).
        if let Some(Ok(result)) = self.link.answered(&envelope_id, result) {
            let passed = Message::BrowserActionResult(result.clone());
            if !pass_on(self.state, self.client_id, envelope_id, passed) {
                crate::core::scheduler::kept(self.state, self.client_id, result);
            }
        }
    }

    fn twin(&self, report: TwinReport) {
        let twin = self.state.twins.update(self.client_id, report);
        self.state
            .client_event(self.client_id, Message::TwinStateSync(twin));
    }

    /// The browser's owner asks to approve every action on it, or no longer (§12).
    fn settings(&self, id: Option<String>, settings: ClientSettings) {
        let every = settings.confirm_every_action;
        self.state
            .registry
            .set_confirm_every_action(self.client_id, every);
        if let Some(names) = &settings.secrets {
            self.state
                .registry
                .set_secret_names(self.client_id, names.clone());
        }
        self.state
            .deployment
            .host_settings(self.state, self.client_id, every);
        if id.is_some() {
            self.outbox.reply(id, Message::ClientSettings(settings));
        }
    }

    /// The browser's owner talks to the agents of the sessions bound to it (§12).
    fn user_message(&self, id: Option<String>, words: SessionMessage) {
        let said = if self.state.sessions.is_bound_to(&words.session_id, self.client_id) {
            crate::core::talk::say(self.state, Message::UserMessage(words))
        } else {
            Err(ActionError::new(
                ErrorCode::Forbidden,
                "a browser may only write to the sessions bound to it",
            ))
        };
        match said {
            Ok(receipt) => self.outbox.reply(id, receipt),
            Err(error) => self.outbox.error(id, error),
        };
    }

    /// The browser's owner answers, from the extension, for sessions bound to it (§12).
    fn confirm(&self, id: Option<String>, confirmation: Confirmation) {
        let answer = ConfirmAnswer {
            request_id: confirmation.request_id.clone(),
            approved: confirmation.approved,
            only_session: None,
            only_client: Some(self.client_id.to_owned()),
            refused: "a browser may only answer confirmations of the sessions bound to it".into(),
        };
        let (state, outbox) = (self.state.clone(), self.outbox.clone());
        // The relay waiting for the answer may be another of the deployment.
        tokio::spawn(async move {
            match state.deployment.answer_confirmation(&state, answer).await {
                Ok(_) => outbox.reply(id, Message::Confirmed(confirmation)),
                Err(error) => outbox.error(id, error),
            };
        });
    }
}

/// The envelope id of the action an ack or result answers (its `replyTo`), which it must name.
fn answering(outbox: &Outbox, id: Option<String>, reply_to: Option<String>, kind: &str) -> Option<String> {
    if reply_to.is_none() {
        let error = ActionError::new(
            ErrorCode::InvalidMessage,
            format!("{kind} needs replyTo: the id of the browser_action it answers"),
        );
        outbox.error(id, error);
    }
    reply_to
}

/// Hands a host's ack or result that no action of this link waits for to the relay of the
/// deployment that sent the action (docs/protocol.md §14); false when there is none.
fn pass_on(state: &AppState, client_id: &str, reply_to: String, answer: Message) -> bool {
    let Some(sender) = crate::core::dispatch::sender_of(&reply_to) else {
        return false;
    };
    let envelope = Envelope::of(answer).reply_to(Some(reply_to.clone()));
    state.deployment.pass_answer(state, client_id, sender, envelope)
}

pub fn already_joined() -> ActionError {
    ActionError::new(ErrorCode::InvalidMessage, "this connection has already joined")
}
