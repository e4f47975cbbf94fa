//! CDP commands as chromiumoxide_cdp types: the params a command's struct serializes to, sent
//! under its method's name, and its answer read back as the command's response type. What the
//! browser carries is the same JSON either way (the extension's `chrome.debugger` bridge too);
//! a misspelt method, a renamed field or a wrong type is the compiler's to find.
//!
//! An answer is read as JSON instead ([`command_json`]) where its type holds enums a later
//! Chromium may extend (chromiumoxide_cdp's enums have no catch-all, and one unknown value
//! would fail the whole answer), or where a field is read that the crate leaves out as
//! deprecated.

use chromiumoxide::cdp::js_protocol::runtime::EvaluateParams;
use chromiumoxide::types::Command;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tether_protocol::actions::TabId;

use super::{CdpError, Transport};

/// `Runtime.evaluate` of `expression` as the host runs its own scripts: the value returned as
/// JSON, a returned promise awaited.
pub fn evaluation(expression: impl Into<String>) -> EvaluateParams {
    let mut evaluate = EvaluateParams::new(expression);
    (evaluate.return_by_value, evaluate.await_promise) = (Some(true), Some(true));
    evaluate
}

/// An event's params read as the crate's event struct, for events whose struct holds no enum
/// Chromium extends (see the module doc); `None`, said in the log, when they cannot be read.
pub fn event<E: DeserializeOwned>(method: &str, params: &Value) -> Option<E> {
    E::deserialize(params)
        .map_err(|e| tracing::debug!("cannot read the browser's {method}: {e}"))
        .ok()
}

/// The command's method name and params as the wire carries them.
pub fn wire<C: Command>(command: &C) -> Result<(String, Value), CdpError> {
    let method = command.identifier().into_owned();
    let params = serde_json::to_value(command)
        .map_err(|e| CdpError::Other(format!("cannot write {method}'s params: {e}")))?;
    Ok((method, params))
}

/// Reads a command's answer as its response type.
pub fn answer<C: Command>(method: &str, answer: Value) -> Result<C::Response, CdpError> {
    serde_json::from_value(answer)
        .map_err(|e| CdpError::Other(format!("cannot read the browser's answer to {method}: {e}")))
}

/// Sends a typed command to an attached tab; its typed answer.
pub async fn command<C: Command>(
    transport: &dyn Transport,
    tab: TabId,
    command: C,
) -> Result<C::Response, CdpError> {
    let (method, params) = wire(&command)?;
    let reply = transport.send(tab, &method, params).await?;
    answer::<C>(&method, reply)
}

/// Sends a typed command to an attached tab; its answer as JSON (see the module doc).
pub async fn command_json<C: Command>(
    transport: &dyn Transport,
    tab: TabId,
    command: C,
) -> Result<Value, CdpError> {
    let (method, params) = wire(&command)?;
    transport.send(tab, &method, params).await
}

/// Sends a typed command to a child session of an attached tab (a cross-origin frame's); its
/// answer as JSON.
pub async fn command_json_in<C: Command>(
    transport: &dyn Transport,
    tab: TabId,
    session: &str,
    command: C,
) -> Result<Value, CdpError> {
    let (method, params) = wire(&command)?;
    transport.send_in(tab, session, &method, params).await
}
