//! One tab as an action sees it: CDP calls, script evaluation, the in-page library, events and
//! artifact storage, with every failure already in the wire's error vocabulary.

use std::time::Duration;

use serde_json::{json, Value};
use tether_protocol::catalog::{ArtifactRef, TabId};
use tether_protocol::{ActionError, ErrorCode};
use tokio::sync::broadcast;
use tokio::time::Instant;

use crate::cdp::BrowserEvent;
use crate::engine::Engine;

/// The in-page library (see `js/tether.js`).
const LIB_JS: &str = include_str!("js/tether.js");

/// Where a document keeps the library: named by this build, so a page never runs another
/// build's copy.
fn lib_key() -> String {
    format!("tether.lib.{}.{}", env!("CARGO_PKG_VERSION"), LIB_JS.len())
}
/// Installed before page scripts run (see `js/hooks.js`).
pub const HOOKS_JS: &str = include_str!("js/hooks.js");

pub struct Page<'a> {
    engine: &'a Engine,
    pub tab: TabId,
}

impl<'a> Page<'a> {
    pub fn new(engine: &'a Engine, tab: TabId) -> Self {
        Self { engine, tab }
    }

    pub fn engine(&self) -> &'a Engine {
        self.engine
    }

    pub async fn cdp(&self, method: &str, params: Value) -> Result<Value, ActionError> {
        Ok(self.engine.transport().send(self.tab, method, params).await?)
    }

    /// Evaluates an expression in the page's main world, awaiting a returned promise.
    pub async fn evaluate(&self, expression: &str) -> Result<Value, ActionError> {
        let reply = self
            .cdp(
                "Runtime.evaluate",
                json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
            )
            .await?;
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

    /// Calls a function of the in-page library; its `{ error }` answers become action errors.
    pub async fn lib(&self, function: &str, args: Value) -> Result<Value, ActionError> {
        // One JSON string crosses CDP far faster than a deep object returned by value (a
        // 6,000-element scan: ~120 ms saved). The library's source (19 KB) is sent once per
        // document and kept there; each call makes a fresh instance of it, as before.
        let key = lib_key();
        let cached = format!(
            "(() => {{ const lib = globalThis[Symbol.for({key:?})]; \
             return lib ? JSON.stringify(lib().{function}({args})) : null; }})()"
        );
        let mut text = self.evaluate(&cached).await?;
        if text.is_null() {
            let install = format!(
                "(() => {{ const lib = ({LIB_JS}); \
                 Object.defineProperty(globalThis, Symbol.for({key:?}), {{ value: lib, configurable: true }}); \
                 return JSON.stringify(lib().{function}({args})); }})()"
            );
            text = self.evaluate(&install).await?;
        }
        let value: Value = match text.as_str() {
            Some(json) => serde_json::from_str(json)
                .map_err(|e| ActionError::internal(format!("the page library returned bad JSON: {e}")))?,
            None => return Err(ActionError::internal(format!("the page library returned {text}"))),
        };
        match value.get("error") {
            Some(error) => Err(serde_json::from_value(error.clone()).unwrap_or_else(|_| {
                ActionError::internal(format!("the page library returned a malformed error: {error}"))
            })),
            None => Ok(value),
        }
    }

    /// Events of this tab from now on.
    pub fn events(&self) -> TabEvents {
        TabEvents {
            tab: self.tab,
            rx: self.engine.transport().events(),
        }
    }

    pub async fn store(&self, bytes: Vec<u8>, content_type: &str) -> Result<ArtifactRef, ActionError> {
        self.engine.artifacts().put(bytes, content_type).await
    }
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
