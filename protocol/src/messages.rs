//! Every message of the relay protocol (docs/protocol.md §2), typed once: the `type` on the wire,
//! the payload's type, and which roles may send it to the relay. The table at the bottom is
//! the only place a message type is named; it generates [`Message`] (a serde-tagged enum,
//! `{ "type", "payload" }`) and [`senders`].
//!
//! A frame is read in two steps ([`Envelope::read`]): is the type known and may this peer send
//! it (INVALID_MESSAGE, FORBIDDEN), then does the payload have its type's shape (INVALID_PARAMS,
//! naming the field).

use std::num::NonZeroU64;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::descriptors::ActionDescriptor;
use crate::envelope::{Envelope, Payload};
use crate::twin::{FullState, TabEvent, TwinSync};
use crate::{ActionError, ActionResult, ErrorCode};

/// The role a peer joins the relay as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The agent server: dispatches actions, binds sessions, reads everything.
    Orchestrator,
    /// A browser: runs the actions and reports its twin.
    Host,
    /// A person's web UI: reads, binds, answers confirmations; never dispatches.
    Observer,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Orchestrator => "orchestrator",
            Self::Host => "host",
            Self::Observer => "observer",
        }
    }

    fn with_article(self) -> &'static str {
        match self {
            Self::Orchestrator => "an orchestrator",
            Self::Host => "a host",
            Self::Observer => "an observer",
        }
    }
}

/// A payload with nothing in it: `{}`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Empty {}

/// `relay.join`: the first frame of every peer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Join {
    pub role: Role,
    /// Absent when the token came on the upgrade request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// A host's stable id (1 to 256 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// A host's description of itself (§2.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<HostMeta>,
    /// A host joining with its browser's own token replaces a connection that holds its
    /// clientId (a reconnect) unless this is `false`: a host that was itself replaced joins so,
    /// and is refused (`FORBIDDEN`, `alreadyConnected`) while the other holds the place (§15).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replace: Option<bool>,
}

/// A host's description of itself in `relay.join` (§2.1), shown as it is in the extension
/// list. Every field may be absent; fields beyond these are kept as they came.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostMeta {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub browser_version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_version: Option<String>,
    /// `"extension"` or `"worker"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// The catalog actions the host runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<Vec<String>>,
    /// The names of the secrets the host holds for agents (§18), never their values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secrets: Option<Vec<String>>,
    #[serde(flatten)]
    pub more: serde_json::Map<String, Value>,
}

/// `relay.joined`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Joined {
    pub role: Role,
    pub connection_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// To a host: the origins the relay is reached at (its listener, its public URLs), which
    /// the host refuses as targets under every spelling (§15).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub relay_origins: Vec<String>,
}

/// `browser_action`, from an orchestrator and as the relay forwards it to the host (with the
/// chosen `clientId`, the `actionId` and the time left).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionRequest {
    pub session_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The idempotency key; the relay assigns one when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action_id: Option<String>,
    pub action_name: String,
    #[serde(default = "empty_object")]
    pub params: Value,
    /// Bounds the whole action (the relay's default when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<NonZeroU64>,
    /// Set by the relay (only) on the `browser_snapshot` it takes for a person's look at the
    /// session (`GET /api/sessions/{id}/screen.md`): the host runs it without keeping it as the
    /// session's previous snapshot, so the session's next `recent` is unchanged by the look.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub peek: bool,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

/// `browser_action.ack`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Ack {
    pub action_id: String,
}

/// `session.bind` and `session.bound`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Binding {
    pub session_id: String,
    pub client_id: String,
}

/// A message about one browser: `twin.get`, `client.online`, `client.offline`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientRef {
    pub client_id: String,
}

/// A message about one session: `session.get` (an observer's names its own, or none).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionRef {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
}

/// `subscribe`: a session's events (after `from` in its log), a browser's, or all of them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Subscribe {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<u64>,
}

/// `subscribed`: what the subscription follows (`null`: everything).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Subscribed {
    pub session_id: Option<String>,
    pub client_id: Option<String>,
}

/// `browser_task.confirm` and `browser_task.confirmed`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Confirmation {
    pub request_id: String,
    pub approved: bool,
}

/// `browser_task.confirmation_requested`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfirmationRequest {
    pub request_id: String,
    pub session_id: String,
    pub action_name: String,
    pub action_id: String,
    /// One line a person can decide on.
    pub summary: String,
}

/// `client.settings`: what the browser's owner asks of the relay for this browser (§12).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientSettings {
    /// Every action on this browser waits for a person's approval, whatever `--confirm` says;
    /// the request also goes to this browser, for its owner to answer.
    #[serde(default)]
    pub confirm_every_action: bool,
    /// The names of the secrets the owner holds for agents (§18), never their values: the
    /// relay's MCP tools name them as the host's own do.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secrets: Option<Vec<String>>,
}

/// The most characters an `agent.message` or `user.message` carries.
pub const MAX_MESSAGE_CHARS: usize = 4_000;

/// `agent.message` (what the agent tells the person) and `user.message` (what the person
/// answers): words beside a session's actions (docs/protocol.md §12).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionMessage {
    pub session_id: String,
    pub text: String,
}

/// `progress`: an action that waits says it still does, at least once a second (seed 003).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    pub action_id: String,
    pub session_id: String,
    pub message: String,
    /// 0-100, where the action knows how far it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<u8>,
}

/// `action.started`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionStarted {
    pub action_id: String,
    pub action_name: String,
    pub session_id: String,
    pub client_id: String,
    pub started_at: String,
}

/// A session's status (docs/protocol.md §2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionStatus {
    Created,
    Running,
    WaitingForBrowserSelection,
    WaitingForUserConfirmation,
    /// A person was handed the tab (`browser_handoff`) and the session waits for them.
    WaitingForUser,
    Ongoing,
    Completed,
    Error,
}

/// `session.state`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionState {
    pub session_id: String,
    pub status: SessionStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// The actionId running now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_flight: Option<String>,
    /// Actions waiting behind it.
    pub queued: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<ActionError>,
}

/// `stream_end`: the session completed; its event stream ends here.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StreamEnd {
    pub session_id: String,
    pub reason: String,
}

/// One row of `extension.list.result`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientSummary {
    pub client_id: String,
    pub online: bool,
    pub meta: Value,
    /// RFC 3339 with milliseconds.
    pub last_seen: String,
    /// The sessions bound to this browser, sorted.
    pub sessions: Vec<String>,
    /// Another host tried to take this browser's clientId while it was held (§15): two hosts
    /// run under one clientId.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contested: Option<Contested>,
}

/// Joins refused or replaced because another connection held the clientId.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Contested {
    /// How many times, since the relay started.
    pub joins: u64,
    /// The latest, RFC 3339 with milliseconds.
    pub last_at: String,
}

/// `extension.list.result`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientList {
    pub clients: Vec<ClientSummary>,
}

/// `catalog`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    pub actions: Vec<ActionDescriptor>,
}

/// Why a frame is not a message its sender may send.
#[derive(Debug, Clone, PartialEq)]
pub enum Unreadable {
    /// No message has this type.
    UnknownType(String),
    /// The message is another role's.
    NotYours { kind: String, senders: &'static [Role] },
    /// The type is known, the payload does not have its shape; the payload comes back, for
    /// messages whose errors are answered in their own shape (`browser_action`).
    BadPayload {
        kind: String,
        why: String,
        payload: Value,
    },
}

impl Unreadable {
    /// The error a peer is answered with.
    pub fn error(&self, role: Role) -> ActionError {
        match self {
            Self::UnknownType(kind) => ActionError::new(
                ErrorCode::InvalidMessage,
                format!("unknown message type {kind:?}"),
            ),
            Self::NotYours { kind, senders } => {
                let by: Vec<&str> = senders.iter().map(|r| r.with_article()).collect();
                let by = if by.is_empty() {
                    "the relay".to_owned()
                } else {
                    by.join(" or ")
                };
                ActionError::new(
                    ErrorCode::Forbidden,
                    format!(
                        "{kind} is sent by {by}; this connection joined as {}",
                        role.as_str()
                    ),
                )
            }
            Self::BadPayload { kind, why, .. } => {
                ActionError::new(ErrorCode::InvalidParams, format!("{kind}: {why}"))
            }
        }
    }
}

impl Envelope {
    /// Wraps a message in a frame.
    pub fn of(message: Message) -> Self {
        let (kind, payload) = message.split();
        Envelope::new(kind, payload)
    }

    /// The frame's message, if a peer of `role` may send it.
    pub fn read(self, role: Role) -> Result<Message, Unreadable> {
        let senders = senders(&self.kind).ok_or_else(|| Unreadable::UnknownType(self.kind.clone()))?;
        if !senders.contains(&role) {
            return Err(Unreadable::NotYours {
                kind: self.kind,
                senders,
            });
        }
        self.message()
    }

    /// The frame's message, if a host may send it.
    pub fn read_from_host(self) -> Result<FromHost, Unreadable> {
        let message = self.read(Role::Host)?;
        let kind = message.kind();
        message
            .from_host()
            .ok_or_else(|| Unreadable::UnknownType(kind.into()))
    }

    /// The frame's message, if a peer of `role` (an orchestrator or an observer) may send it.
    pub fn read_from_client(self, role: Role) -> Result<FromClient, Unreadable> {
        let message = self.read(role)?;
        let kind = message.kind();
        message
            .from_client()
            .ok_or_else(|| Unreadable::UnknownType(kind.into()))
    }

    /// The frame's message, whoever sent it (for peers that trust the relay).
    pub fn message(self) -> Result<Message, Unreadable> {
        // A missing or null payload is an empty one.
        let text = match self.payload.get() {
            "null" => "{}",
            text => text,
        };
        match Message::read(&self.kind, text) {
            None => Err(Unreadable::UnknownType(self.kind)),
            Some(Ok(message)) => Ok(message),
            Some(Err(why)) => Err(Unreadable::BadPayload {
                payload: serde_json::from_str(text).unwrap_or(Value::Null),
                kind: self.kind,
                why,
            }),
        }
    }
}

/// The type of an action's result, for its payload passed on as written (a relay keeps the
/// text it stored rather than writing the result out again).
pub const RESULT_KIND: &str = "browser_action.result";

macro_rules! messages {
    ($($(#[$doc:meta])* $wire:literal => $variant:ident($payload:ty) from [$($role:ident),*];)+) => {
        /// A relay-protocol message: its type and its payload.
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
        #[serde(tag = "type", content = "payload")]
        pub enum Message {
            $($(#[$doc])* #[serde(rename = $wire)] $variant($payload),)+
        }

        impl Message {
            /// The `type` on the wire.
            pub fn kind(&self) -> &'static str {
                match self {
                    $(Self::$variant(_) => $wire,)+
                }
            }

            /// The type on the wire and the payload.
            pub fn split(&self) -> (&'static str, Payload) {
                let payload = match self {
                    $(Self::$variant(payload) => crate::envelope::payload(payload),)+
                };
                (self.kind(), payload)
            }

            fn read(kind: &str, payload: &str) -> Option<Result<Self, String>> {
                match kind {
                    $($wire => Some(crate::read::from_text(payload).map(Self::$variant)),)+
                    _ => None,
                }
            }
        }

        /// Who may send a message of this type to the relay (none: only the relay sends it);
        /// `None` for a type no message has.
        pub fn senders(kind: &str) -> Option<&'static [Role]> {
            match kind {
                $($wire => Some(&[$(Role::$role),*]),)+
                _ => None,
            }
        }

        by_sender!(@next [] [] $($variant($payload) [$($role),*];)+);
    };
}

/// Sorts the table's rows by who sends them: [`FromHost`] holds the messages a host may send,
/// [`FromClient`] those an orchestrator or an observer may, so each handler's match is
/// checked by the compiler against the table. One row at a time: `@host` then `@client` walk
/// its senders and add it to their enum.
macro_rules! by_sender {
    (@next [$($h:ident($hp:ty);)*] [$($c:ident($cp:ty);)*]) => {
        /// A message a host may send to the relay.
        #[derive(Debug)]
        pub enum FromHost {
            $($h($hp),)*
        }

        /// A message an orchestrator or an observer may send to the relay (which of the two
        /// may send it is `senders`').
        #[derive(Debug)]
        pub enum FromClient {
            $($c($cp),)*
        }

        impl Message {
            /// The message as a host's, if a host may send it.
            pub fn from_host(self) -> Option<FromHost> {
                match self {
                    $(Self::$h(payload) => Some(FromHost::$h(payload)),)*
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }

            /// The message as an orchestrator's or an observer's, if either may send it.
            pub fn from_client(self) -> Option<FromClient> {
                match self {
                    $(Self::$c(payload) => Some(FromClient::$c(payload)),)*
                    #[allow(unreachable_patterns)]
                    _ => None,
                }
            }
        }
    };
    (@next $h:tt $c:tt $v:ident($p:ty) $roles:tt; $($rest:tt)*) => {
        by_sender!(@host $roles $h $c $v($p) $roles; $($rest)*);
    };
    (@host [Host $(, $x:ident)*] [$($h:tt)*] $c:tt $v:ident($p:ty) $roles:tt; $($rest:tt)*) => {
        by_sender!(@client $roles [$($h)* $v($p);] $c $v($p); $($rest)*);
    };
    (@host [$first:ident $(, $x:ident)*] $h:tt $c:tt $v:ident($p:ty) $roles:tt; $($rest:tt)*) => {
        by_sender!(@host [$($x),*] $h $c $v($p) $roles; $($rest)*);
    };
    (@host [] $h:tt $c:tt $v:ident($p:ty) $roles:tt; $($rest:tt)*) => {
        by_sender!(@client $roles $h $c $v($p); $($rest)*);
    };
    (@client [Orchestrator $(, $x:ident)*] $h:tt [$($c:tt)*] $v:ident($p:ty); $($rest:tt)*) => {
        by_sender!(@next $h [$($c)* $v($p);] $($rest)*);
    };
    (@client [Observer $(, $x:ident)*] $h:tt [$($c:tt)*] $v:ident($p:ty); $($rest:tt)*) => {
        by_sender!(@next $h [$($c)* $v($p);] $($rest)*);
    };
    (@client [$first:ident $(, $x:ident)*] $h:tt $c:tt $v:ident($p:ty); $($rest:tt)*) => {
        by_sender!(@client [$($x),*] $h $c $v($p); $($rest)*);
    };
    (@client [] $h:tt $c:tt $v:ident($p:ty); $($rest:tt)*) => {
        by_sender!(@next $h $c $($rest)*);
    };
}

pub use crate::person::{
    HandedBack, HandoffAnswer, HandoffEnded, HandoffInput, HandoffOutcome, HandoffRequested, LiveFrame,
    LiveView,
};

messages! {
    "relay.join" => Join(Join) from [Orchestrator, Host, Observer];
    "relay.joined" => Joined(Joined) from [];
    /// An error answer: `{ code, message, details? }`.
    "error" => Error(ActionError) from [];
    "heartbeat" => Heartbeat(Empty) from [Orchestrator, Host, Observer];
    "extension.list" => ExtensionList(Empty) from [Orchestrator, Observer];
    "extension.list.result" => ExtensionListResult(ClientList) from [];
    "session.bind" => SessionBind(Binding) from [Orchestrator, Observer];
    "session.bound" => SessionBound(Binding) from [];
    "session.get" => SessionGet(SessionRef) from [Orchestrator, Observer];
    "session.state" => SessionState(SessionState) from [];
    "browser_action" => BrowserAction(ActionRequest) from [Orchestrator];
    "browser_action.ack" => BrowserActionAck(Ack) from [Host];
    "browser_action.result" => BrowserActionResult(ActionResult) from [Host];
    "action.started" => ActionStarted(ActionStarted) from [];
    "catalog.get" => CatalogGet(Empty) from [Orchestrator, Observer];
    "catalog" => Catalog(Catalog) from [];
    "twin.get" => TwinGet(ClientRef) from [Orchestrator, Observer];
    "twin_state_sync" => TwinStateSync(TwinSync) from [];
    "full_state_sync" => FullStateSync(FullState) from [Host];
    "tab_event" => TabEvent(TabEvent) from [Host];
    "subscribe" => Subscribe(Subscribe) from [Orchestrator, Observer];
    "subscribed" => Subscribed(Subscribed) from [];
    "browser_task.confirm" => Confirm(Confirmation) from [Orchestrator, Observer, Host];
    "browser_task.confirmed" => Confirmed(Confirmation) from [];
    "browser_task.confirmation_requested" => ConfirmationRequested(ConfirmationRequest) from [];
    "handoff.answer" => HandoffAnswer(HandoffAnswer) from [Orchestrator, Observer];
    "handoff.requested" => HandoffRequested(HandoffRequested) from [];
    "handoff.ended" => HandoffEnded(HandoffEnded) from [];
    "handoff.input" => HandoffInput(HandoffInput) from [Orchestrator, Observer];
    "live_view.start" => LiveViewStart(LiveView) from [Orchestrator, Observer];
    "live_view.stop" => LiveViewStop(LiveView) from [Orchestrator, Observer];
    "live_view.frame" => LiveViewFrame(LiveFrame) from [Host];
    "agent.message" => AgentMessage(SessionMessage) from [Orchestrator];
    "user.message" => UserMessage(SessionMessage) from [Observer, Host];
    "progress" => Progress(Progress) from [];
    "client.settings" => ClientSettings(ClientSettings) from [Host];
    "client.online" => ClientOnline(ClientRef) from [];
    "client.offline" => ClientOffline(ClientRef) from [];
    "stream_end" => StreamEnd(StreamEnd) from [];
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn frame(kind: &str, payload: Value) -> Envelope {
        Envelope::new(kind, crate::envelope::payload(&payload))
    }

    #[test]
    fn each_role_sends_only_its_own_messages() {
        let bind = || frame("session.bind", json!({ "sessionId": "s", "clientId": "c" }));
        assert!(bind().read(Role::Orchestrator).is_ok());
        assert!(bind().read(Role::Observer).is_ok());
        let refused = bind().read(Role::Host).unwrap_err();
        assert!(matches!(refused, Unreadable::NotYours { .. }));
        let error = refused.error(Role::Host);
        assert_eq!(error.code, ErrorCode::Forbidden);
        assert!(
            error.message.contains("sent by an orchestrator or an observer"),
            "{}",
            error.message
        );
        let act = || {
            frame(
                "browser_action",
                json!({ "sessionId": "s", "actionName": "browser_tabs" }),
            )
        };
        for role in [Role::Host, Role::Observer] {
            let error = act().read(role).unwrap_err().error(role);
            assert_eq!(error.code, ErrorCode::Forbidden, "{role:?}");
        }
        let joined = frame("relay.joined", json!({ "role": "host", "connectionId": "x" }));
        assert!(joined
            .read(Role::Host)
            .unwrap_err()
            .error(Role::Host)
            .message
            .contains("sent by the relay"));
        let tab = frame("tab_event", json!({ "event": "removed", "tabId": 1 }));
        assert!(matches!(tab.read(Role::Host), Ok(Message::TabEvent(_))));
    }

    #[test]
    fn unknown_types_and_bad_payloads_are_told_apart() {
        let unknown = frame("no.such.thing", json!({}))
            .read(Role::Orchestrator)
            .unwrap_err();
        assert_eq!(unknown.error(Role::Orchestrator).code, ErrorCode::InvalidMessage);
        let bad = frame(
            "browser_action",
            json!({ "sessionId": "s", "actionName": "x", "timeoutMs": -5 }),
        )
        .read(Role::Orchestrator)
        .unwrap_err();
        let error = bad.error(Role::Orchestrator);
        assert_eq!(error.code, ErrorCode::InvalidParams);
        assert!(
            error.message.starts_with("browser_action: timeoutMs: "),
            "{}",
            error.message
        );
        let Unreadable::BadPayload { payload, .. } = bad else {
            panic!()
        };
        assert_eq!(payload["sessionId"], "s", "the payload comes back");
    }

    #[test]
    fn the_result_kind_is_the_results_type() {
        let result = ActionResult::unsent("s", "browser_tabs", ActionError::internal("x"));
        assert_eq!(Message::BrowserActionResult(result).kind(), RESULT_KIND);
    }

    #[test]
    fn a_missing_payload_is_an_empty_one() {
        let mut list = frame("extension.list", Value::Null);
        assert_eq!(
            list.clone().read(Role::Orchestrator),
            Ok(Message::ExtensionList(Empty {}))
        );
        list.payload = crate::envelope::payload(&json!({ "ignored": true }));
        assert!(
            list.read(Role::Orchestrator).is_ok(),
            "unknown fields are ignored"
        );
    }

    #[test]
    fn frames_round_trip_in_the_spec_shape() {
        let ack = Envelope::of(Message::BrowserActionAck(Ack {
            action_id: "a1".into(),
        }))
        .reply_to(Some("r".into()));
        let text = serde_json::to_string(&ack).unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap(),
            json!({ "v": "1", "type": "browser_action.ack", "id": null, "replyTo": "r", "payload": { "actionId": "a1" } })
        );
        let back: Envelope = serde_json::from_str(&text).unwrap();
        assert_eq!(
            back.message(),
            Ok(Message::BrowserActionAck(Ack {
                action_id: "a1".into()
            }))
        );
    }
}
