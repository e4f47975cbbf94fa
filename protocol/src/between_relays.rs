//! What the relays of one deployment tell each other through NATS (docs/protocol.md §14). Actions,
//! acks, results and events cross between relays as the envelopes of §2, unchanged; these are
//! the few things only relays say: a host's entry in the deployment's directory, and an action
//! handed to the relay that owns its session.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::ActionError;
use crate::messages::ActionRequest;

/// A browser as the deployment's directory (the `tether-clients` bucket) knows it: which relay
/// holds its link, and what `extension.list` says of it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientEntry {
    pub client_id: String,
    /// The relay holding the host's link (or that last held it).
    pub relay_id: String,
    pub connection_id: String,
    pub online: bool,
    #[serde(default)]
    pub meta: Value,
    /// RFC 3339 with milliseconds.
    pub last_seen: String,
    /// The browser's owner approves each action on it (`client.settings`, §12).
    #[serde(default)]
    pub confirm_every_action: bool,
}

/// A `browser_action` a relay accepted from an orchestrator and hands to the relay that owns
/// its session, which answers with `browser_action.ack` and `browser_action.result` envelopes
/// whose `replyTo` is `ticket`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Forwarded {
    /// The relay that accepted it, where the ack and result go.
    pub from: String,
    pub ticket: u64,
    /// The request, with the `actionId` the accepting relay gave it if it had none.
    pub request: ActionRequest,
    /// Why the accepting relay already refused it (bad params): the owner logs it and answers
    /// it with this error, as it would its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<ActionError>,
}

/// Whether the owner took a [`Forwarded`] action into its session's queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Taken {
    /// False: this relay does not own the session (any more); ask the directory again.
    pub taken: bool,
}

/// A session event the relay owning the session logged, as the other relays of the
/// deployment receive it (their subscribers see it with the same `eventIndex`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionEvent {
    pub session_id: String,
    pub event_index: u64,
    #[serde(rename = "type")]
    pub kind: String,
    pub payload: crate::envelope::Payload,
    /// Unix milliseconds.
    pub timestamp: i64,
    /// A browser's event copied into the session's log.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub copy: bool,
}

/// A relay asks the owner of a session for its logged events after `after`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LogRequest {
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<u64>,
}

/// A person's answer to a confirmation (`browser_task.confirm`) that reached a relay which is
/// not waiting for it: every relay is asked, and the one waiting applies it, with the same
/// limits as for its own peers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfirmAnswer {
    pub request_id: String,
    pub approved: bool,
    /// The answer counts only for this session (an observer held to it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only_session: Option<String>,
    /// The answer counts only for sessions bound to this browser (its owner answered).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub only_client: Option<String>,
    /// Why an answer outside those limits is refused.
    pub refused: String,
}

/// What the relay waiting for a confirmation made of an answer.
pub type ConfirmOutcome = Result<String, ActionError>;
