//! The messages between the extension and `tether-host` over native messaging (framing:
//! [`crate::framing`]), typed once; `extension/src/service_worker.js` writes the same JSON
//! (see extension/README.md).
//!
//! The host drives the browser with `call`s, a small RPC whose methods mirror the `chrome.*`
//! APIs the extension runs them with (`tabs.create`, `tabs.close`, `debugger.attach`,
//! `debugger.detach`, `debugger.send`, `twin.sync`); each is answered by a `reply` with its id.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::actions::TabId;
use crate::messages::{ConfirmationRequest, SessionMessage};
use crate::twin::{FullState, TabEvent};

/// What the extension sends the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all_fields = "camelCase")]
pub enum FromExtension {
    /// First, once the port is open: names the browser.
    #[serde(rename = "hello")]
    Hello {
        #[serde(default)]
        extension_version: String,
        #[serde(default)]
        user_agent: String,
    },
    /// What the browser's owner set in the extension; sent after `hello` and on each change.
    #[serde(rename = "settings")]
    Settings {
        /// May agents run their own JavaScript in pages (`browser_evaluate`)? Off unless set.
        #[serde(default)]
        allow_evaluate: bool,
        /// May agents save and load this browser's cookies and storage
        /// (`browser_storage_state`)? Off unless set.
        #[serde(default)]
        allow_storage_state: bool,
        /// Sites no action may touch (Chrome match patterns): `FORBIDDEN_TARGET`.
        #[serde(default)]
        blocked_sites: Vec<String>,
        /// Ask the owner before every action on this browser, whatever the relay's `--confirm`.
        #[serde(default)]
        confirm_every_action: bool,
        /// The owner's secrets for agents (the options page): for this host alone, never sent
        /// on to the relay.
        #[serde(default)]
        secrets: Vec<OwnerSecret>,
    },
    /// The owner's answer to a confirmation request, given in the popup.
    #[serde(rename = "confirm")]
    Confirm { request_id: String, approved: bool },
    /// The owner's Done or Decline on a handoff, given in the popup.
    #[serde(rename = "handoff.answer")]
    HandoffAnswer {
        session_id: String,
        action_id: String,
        outcome: crate::messages::HandedBack,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// What the owner tells the agent of a session on this browser.
    #[serde(rename = "user.message")]
    UserMessage { session_id: String, text: String },
    #[serde(rename = "full_state_sync")]
    FullStateSync { payload: FullState },
    #[serde(rename = "tab_event")]
    TabEvent { payload: TabEvent },
    /// The answer to a `call`: its result, or the error `chrome.*` gave.
    #[serde(rename = "reply")]
    Reply {
        id: u64,
        #[serde(default)]
        result: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    },
    /// A CDP event of an attached tab, or with `sessionId`, of one of its cross-origin frames'
    /// child sessions (only what the host keeps of them: console lines and requests).
    #[serde(rename = "cdp.event")]
    CdpEvent {
        tab_id: TabId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        method: String,
        #[serde(default)]
        params: Value,
    },
    /// The debugger left a tab (the person's "Cancel", the tab closed, "Stop all").
    #[serde(rename = "cdp.detached")]
    CdpDetached {
        tab_id: TabId,
        #[serde(default = "unknown")]
        reason: String,
    },
    /// The person pressed "Stop all" in the extension.
    #[serde(rename = "stop_all")]
    StopAll,
    /// The person pressed a session's "Stop" in the extension: that session ends here (the
    /// extension has already detached its tabs with [`STOPPED_BY_USER`]).
    #[serde(rename = "stop_session")]
    StopSession { session_id: String },
    #[serde(rename = "ping")]
    Ping,
}

/// The reason the extension gives when the person stopped a tab's driving ("Stop", "Stop
/// all"): the action it cuts short ends `USER_DENIED`.
pub const STOPPED_BY_USER: &str = "stopped_by_user";

fn unknown() -> String {
    "unknown".into()
}

/// What the host asks the extension to do: `method` and its `params` on the wire, one variant
/// a method (the extension's `calls` table in `extension/src/service_worker.js` has the same
/// names; a test holds them together).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "method", content = "params")]
pub enum ExtensionCall {
    /// Opens a background tab of the session (in a window of its own, its group titled).
    #[serde(rename = "tabs.create", rename_all = "camelCase")]
    TabsCreate {
        url: String,
        group_title: Option<String>,
    },
    #[serde(rename = "tabs.close", rename_all = "camelCase")]
    TabsClose { tab_id: TabId },
    #[serde(rename = "debugger.attach", rename_all = "camelCase")]
    DebuggerAttach { tab_id: TabId },
    #[serde(rename = "debugger.detach", rename_all = "camelCase")]
    DebuggerDetach { tab_id: TabId },
    /// One CDP command to an attached tab, or to one of its child sessions (a cross-origin
    /// frame's: `chrome.debugger`'s flat sessions).
    #[serde(rename = "debugger.send", rename_all = "camelCase")]
    DebuggerSend {
        tab_id: TabId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        method: String,
        params: Value,
    },
    /// Asks for a `full_state_sync` of the browser's windows, tabs and groups.
    #[serde(rename = "twin.sync")]
    TwinSync {},
    /// Where the person's browser saved the latest finished download from `url`
    /// (`chrome.downloads`): `{ "filename", "mime"? }`, the file's absolute path.
    #[serde(rename = "downloads.find")]
    DownloadsFind { url: String },
}

impl ExtensionCall {
    /// Every method's wire name.
    pub const METHODS: &'static [&'static str] = &[
        "tabs.create",
        "tabs.close",
        "debugger.attach",
        "debugger.detach",
        "debugger.send",
        "twin.sync",
        "downloads.find",
    ];

    /// The method's wire name.
    pub fn method(&self) -> &'static str {
        match self {
            Self::TabsCreate { .. } => Self::METHODS[0],
            Self::TabsClose { .. } => Self::METHODS[1],
            Self::DebuggerAttach { .. } => Self::METHODS[2],
            Self::DebuggerDetach { .. } => Self::METHODS[3],
            Self::DebuggerSend { .. } => Self::METHODS[4],
            Self::TwinSync {} => Self::METHODS[5],
            Self::DownloadsFind { .. } => Self::METHODS[6],
        }
    }
}

/// A secret as the owner gave it in the extension's options.
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct OwnerSecret {
    pub name: String,
    pub value: String,
    pub origins: Vec<String>,
}

/// Never the value, wherever a message is printed.
impl std::fmt::Debug for OwnerSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnerSecret")
            .field("name", &self.name)
            .field("origins", &self.origins)
            .finish_non_exhaustive()
    }
}

/// What the host sends the extension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum ToExtension {
    /// A call the extension answers with `result` (same `id`).
    #[serde(rename = "call")]
    Call {
        id: u64,
        #[serde(flatten)]
        call: ExtensionCall,
    },
    /// What the popup shows.
    #[serde(rename = "status")]
    Status(HostStatus),
    /// An action on this browser waits for its owner's approval (they asked for it).
    #[serde(rename = "confirmation_requested")]
    ConfirmationRequested(ConfirmationRequest),
    /// What the agent of a session on this browser tells its owner.
    #[serde(rename = "agent.message")]
    AgentMessage(SessionMessage),
    #[serde(rename = "pong")]
    Pong,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostStatus {
    /// `connected` or `disconnected`.
    pub relay: String,
    pub client_id: String,
    pub sessions: Vec<SessionTabs>,
    /// Whether the host lets `browser_evaluate` run, as the owner's setting made it.
    #[serde(default)]
    pub allow_evaluate: bool,
    /// Whether the host lets `browser_storage_state` run, as the owner's setting made it.
    #[serde(default)]
    pub allow_storage_state: bool,
    /// The owner's secrets the host holds: names and origins, never values.
    #[serde(default)]
    pub secrets: Vec<crate::actions::browser_secrets::Named>,
    /// Why the host holds none of them, when it refused them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secrets_error: Option<String>,
    /// The owner's blocked sites the host applies.
    #[serde(default)]
    pub blocked_sites: Vec<String>,
    /// Whether the relay asks the owner before every action on this browser.
    #[serde(default)]
    pub confirm_every_action: bool,
    /// The owner's blocked sites it could not read, each with why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unreadable_sites: Vec<String>,
    /// The handoffs waiting for the owner (`browser_handoff`).
    #[serde(default)]
    pub handoffs: Vec<crate::messages::HandoffRequested>,
}

/// A session the host drives, with its tabs and its latest actions (newest first).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionTabs {
    pub session_id: String,
    pub tabs: Vec<TabId>,
    #[serde(default)]
    pub latest: Vec<ActionLine>,
}

/// One action as the owner's popup lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ActionLine {
    pub action_name: String,
    /// `success` or `error`.
    pub status: String,
    /// The error's code, when it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_extensions_messages_read_as_it_writes_them() {
        let read = |v: Value| serde_json::from_value::<FromExtension>(v).unwrap();
        assert_eq!(
            read(json!({ "type": "cdp.event", "tabId": 3, "method": "Page.loadEventFired", "params": {} })),
            FromExtension::CdpEvent {
                tab_id: 3,
                session_id: None,
                method: "Page.loadEventFired".into(),
                params: json!({})
            }
        );
        assert_eq!(
            read(
                json!({ "type": "cdp.event", "tabId": 3, "sessionId": "F1", "method": "Log.entryAdded", "params": {} })
            ),
            FromExtension::CdpEvent {
                tab_id: 3,
                session_id: Some("F1".into()),
                method: "Log.entryAdded".into(),
                params: json!({})
            }
        );
        assert_eq!(read(json!({ "type": "stop_all" })), FromExtension::StopAll);
        assert!(matches!(
            read(json!({ "type": "reply", "id": 7, "error": "No tab with id: 3." })),
            FromExtension::Reply {
                id: 7,
                error: Some(_),
                ..
            }
        ));
        assert!(matches!(
            read(json!({ "type": "hello", "extensionVersion": "0.1.0", "userAgent": "UA" })),
            FromExtension::Hello { .. }
        ));
        assert!(serde_json::from_value::<FromExtension>(json!({ "type": "nonsense" })).is_err());
    }

    #[test]
    fn every_call_is_a_method_and_its_params() {
        let calls = [
            (
                ExtensionCall::TabsCreate {
                    url: "about:blank".into(),
                    group_title: None,
                },
                json!({ "url": "about:blank", "groupTitle": null }),
            ),
            (ExtensionCall::TabsClose { tab_id: 2 }, json!({ "tabId": 2 })),
            (ExtensionCall::DebuggerAttach { tab_id: 3 }, json!({ "tabId": 3 })),
            (ExtensionCall::DebuggerDetach { tab_id: 3 }, json!({ "tabId": 3 })),
            (
                ExtensionCall::DebuggerSend {
                    tab_id: 3,
                    session_id: None,
                    method: "Page.enable".into(),
                    params: json!({}),
                },
                json!({ "tabId": 3, "method": "Page.enable", "params": {} }),
            ),
            (
                ExtensionCall::DebuggerSend {
                    tab_id: 3,
                    session_id: Some("F1".into()),
                    method: "Runtime.evaluate".into(),
                    params: json!({}),
                },
                json!({ "tabId": 3, "sessionId": "F1", "method": "Runtime.evaluate", "params": {} }),
            ),
            (ExtensionCall::TwinSync {}, json!({})),
        ];
        for (call, params) in calls {
            let message = ToExtension::Call {
                id: 7,
                call: call.clone(),
            };
            let wire = serde_json::to_value(&message).unwrap();
            assert_eq!(
                wire,
                json!({ "type": "call", "id": 7, "method": call.method(), "params": params })
            );
            assert_eq!(serde_json::from_value::<ToExtension>(wire).unwrap(), message);
        }
    }

    #[test]
    fn the_hosts_messages_are_flat() {
        let call = ToExtension::Call {
            id: 1,
            call: ExtensionCall::TabsClose { tab_id: 2 },
        };
        assert_eq!(
            serde_json::to_value(call).unwrap(),
            json!({ "type": "call", "id": 1, "method": "tabs.close", "params": { "tabId": 2 } })
        );
        assert_eq!(
            serde_json::to_value(ToExtension::Pong).unwrap(),
            json!({ "type": "pong" })
        );
    }
}
