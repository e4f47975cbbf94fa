//! A raw CDP client over one browser connection: JSON commands in, JSON responses and events
//! out, with flattened sessions. The connection is a WebSocket (a browser some other program
//! started, `--browser-ws`) or the pipe of a browser this host launched
//! (`--remote-debugging-pipe`: file descriptors only this process holds, where a TCP port could
//! be driven by any local process; docs/protocol.md §15).
//!
//! The socket is chromiumoxide's [`Connection`] (unbounded frame size, so big screenshots
//! pass); the pipe carries the same JSON, each message ended by a NUL byte. chromiumoxide's
//! `Browser`/`Handler` layer is deliberately not used: it attaches to every target and enables
//! domains on its own, and its typed events fail to parse on newer Chromium. Tether needs
//! exactly the CDP traffic its actions send, nothing more.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chromiumoxide::cdp::browser_protocol::target::{EventDetachedFromTarget, SessionId};
use chromiumoxide::types::{CallId, EventMessage, Message, Method, MethodId};
use chromiumoxide::Connection;
use futures::StreamExt;
use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt};
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
    taps: Taps,
}

/// Receivers that must see every event of some methods, never missing one as a broadcast
/// receiver that falls behind does: a paused request nobody continues stalls its page for good.
type Taps = Arc<Mutex<Vec<Tap>>>;

/// A [`CdpConnection`] that does not keep it open, for a task the connection feeds.
pub struct WeakCdpConnection {
    calls: mpsc::WeakUnboundedSender<Call>,
    events: broadcast::Sender<RawEvent>,
    taps: Taps,
}

impl WeakCdpConnection {
    pub fn upgrade(&self) -> Option<CdpConnection> {
        Some(CdpConnection {
            calls: self.calls.upgrade()?,
            events: self.events.clone(),
            taps: self.taps.clone(),
        })
    }
}

struct Tap {
    wanted: fn(&str) -> bool,
    to: mpsc::UnboundedSender<RawEvent>,
}

impl CdpConnection {
    /// Connects to a browser endpoint `ws://host:port/devtools/browser/<id>`.
    pub async fn connect(ws_url: &str) -> Result<Self, CdpError> {
        let conn = Connection::<RawEvent>::connect(ws_url)
            .await
            .map_err(|e| CdpError::Other(format!("cannot connect to the browser at {ws_url}: {e}")))?;
        Ok(Self::start(Wire::Ws(Box::new(conn))))
    }

    /// Speaks CDP over a launched browser's pipe: `to_browser` is what it reads commands from
    /// (its fd 3 on Unix), `from_browser` what it writes to (fd 4). The pipe closes (and the
    /// browser exits) when the last handle drops.
    pub fn over_pipe(
        to_browser: impl AsyncWrite + Unpin + Send + 'static,
        from_browser: impl AsyncRead + Unpin + Send + 'static,
    ) -> Self {
        let (out, outgoing) = mpsc::unbounded_channel::<Vec<u8>>();
        tokio::spawn(write_pipe(to_browser, outgoing));
        let (incoming, inbound) = mpsc::unbounded_channel();
        tokio::spawn(read_pipe(from_browser, incoming));
        Self::start(Wire::Pipe {
            next_id: 0,
            out,
            inbound,
        })
    }

    fn start(wire: Wire) -> Self {
        let (calls, calls_rx) = mpsc::unbounded_channel();
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let taps = Taps::default();
        tokio::spawn(drive(wire, calls_rx, events.clone(), taps.clone()));
        Self { calls, events, taps }
    }

    /// Sends a typed command (chromiumoxide_cdp's) to the browser (`session_id` none) or to a
    /// target's session; its typed answer.
    pub async fn command<C: chromiumoxide::types::Command>(
        &self,
        session_id: Option<&str>,
        command: C,
    ) -> Result<C::Response, CdpError> {
        let (method, params) = super::typed::wire(&command)?;
        let answer = self.call(session_id, &method, params).await?;
        super::typed::answer::<C>(&method, answer)
    }

    /// Sends a typed command; its answer as JSON (see `typed`'s module doc).
    pub async fn command_json<C: chromiumoxide::types::Command>(
        &self,
        session_id: Option<&str>,
        command: C,
    ) -> Result<Value, CdpError> {
        let (method, params) = super::typed::wire(&command)?;
        self.call(session_id, &method, params).await
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

    /// A handle that does not keep the connection open.
    pub fn downgrade(&self) -> WeakCdpConnection {
        WeakCdpConnection {
            calls: self.calls.downgrade(),
            events: self.events.clone(),
            taps: self.taps.clone(),
        }
    }

    /// Every event whose method is `wanted`, none missed however far the receiver falls
    /// behind (they are also broadcast). For events each of which waits on an answer, so their
    /// number is bounded by what the browser holds paused.
    pub fn tap(&self, wanted: fn(&str) -> bool) -> mpsc::UnboundedReceiver<RawEvent> {
        let (to, from) = mpsc::unbounded_channel();
        self.taps
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(Tap { wanted, to });
        from
    }
}

struct Pending {
    method: String,
    session_id: Option<String>,
    reply: oneshot::Sender<Result<Value, CdpError>>,
}

/// What carries the messages: a WebSocket, or a pipe's two ends (each in a task of its own).
enum Wire {
    Ws(Box<Connection<RawEvent>>),
    Pipe {
        next_id: usize,
        out: mpsc::UnboundedSender<Vec<u8>>,
        inbound: mpsc::UnboundedReceiver<Result<Message<RawEvent>, String>>,
    },
}

impl Wire {
    fn submit(&mut self, method: String, session: Option<String>, params: Value) -> Result<CallId, String> {
        match self {
            Self::Ws(conn) => conn
                .submit_command(method.into(), session.map(SessionId::new), params)
                .map_err(|e| e.to_string()),
            Self::Pipe { next_id, out, .. } => {
                *next_id += 1;
                let mut call = serde_json::json!({ "id": *next_id, "method": method, "params": params });
                if let Some(session) = session {
                    call["sessionId"] = Value::String(session);
                }
                let mut bytes = serde_json::to_vec(&call).map_err(|e| e.to_string())?;
                bytes.push(0);
                out.send(bytes)
                    .map_err(|_| "the browser's pipe is closed".to_owned())?;
                Ok(CallId::new(*next_id))
            }
        }
    }

    /// The next message; `None` once the browser is gone. Cancel-safe.
    async fn next(&mut self) -> Option<Result<Message<RawEvent>, String>> {
        match self {
            Self::Ws(conn) => conn.next().await.map(|m| m.map_err(|e| e.to_string())),
            Self::Pipe { inbound, .. } => inbound.recv().await,
        }
    }
}

/// Writes each queued message to the browser's pipe; ends when the connection's handles are
/// gone (closing the pipe, which ends the browser) or the browser stops reading.
async fn write_pipe(mut to_browser: impl AsyncWrite + Unpin, mut outgoing: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(bytes) = outgoing.recv().await {
        if to_browser.write_all(&bytes).await.is_err() {
            break;
        }
    }
}

/// Reads NUL-ended messages from the browser's pipe until it closes.
async fn read_pipe(
    from_browser: impl AsyncRead + Unpin,
    incoming: mpsc::UnboundedSender<Result<Message<RawEvent>, String>>,
) {
    let mut reader = tokio::io::BufReader::with_capacity(64 * 1024, from_browser);
    let mut message = Vec::new();
    loop {
        message.clear();
        match reader.read_until(0, &mut message).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        if message.last() != Some(&0) {
            break;
        }
        message.pop();
        let parsed = serde_json::from_slice(&message).map_err(|e| e.to_string());
        if incoming.send(parsed).is_err() {
            break;
        }
    }
}

/// Owns the wire: submits calls, matches responses to them, fans events out.
async fn drive(
    mut conn: Wire,
    mut calls: mpsc::UnboundedReceiver<Call>,
    events: broadcast::Sender<RawEvent>,
    taps: Taps,
) {
    let mut pending: HashMap<CallId, Pending> = HashMap::new();
    loop {
        tokio::select! {
            call = calls.recv() => {
                let Some(call) = call else { break };
                tracing::trace!(method = %call.method, session = ?call.session_id, "CDP call");
                match conn.submit(call.method.clone(), call.session_id.clone(), call.params) {
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
                    if event.method == EventDetachedFromTarget::IDENTIFIER {
                        // Chromium never answers commands of a session that went away.
                        if let Some(gone) = event.params.get("sessionId").and_then(Value::as_str) {
                            fail_session(&mut pending, gone);
                        }
                    }
                    pass_to_taps(&taps, &event);
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
    // Ends the tapping tasks, whose handles do not keep the connection.
    taps.lock().unwrap_or_else(|p| p.into_inner()).clear();
    tracing::debug!("CDP connection closed");
}

fn pass_to_taps(taps: &Taps, event: &RawEvent) {
    let mut taps = taps.lock().unwrap_or_else(|p| p.into_inner());
    taps.retain(|tap| !(tap.wanted)(&event.method) || tap.to.send(event.clone()).is_ok());
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
