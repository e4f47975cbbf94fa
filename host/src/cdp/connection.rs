//! A raw CDP client over one browser WebSocket: JSON commands in, JSON responses and events
//! out, with flattened sessions.
//!
//! The socket itself is chromiumoxide's [`Connection`] (unbounded frame size, so big
//! screenshots pass). chromiumoxide's `Browser`/`Handler` layer is deliberately not used: it
//! attaches to every target and enables domains on its own, and its typed events fail to parse
//! on newer Chromium. Tether needs exactly the CDP traffic its actions send, nothing more.

use std::collections::HashMap;

use chromiumoxide::cdp::browser_protocol::target::SessionId;
use chromiumoxide::types::{CallId, EventMessage, Message, Method, MethodId};
use chromiumoxide::Connection;
use futures::StreamExt;
use serde::Deserialize;
use serde_json::Value;
use tokio::sync::{broadcast, mpsc, oneshot};

use super::CdpError;

/// How many events a slow subscriber may fall behind before it misses some.
const EVENT_BUFFER: usize = 4096;

/// One CDP event, with the flattened session it came from (`None`: the browser target).
#[derive(Debug, Clone, Deserialize)]
pub struct RawEvent {
    pub method: String,
    #[serde(rename = "sessionId", default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub params: Value,
}

// chromiumoxide's own JSON event type looks for `sessionId` inside `params`; flattened
// sessions put it at the top level, hence this type.
impl Method for RawEvent {
    fn identifier(&self) -> MethodId {
        self.method.clone().into()
    }
}

impl EventMessage for RawEvent {
    fn session_id(&self) -> Option<&str> {
        self.session_id.as_deref()
    }
}

struct Call {
    method: String,
    session_id: Option<String>,
    params: Value,
    reply: oneshot::Sender<Result<Value, CdpError>>,
}

/// A handle to the connection; cheap to clone. The socket closes when the last handle drops.
#[derive(Clone)]
pub struct CdpConnection {
    calls: mpsc::UnboundedSender<Call>,
    events: broadcast::Sender<RawEvent>,
}

impl CdpConnection {
    /// Connects to a browser endpoint `ws://host:port/devtools/browser/<id>`.
    pub async fn connect(ws_url: &str) -> Result<Self, CdpError> {
        let conn = Connection::<RawEvent>::connect(ws_url)
            .await
            .map_err(|e| CdpError::Other(format!("cannot connect to the browser at {ws_url}: {e}")))?;
        let (calls, calls_rx) = mpsc::unbounded_channel();
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        tokio::spawn(drive(conn, calls_rx, events.clone()));
        Ok(Self { calls, events })
    }

    /// Sends a command to the browser (`session_id: None`) or to an attached session.
    pub async fn call(
        &self,
        session_id: Option<&str>,
        method: &str,
        params: Value,
    ) -> Result<Value, CdpError> {
        let (reply, answer) = oneshot::channel();
        let call = Call {
            method: method.to_owned(),
            session_id: session_id.map(str::to_owned),
            params,
            reply,
        };
        self.calls.send(call).map_err(|_| CdpError::Disconnected)?;
        answer.await.map_err(|_| CdpError::Disconnected)?
    }

    pub fn subscribe(&self) -> broadcast::Receiver<RawEvent> {
        self.events.subscribe()
    }
}

struct Pending {
    method: String,
    session_id: Option<String>,
    reply: oneshot::Sender<Result<Value, CdpError>>,
}

/// Owns the socket: submits calls, matches responses to them, fans events out.
async fn drive(
    mut conn: Connection<RawEvent>,
    mut calls: mpsc::UnboundedReceiver<Call>,
    events: broadcast::Sender<RawEvent>,
) {
    let mut pending: HashMap<CallId, Pending> = HashMap::new();
    loop {
        tokio::select! {
            call = calls.recv() => {
                let Some(call) = call else { break };
                tracing::trace!(method = %call.method, session = ?call.session_id, "CDP call");
                let session = call.session_id.clone().map(SessionId::new);
                match conn.submit_command(call.method.clone().into(), session, call.params) {
                    Ok(id) => {
                        pending.insert(id, Pending { method: call.method, session_id: call.session_id, reply: call.reply });
                    }
                    Err(e) => {
                        let _ = call.reply.send(Err(CdpError::Other(format!("cannot encode {}: {e}", call.method))));
                    }
                }
            }
            message = conn.next() => match message {
                Some(Ok(Message::Response(response))) => {
                    let Some(p) = pending.remove(&response.id) else { continue };
                    tracing::trace!(method = %p.method, error = ?response.error, "CDP reply");
                    let outcome = match response.error {
                        Some(e) => Err(CdpError::Protocol { method: p.method, code: e.code, message: e.message }),
                        None => Ok(response.result.unwrap_or(Value::Null)),
                    };
                    let _ = p.reply.send(outcome);
                }
                Some(Ok(Message::Event(event))) => {
                    if event.method == "Target.detachedFromTarget" {
                        // Chromium never answers commands of a session that went away.
                        if let Some(gone) = event.params.get("sessionId").and_then(Value::as_str) {
                            fail_session(&mut pending, gone);
                        }
                    }
                    let _ = events.send(event);
                }
                Some(Err(e)) => tracing::debug!("ignoring an unreadable CDP message: {e}"),
                None => break,
            }
        }
    }
    for (_, p) in pending.drain() {
        let _ = p.reply.send(Err(CdpError::Disconnected));
    }
    tracing::debug!("CDP connection closed");
}

fn fail_session(pending: &mut HashMap<CallId, Pending>, session_id: &str) {
    let ids: Vec<CallId> = pending
        .iter()
        .filter(|(_, p)| p.session_id.as_deref() == Some(session_id))
        .map(|(id, _)| *id)
        .collect();
    for id in ids {
        if let Some(p) = pending.remove(&id) {
            let _ = p.reply.send(Err(CdpError::Other(format!(
                "{} was cut short: the tab's debugging session ended",
                p.method
            ))));
        }
    }
}
