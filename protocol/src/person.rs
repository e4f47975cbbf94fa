//! What passes between a person and a session's browser (docs/protocol.md §18): handoffs (an
//! agent asks the person to act in a tab, and waits for Done or Decline) and the live view (a
//! tab's screencast for a person to watch, and, during a handoff, their clicks, wheel and keys
//! in it).

use serde::{Deserialize, Serialize};

use crate::actions::TabId;

/// How a person ends a handoff (`browser_handoff`, docs/protocol.md §18).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HandedBack {
    /// Done: the agent may go on.
    Done,
    /// Decline: the action ends with USER_DENIED.
    Declined,
}

/// `handoff.answer`: a person ends a session's handoff (from the console to the relay, and
/// from the relay to the host running it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandoffAnswer {
    pub session_id: String,
    pub action_id: String,
    pub outcome: HandedBack,
    /// What the person wrote beside Done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `handoff.requested`: a session waits for a person to act in its tab.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandoffRequested {
    pub session_id: String,
    pub tab_id: TabId,
    pub action_id: String,
    pub message: String,
}

/// How a handoff ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HandoffOutcome {
    Done,
    Declined,
    Timeout,
}

/// `handoff.ended`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandoffEnded {
    pub session_id: String,
    pub tab_id: TabId,
    pub action_id: String,
    pub outcome: HandoffOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// `live_view.start` and `live_view.stop`: a person starts or stops watching a session's current
/// tab. From the console the relay fills in `tabId` for the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LiveView {
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab_id: Option<TabId>,
}

/// `live_view.frame`: one frame of a watched tab, as the browser painted it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LiveFrame {
    pub session_id: String,
    pub tab_id: TabId,
    /// A JPEG, in base64.
    pub data: String,
    /// The page's viewport the frame shows, in CSS pixels: where a person's input lands.
    pub width: f64,
    pub height: f64,
}

/// `handoff.input`: a person's input in the live view of a tab handed to them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HandoffInput {
    pub session_id: String,
    /// The running handoff's action: input outside a handoff is refused.
    pub action_id: String,
    pub input: PersonInput,
}

/// A mouse press, release or move, a wheel turn, or a key, at the page's CSS pixels.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", rename_all_fields = "camelCase")]
pub enum PersonInput {
    Mouse {
        action: Press,
        x: f64,
        y: f64,
        #[serde(default)]
        button: PersonButton,
    },
    Wheel {
        x: f64,
        y: f64,
        delta_x: f64,
        delta_y: f64,
    },
    Key {
        action: Press,
        /// As `KeyboardEvent.key` says it ("a", "Enter").
        key: String,
        /// As `KeyboardEvent.code` says it ("KeyA").
        #[serde(default)]
        code: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Press {
    Down,
    Up,
    /// For the mouse only: it moved.
    Move,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PersonButton {
    #[default]
    Left,
    Middle,
    Right,
}
