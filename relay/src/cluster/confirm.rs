//! A person's answer to a confirmation, wherever it reaches the deployment (docs/protocol.md §12,
//! §14): the relay running the action waits for it, but a console or a browser's owner may be
//! connected to any relay. An answer this relay is not waiting for is offered to all the
//! others; only the one waiting replies, after checking the answer's limits itself.

use std::sync::Arc;
use std::time::Duration;

use super::on_each;
use tether_protocol::cluster::{ConfirmAnswer, ConfirmOutcome};
use tether_protocol::ActionError;

use crate::state::Relay;

const SUBJECT: &str = "tether.confirmations";
/// How long an answer waits for the relay that asked; past it, nobody is waiting.
const ASK_TIMEOUT: Duration = Duration::from_secs(2);

/// Applies a person's answer: here if this relay asked, else on the relay that did.
pub async fn answer(relay: &Relay, answer: ConfirmAnswer) -> ConfirmOutcome {
    let here = answer_here(relay, &answer);
    let Some(cluster) = &relay.cluster else {
        return here;
    };
    if here.is_ok() || relay.confirmations.is_waiting(&answer.request_id) {
        return here;
    }
    let Ok(body) = serde_json::to_vec(&answer) else {
        return here;
    };
    match tokio::time::timeout(ASK_TIMEOUT, cluster.client.request(SUBJECT, body.into())).await {
        Ok(Ok(reply)) => serde_json::from_slice::<ConfirmOutcome>(&reply.payload)
            .unwrap_or_else(|e| Err(ActionError::internal(format!("an unreadable answer: {e}")))),
        // No relay waits for it.
        _ => here,
    }
}

fn answer_here(relay: &Relay, answer: &ConfirmAnswer) -> ConfirmOutcome {
    relay.confirmations.answer(
        &answer.request_id,
        answer.approved,
        |session| {
            answer.only_session.as_deref().is_none_or(|only| only == session)
                && answer
                    .only_client
                    .as_deref()
                    .is_none_or(|client| relay.sessions.is_bound_to(session, client))
        },
        &answer.refused,
    )
}

/// Takes the answers other relays were given for the confirmations this relay asked.
pub(super) async fn serve(relay: &Arc<Relay>) -> anyhow::Result<()> {
    on_each(relay, SUBJECT.into(), |relay, message| async move {
        let Ok(answer) = serde_json::from_slice::<ConfirmAnswer>(&message.payload) else {
            return;
        };
        // Only the relay waiting for it replies.
        if !relay.confirmations.is_waiting(&answer.request_id) {
            return;
        }
        let outcome = answer_here(&relay, &answer);
        if let Some(cluster) = &relay.cluster {
            cluster.respond(message.reply, &outcome).await;
        }
    })
    .await
}
