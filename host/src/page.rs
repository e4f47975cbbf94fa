//! One tab as an action sees it: CDP calls, script evaluation, typed calls into the in-page
//! library, events and artifact storage, with every failure already in the wire's error
//! vocabulary.

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use serde_json::{json, Value};
use tether_protocol::actions::{ArtifactRef, TabId};
use tether_protocol::{ActionError, ErrorCode};
use tokio::sync::broadcast;
use tokio::time::Instant;

use crate::artifacts::ArtifactSink;
use crate::cdp::{BrowserEvent, Transport};
use crate::library::LibraryCall;
use crate::tabs::TabState;

/// The in-page library (see `js/tether.js`).
const LIB_JS: &str = include_str!("js/tether.js");

/// Puts the library in the document (once: it is kept under a key named by this build, so a
/// page never runs another build's copy) and evaluates to it, for `Runtime.callFunctionOn`.
static INSTALL: LazyLock<String> = LazyLock::new(|| {
    let key = format!("tether.lib.{}.{}", env!("CARGO_PKG_VERSION"), LIB_JS.len());
    format!(
        "(() => {{ const key = Symbol.for({key:?}); \
         if (!globalThis[key]) Object.defineProperty(globalThis, key, {{ value: ({LIB_JS}), configurable: true }}); \
         return globalThis[key]; }})()"
    )
});

/// Called on the library with the function's name and arguments (awaiting what a waiting
/// function returns): a fresh instance per call, and one JSON string back, which crosses CDP far faster than a deep object returned by value
/// (a 6,000-element scan: ~120 ms saved).
const CALL: &str = "async function (name, args) { return JSON.stringify(await this()[name](args)); }";

/// How the library's `{ error }` answers begin (`JSON.stringify` keeps key order, and no
/// successful reply starts with an `error` key).
const ERROR_REPLY: &str = "{\"error\":";

/// One tab, and only what acting on it takes: the browser, the artifact sink, and what the
/// host keeps for the tab.
pub struct Page<'a> {
    transport: &'a Arc<dyn Transport>,
    artifacts: &'a dyn ArtifactSink,
    state: Arc<TabState>,
    pub tab: TabId,
}

impl<'a> Page<'a> {
    pub fn new(
        transport: &'a Arc<dyn Transport>,
        artifacts: &'a dyn ArtifactSink,
        state: Arc<TabState>,
        tab: TabId,
    ) -> Self {
        Self {
            transport,
            artifacts,
            state,
            tab,
        }
    }

    /// The browser, for what is not one tab's (the tab list).
    pub fn transport(&self) -> &'a Arc<dyn Transport> {
        self.transport
    }

    pub async fn cdp(&self, method: &str, params: Value) -> Result<Value, ActionError> {
        Ok(self.transport.send(self.tab, method, params).await?)
    }

    /// Evaluates a fixed expression in the page's main world, awaiting a returned promise.
    pub async fn evaluate(&self, expression: &str) -> Result<Value, ActionError> {
        let reply = self
            .cdp(
                "Runtime.evaluate",
                json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
            )
            .await?;
        value_of(reply)
    }

    /// Calls a function of the in-page library; its `{ error }` answers become action errors.
    pub async fn call<C: LibraryCall>(&self, call: &C) -> Result<C::Reply, ActionError> {
        let args = serde_json::to_value(call)
            .map_err(|e| ActionError::internal(format!("cannot encode {}'s arguments: {e}", C::FUNCTION)))?;
        let state = &self.state;
        // The library's handle dies with its document: a failed call on a kept handle is
        // tried once more on a fresh one.
        let text = match state.library() {
            Some(library) => match self.call_on(&library, C::FUNCTION, &args).await {
                Ok(text) => text,
                Err(_) => {
                    state.set_library(None);
                    self.call_on(&self.install().await?, C::FUNCTION, &args).await?
                }
            },
            None => self.call_on(&self.install().await?, C::FUNCTION, &args).await?,
        };
        let parsed = if text.starts_with(ERROR_REPLY) {
            serde_json::from_str::<LibraryError>(&text).map(|e| Err(e.error))
        } else {
            serde_json::from_str::<C::Reply>(&text).map(Ok)
        };
        parsed.map_err(|e| {
            ActionError::internal(format!(
                "the page library's {} answered in an unknown shape: {e}",
                C::FUNCTION
            ))
        })?
    }

    async fn install(&self) -> Result<String, ActionError> {
        let reply = self
            .cdp(
                "Runtime.evaluate",
                json!({ "expression": &*INSTALL, "returnByValue": false }),
            )
            .await?;
        let object_id = reply
            .pointer("/result/objectId")
            .and_then(Value::as_str)
            .ok_or_else(|| ActionError::internal(format!("the page library did not install: {reply}")))?
            .to_owned();
        self.state.set_library(Some(object_id.clone()));
        Ok(object_id)
    }

    async fn call_on(&self, library: &str, function: &str, args: &Value) -> Result<String, ActionError> {
        let reply = self
            .cdp(
                "Runtime.callFunctionOn",
                json!({
                    "objectId": library,
                    "functionDeclaration": CALL,
                    "arguments": [{ "value": function }, { "value": args }],
                    "returnByValue": true,
                    "awaitPromise": true,
                }),
            )
            .await?;
        match value_of(reply)? {
            Value::String(text) => Ok(text),
            other => Err(ActionError::internal(format!(
                "the page library returned {other}"
            ))),
        }
    }

    /// Events of this tab from now on.
    pub fn events(&self) -> TabEvents {
        TabEvents {
            tab: self.tab,
            rx: self.transport.events(),
        }
    }

    pub async fn store(&self, bytes: Vec<u8>, content_type: &str) -> Result<ArtifactRef, ActionError> {
        self.artifacts.put(bytes, content_type).await
    }
}

#[derive(serde::Deserialize)]
struct LibraryError {
    error: ActionError,
}

/// The value a `Runtime.evaluate` or `callFunctionOn` reply carries; a thrown exception is a
/// `CDP_ERROR` with its text.
fn value_of(reply: Value) -> Result<Value, ActionError> {
    if let Some(exception) = reply.get("exceptionDetails") {
        let text = exception
            .pointer("/exception/description")
            .or_else(|| exception.get("text"))
            .and_then(Value::as_str)
            .unwrap_or("unknown exception");
        return Err(ActionError::new(
            ErrorCode::CdpError,
            format!("a script in the page failed: {text}"),
        ));
    }
    Ok(reply.pointer("/result/value").cloned().unwrap_or(Value::Null))
}

/// A tab's CDP events, ending when the tab goes away.
pub struct TabEvents {
    tab: TabId,
    rx: broadcast::Receiver<BrowserEvent>,
}

impl TabEvents {
    /// The next CDP event of the tab before `deadline`: `Ok(None)` when the deadline passed.
    pub async fn next_until(&mut self, deadline: Instant) -> Result<Option<(String, Value)>, ActionError> {
        loop {
            let event = match tokio::time::timeout_at(deadline, self.rx.recv()).await {
                Err(_) => return Ok(None),
                Ok(Ok(event)) => event,
                Ok(Err(broadcast::error::RecvError::Lagged(n))) => {
                    tracing::warn!(tab = self.tab, "missed {n} browser events");
                    continue;
                }
                Ok(Err(broadcast::error::RecvError::Closed)) => {
                    return Err(ActionError::new(
                        ErrorCode::CdpError,
                        "the browser connection closed",
                    ))
                }
            };
            match event {
                BrowserEvent::Cdp { tab, method, params } if tab == self.tab => return Ok(Some((method, params))),
                BrowserEvent::TabRemoved { tab } if tab == self.tab => {
                    return Err(ActionError::new(ErrorCode::TabNotFound, format!("tab {tab} was closed during the action")))
                }
                BrowserEvent::Detached { tab, reason } if tab == self.tab => {
                    return Err(ActionError::new(
                        ErrorCode::CdpError,
                        format!("the debugger left tab {tab} during the action ({reason}); call browser_debugger_attach to reattach"),
                    ))
                }
                _ => {}
            }
        }
    }
}

/// A deadline `timeout_ms` from now, or `default` when absent.
pub fn deadline(timeout_ms: Option<u64>, default: Duration) -> Instant {
    Instant::now() + timeout_ms.map(Duration::from_millis).unwrap_or(default)
}
