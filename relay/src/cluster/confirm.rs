//! A person's answer to a confirmation, wherever it reaches the deployment (docs/protocol.md §12,
//! §14): the relay running the action waits for it, but a console or a browser's owner may be
//! connected to any relay. An answer this relay is not waiting for is offered to all the
//! others; only the one waiting replies, after checking the answer's limits itself.

use std::sync::Arc;
use std::time::Duration;

use super::{on_each, Cluster};
use tether_protocol::between_relays::{ConfirmAnswer, ConfirmOutcome};
use tether_protocol::ActionError;

use crate::core::state::Relay;

const SUBJECT: &str = "tether.confirmations";
/// How long an answer waits for the relay that asked; past it, nobody is waiting.
const ASK_TIMEOUT: Duration = Duration::from_secs(2);

/// Applies a person's answer: here if this relay asked, else on the relay that did.
pub async fn answer(cluster: &Cluster, relay: &Relay, answer: ConfirmAnswer) -> ConfirmOutcome {
    let here = relay.answer_confirmation(&answer);
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

/// Takes the answers other relays were given for the confirmations this relay asked.
pub(super) async fn serve(cluster: &Cluster, relay: &Arc<Relay>) -> anyhow::Result<()> {
    on_each(
        cluster,
        relay,
        SUBJECT.into(),
        |cluster, relay, message| async move {
            let Ok(answer) = serde_json::from_slice::<ConfirmAnswer>(&message.payload) else {
                return;
            };
            // Only the relay waiting for it replies.
            if !relay.confirmations.is_waiting(&answer.request_id) {
                return;
            }
            let outcome = relay.answer_confirmation(&answer);
            cluster.respond(message.reply, &outcome).await;
        },
    )
    .await
}
