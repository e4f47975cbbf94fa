//! The relay envelope `{ v, type, id, replyTo, payload }` (docs/protocol.md §2).
//!
//! The payload is held as the JSON text it came in or was written as: a relay passes most
//! payloads on (to a host, an orchestrator, a log line, a subscriber) without looking inside,
//! and a tree of `Value`s built and written out again at each of those steps was a quarter of
//! its time under load. A message is read from the text once, by its own type.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The protocol version every envelope carries.
pub const PROTOCOL_VERSION: &str = "1";

/// The largest envelope the relay reads by default (its `--max-message-bytes`); hosts keep
/// their results under it. Anything bigger travels as an artifact.
pub const MAX_ENVELOPE_BYTES: usize = 16 << 20;

/// A payload as JSON text, shared by every place it goes.
pub type Payload = Arc<RawValue>;

/// A payload of any plain data.
pub fn payload(value: &impl Serialize) -> Payload {
    // Plain data (string keys only) always serialises; null keeps the type honest.
    serde_json::value::to_raw_value(value).map_or_else(|_| no_payload(), Payload::from)
}

fn no_payload() -> Payload {
    RawValue::NULL.to_owned().into()
}

/// One relay WebSocket frame. Unknown fields are ignored, as the spec asks.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Envelope {
    pub v: String,
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub reply_to: Option<String>,
    #[serde(default = "no_payload")]
    pub payload: Payload,
}

impl Envelope {
    pub fn new(kind: impl Into<String>, payload: Payload) -> Self {
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

    /// The envelope as the text of one frame, written into a buffer that fits it (growing one
    /// from empty copied a result over and again).
    pub fn to_text(&self) -> serde_json::Result<String> {
        let ids = self.id.as_ref().map_or(0, String::len) + self.reply_to.as_ref().map_or(0, String::len);
        let mut text = Vec::with_capacity(self.payload.get().len() + self.kind.len() + ids + 64);
        serde_json::to_writer(&mut text, self)?;
        // serde_json writes UTF-8 only.
        String::from_utf8(text).map_err(|e| serde::ser::Error::custom(e.to_string()))
    }
}
