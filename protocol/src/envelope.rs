//! The relay envelope `{ v, type, id, replyTo, payload }` (PROTOCOL.md §2).

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The protocol version every envelope carries.
pub const PROTOCOL_VERSION: &str = "1";

/// The largest envelope the relay reads by default (its `--max-message-bytes`); hosts keep
/// their results under it. Anything bigger travels as an artifact.
pub const MAX_ENVELOPE_BYTES: usize = 16 << 20;

/// One relay WebSocket frame. Unknown fields are ignored, as the spec asks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Envelope {
    pub v: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub reply_to: Option<String>,
    #[serde(default)]
    pub payload: Value,
}

impl Envelope {
    pub fn new(kind: impl Into<String>, payload: Value) -> Self {
        Self {
            v: PROTOCOL_VERSION.to_owned(),
            kind: kind.into(),
            id: None,
            reply_to: None,
            payload,
        }
    }

    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    pub fn reply_to(mut self, id: Option<String>) -> Self {
        self.reply_to = id;
        self
    }
}
