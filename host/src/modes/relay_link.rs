//! The host's link to the relay (docs/protocol.md §2.1, §2.5): dial out, join as `host` with a
//! stable clientId and meta, report the twin, ack each `browser_action` on receipt and answer
//! it with its result, send heartbeats; when the link drops, dial again with capped
//! exponential backoff plus jitter. A refused token ends the link: retrying cannot fix it.
//! Each action runs at most once across reconnects, and a result the relay could not be told
//! is told when the host joins again (`deliveries`, docs/protocol.md §13).

use std::sync::Arc;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use rand::Rng;
use serde_json::Value;
use tether_protocol::envelope::MAX_ENVELOPE_BYTES;
use tether_protocol::messages::{
    Ack, ActionRequest, ClientSettings, Empty, HandoffAnswer, HandoffInput, HostMeta, Join, LiveView,
    Message, Role,
};
use tether_protocol::result::ResultStatus;
use tether_protocol::{ActionError, Envelope, ErrorCode};
use tokio::sync::{broadcast, mpsc, watch};
use tokio_tungstenite::tungstenite::Message as WsMessage;

use crate::engine::live_view::FrameSink;
use crate::engine::policy::Policy;
use crate::engine::Engine;
use crate::modes::deliveries::{Begin, Deliveries};
use crate::modes::twin_report::{TwinChange, TwinSource};

/// What runs the relay's actions: the host's [`Engine`]; in tests, a browser that only counts.
pub trait Executor: Send + Sync + 'static {
    fn execute(
        &self,
        timeout: Duration,
        request: ActionRequest,
    ) -> futures::future::BoxFuture<'_, tether_protocol::ActionResult>;

    /// A person's answer to a handoff this browser runs; whether one was waiting for it.
    fn answer_handoff(&self, _answer: HandoffAnswer) -> bool {
        false
    }

    /// Told once a link to a relay runs: a person's answers can reach handoffs from then on.
    fn linked(&self) {}

    /// Starts (with a sink for its frames) or stops a session's live view.
    fn live_view(&self, _view: LiveView, _sink: Option<FrameSink>) {}

    /// A person's input in the live view of a tab handed to them.
    fn person_input(&self, _input: HandoffInput) {}
}

impl Executor for Engine {
    fn execute(
        &self,
        timeout: Duration,
        request: ActionRequest,
    ) -> futures::future::BoxFuture<'_, tether_protocol::ActionResult> {
        Box::pin(async move {
            let action_id = request.action_id.unwrap_or_default();
            let session_id = request.session_id;
            self.execute_as(
                timeout,
                &action_id,
                &session_id,
                request.peek,
                &request.action_name,
                request.params,
            )
            .await
        })
    }

    fn answer_handoff(&self, answer: HandoffAnswer) -> bool {
        self.handoffs().answer(answer)
    }

    fn linked(&self) {
        self.handoffs().set_reachable();
    }

    fn live_view(&self, view: LiveView, sink: Option<FrameSink>) {
        Engine::live_view(self, &view.session_id, view.tab_id, sink);
    }

    fn person_input(&self, input: HandoffInput) {
        Engine::person_input(self, input);
    }
}

const HEARTBEAT: Duration = Duration::from_secs(15);
const FIRST_RETRY: Duration = Duration::from_millis(250);
const MAX_RETRY: Duration = Duration::from_secs(10);
/// An action whose request names no timeout gets the relay's default.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

pub struct LinkOptions {
    /// The `/ws` URLs of the relays of the deployment, tried in turn (docs/protocol.md §14).
    pub ws_urls: Vec<String>,
    pub token: String,
    pub client_id: String,
    pub meta: HostMeta,
    pub twin: Arc<dyn TwinSource>,
    /// Told whether the host is joined to the relay, each time that changes.
    pub on_link: Option<Arc<dyn Fn(bool) + Send + Sync>>,
    /// For a `wss://` relay.
    pub tls: Arc<rustls::ClientConfig>,
    /// The browser's owner, in extension mode.
    pub owner: Option<Owner>,
    /// Learns from each `relay.joined` the origins the relay is reached at, so that the host
    /// never acts on the relay's pages however a URL spells them (docs/protocol.md §15).
    pub policy: Policy,
}

/// The browser's owner (extension mode, docs/protocol.md §12): what they ask of the relay, what they
/// answer, and the confirmation requests the relay sends them.
pub struct Owner {
    /// Their `client.settings`: sent after each join and on each change.
    pub settings: watch::Receiver<ClientSettings>,
    /// What they tell the relay (`browser_task.confirm`, `user.message`), sent as it comes.
    pub says: Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<Message>>>,
    /// Hands them what the relay has for them: a confirmation request, an agent's words.
    pub told: Told,
}

/// How the relay's words for the owner reach them.
pub type Told = Arc<dyn Fn(Message) + Send + Sync>;

#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("the relay refused this host ({}): {message}", code.as_str())]
    Refused { code: ErrorCode, message: String },
}

/// How one connection ended.
enum Ended {
    /// Joined, served, then lost: dial again soon.
    AfterJoin(String),
    /// Joined, served, then replaced by another host's join under the same clientId.
    Replaced,
    /// Could not connect or join: back off.
    BeforeJoin(String),
    /// Refused only because another connection holds this clientId.
    Held(String),
    Refused(LinkError),
}

/// How long a host replaced by another under its clientId waits before it looks again, and at
/// most: two hosts under one clientId must not take the place from each other for ever.
const REPLACED_FIRST_WAIT: Duration = Duration::from_secs(15);
const REPLACED_MAX_WAIT: Duration = Duration::from_secs(600);

/// The relay's `/ws` URL and HTTP base from what a user gives (`ws://h:p`, `http://h:p/ws`).
pub fn relay_urls(given: &str) -> (String, String) {
    let trimmed = given.trim_end_matches('/');
    let base = trimmed.strip_suffix("/ws").unwrap_or(trimmed);
    let http = base
        .replacen("ws://", "http://", 1)
        .replacen("wss://", "https://", 1);
    let ws = format!(
        "{}/ws",
        http.replacen("http://", "ws://", 1)
            .replacen("https://", "wss://", 1)
    );
    (ws, http)
}

/// The relays a user gave, comma-separated: each as its `/ws` URL and its HTTP base.
pub fn relay_list(given: &str) -> Vec<(String, String)> {
    given
        .split(',')
        .map(str::trim)
        .filter(|url| !url.is_empty())
        .map(relay_urls)
        .collect()
}

/// Serves the relay until it refuses this host; reconnects on every other failure. With several
/// relays, a host whose relay goes away joins the next one at once, and backs off only once
/// none of them answers.
pub async fn run(options: LinkOptions, executor: Arc<dyn Executor>) -> LinkError {
    executor.linked();
    let mut retry = FIRST_RETRY;
    let host = Host {
        executor,
        deliveries: Arc::default(),
    };
    let relays = options.ws_urls.len().max(1);
    let mut turn = 0;
    let mut failed_in_a_row = 0;
    // Set once another host took this clientId's place: joins then ask not to replace it.
    let mut replaced = false;
    loop {
        let ws_url = options.ws_urls.get(turn % relays).map_or("", String::as_str);
        let ended = serve_once(&options, ws_url, &host, !replaced).await;
        if let (Ended::AfterJoin(_) | Ended::Replaced, Some(on_link)) = (&ended, &options.on_link) {
            on_link(false);
        }
        turn += 1;
        match ended {
            Ended::Refused(error) => return error,
            Ended::Replaced => {
                tracing::warn!(
                    client_id = options.client_id,
                    "another host joined the relay at {ws_url} as {:?}: two hosts run under one clientId. This one steps aside and looks again every few minutes; give each host a clientId of its own",
                    options.client_id
                );
                replaced = true;
                retry = REPLACED_FIRST_WAIT;
            }
            Ended::Held(why) if replaced => {
                tracing::debug!("the clientId is still held by another host ({why})");
            }
            Ended::AfterJoin(why) => {
                tracing::warn!("left the relay at {ws_url} ({why}); joining again");
                replaced = false;
                retry = FIRST_RETRY;
                failed_in_a_row = 0;
            }
            Ended::BeforeJoin(why) | Ended::Held(why) => {
                tracing::warn!("cannot reach the relay at {ws_url} ({why})");
                failed_in_a_row += 1;
            }
        }
        if !replaced && relays > 1 && failed_in_a_row < relays {
            // Another relay of the deployment may well be there: try it now.
            continue;
        }
        failed_in_a_row = 0;
        // Jitter spreads the reconnects of many hosts after a relay restart.
        let jitter = rand::rng().random_range(0.5..1.5);
        tokio::time::sleep(retry.mul_f64(jitter)).await;
        retry = match replaced {
            true => (retry * 2).min(REPLACED_MAX_WAIT),
            false => (retry * 2).min(MAX_RETRY),
        };
    }
}

/// Whether the relay ended this connection because another host joined as this clientId.
fn replaced(error: &ActionError) -> bool {
    detail_is_true(error, "replaced")
}

/// Whether the relay refused a join only because this browser is still connected there.
fn already_connected(error: &ActionError) -> bool {
    detail_is_true(error, "alreadyConnected")
}

fn detail_is_true(error: &ActionError, name: &str) -> bool {
    error
        .details
        .as_ref()
        .and_then(|d| d.get(name))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

/// What outlives a connection: the actions' runner and their results.
struct Host {
    executor: Arc<dyn Executor>,
    deliveries: Arc<Deliveries>,
}

/// One connection: dial, join (taking the place of a connection holding this clientId only if
/// `replace`), serve.
async fn serve_once(options: &LinkOptions, ws_url: &str, host: &Host, replace: bool) -> Ended {
    // Without Nagle: each frame is small and someone waits for it.
    let connector = tokio_tungstenite::Connector::Rustls(options.tls.clone());
    let connecting = tokio_tungstenite::connect_async_tls_with_config(ws_url, None, true, Some(connector));
    let (ws, _) = match connecting.await {
        Ok(connected) => connected,
        Err(e) => return Ended::BeforeJoin(e.to_string()),
    };
    let (mut sink, mut stream) = ws.split();
    let join = Join {
        role: Role::Host,
        token: Some(options.token.clone()),
        session_id: None,
        client_id: Some(options.client_id.clone()),
        meta: Some(options.meta.clone()),
        replace: (!replace).then_some(false),
    };
    let join = Envelope::of(Message::Join(join)).with_id("join");
    if let Err(e) = sink.send(text(&join)).await {
        return Ended::BeforeJoin(e.to_string());
    }
    match next_envelope(&mut stream).await.map(Envelope::message) {
        Some(Ok(Message::Joined(joined))) => {
            for origin in &joined.relay_origins {
                options.policy.add_relay_origin(origin);
            }
        }
        Some(Ok(Message::Error(error))) if already_connected(&error) => {
            // This browser's previous link is still open on the relay (it has not seen it
            // drop yet), or another host holds the clientId: try again later.
            return Ended::Held(error.message);
        }
        Some(Ok(Message::Error(error))) => {
            return Ended::Refused(LinkError::Refused {
                code: error.code,
                message: error.message,
            });
        }
        other => return Ended::BeforeJoin(format!("no relay.joined but {other:?}")),
    }
    tracing::info!(client_id = options.client_id, "joined the relay at {ws_url}");
    if let Some(on_link) = &options.on_link {
        on_link(true);
    }

    let (outbox, mut outgoing) = mpsc::unbounded_channel::<Envelope>();
    host.deliveries.connected(outbox.clone());
    let ended = serve_joined(options, host, &outbox, (&mut sink, &mut stream), &mut outgoing).await;
    host.deliveries.disconnected();
    // What was queued but never written goes on the next connection.
    outgoing.close();
    while let Ok(envelope) = outgoing.try_recv() {
        host.deliveries.unsent(&envelope);
    }
    ended
}

type Sink = futures::stream::SplitSink<
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
    WsMessage,
>;
type Stream = futures::stream::SplitStream<
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>,
>;

/// Serves one joined connection until it ends.
async fn serve_joined(
    options: &LinkOptions,
    host: &Host,
    outbox: &mpsc::UnboundedSender<Envelope>,
    (sink, stream): (&mut Sink, &mut Stream),
    outgoing: &mut mpsc::UnboundedReceiver<Envelope>,
) -> Ended {
    let mut twin = options.twin.changes();
    if let Some(state) = options.twin.full_state().await {
        let _ = outbox.send(Envelope::of(Message::FullStateSync(state)));
    }
    let mut heartbeat = tokio::time::interval(HEARTBEAT);
    let mut settings = options.owner.as_ref().map(|o| o.settings.clone());
    if let Some(settings) = &mut settings {
        // Each new connection says the owner's settings first: as if they had just changed.
        settings.mark_changed();
    }
    let mut says = match &options.owner {
        Some(owner) => Some(owner.says.lock().await),
        None => None,
    };
    let told = options.owner.as_ref().map(|o| o.told.clone());
    loop {
        tokio::select! {
            frame = next_envelope(stream) => match frame {
                Some(envelope) => {
                    if let Some(ended) = handle(host, outbox, told.as_ref(), envelope) {
                        return ended;
                    }
                }
                None => return Ended::AfterJoin("the relay closed the connection".into()),
            },
            Ok(()) = changed(&mut settings) => {
                if let Some(settings) = &mut settings {
                    let now = settings.borrow_and_update().clone();
                    let _ = outbox.send(Envelope::of(Message::ClientSettings(now)));
                }
            }
            Some(said) = next_said(&mut says) => {
                let _ = outbox.send(Envelope::of(said));
            }
            Some(envelope) = outgoing.recv() => {
                if let Err(e) = sink.send(text(&envelope)).await {
                    host.deliveries.unsent(&envelope);
                    return Ended::AfterJoin(e.to_string());
                }
            }
            change = twin.recv() => match change {
                Ok(TwinChange::Event(event)) => {
                    let _ = outbox.send(Envelope::of(Message::TabEvent(event)));
                }
                Ok(TwinChange::Full(Some(state))) => {
                    let _ = outbox.send(Envelope::of(Message::FullStateSync(state)));
                }
                // Reports were missed (or a source asks for a resync): send the whole state.
                Ok(TwinChange::Full(None)) | Err(broadcast::error::RecvError::Lagged(_)) => {
                    if let Some(state) = options.twin.full_state().await {
                        let _ = outbox.send(Envelope::of(Message::FullStateSync(state)));
                    }
                }
                Err(broadcast::error::RecvError::Closed) => {
                    return Ended::AfterJoin("the browser's reports ended".into());
                }
            },
            _ = heartbeat.tick() => {
                let _ = outbox.send(Envelope::of(Message::Heartbeat(Empty {})));
            }
        }
    }
}

/// The owner's next change of settings; never, without an owner.
async fn changed(
    settings: &mut Option<watch::Receiver<ClientSettings>>,
) -> Result<(), watch::error::RecvError> {
    match settings {
        Some(settings) => settings.changed().await,
        None => std::future::pending().await,
    }
}

/// The next thing the owner tells the relay; never, without an owner.
async fn next_said(
    says: &mut Option<tokio::sync::MutexGuard<'_, mpsc::UnboundedReceiver<Message>>>,
) -> Option<Message> {
    match says {
        Some(says) => says.recv().await,
        None => std::future::pending().await,
    }
}

/// One frame from the relay: an action to run, a question for the owner, or something to note.
/// Handles one frame from the relay; `Some` when it ends the connection.
fn handle(
    host: &Host,
    outbox: &mpsc::UnboundedSender<Envelope>,
    told: Option<&Told>,
    envelope: Envelope,
) -> Option<Ended> {
    let id = envelope.id.clone();
    match envelope.message() {
        Ok(Message::Error(error)) if replaced(&error) => return Some(Ended::Replaced),
        Ok(Message::BrowserAction(request)) => run_action(host, outbox, id, request),
        Ok(Message::LiveViewStart(view)) => {
            let outbox = outbox.clone();
            let sink: FrameSink =
                Arc::new(move |frame| outbox.send(Envelope::of(Message::LiveViewFrame(frame))).is_ok());
            host.executor.live_view(view, Some(sink));
        }
        Ok(Message::LiveViewStop(view)) => host.executor.live_view(view, None),
        Ok(Message::HandoffInput(input)) => host.executor.person_input(input),
        Ok(Message::HandoffAnswer(answer)) => {
            if !host.executor.answer_handoff(answer) {
                tracing::info!("a person answered a handoff that no longer waits");
            }
        }
        Ok(message @ (Message::ConfirmationRequested(_) | Message::AgentMessage(_))) => match told {
            Some(told) => told(message),
            None => tracing::warn!(
                kind = message.kind(),
                "the relay has words for an owner this host lacks"
            ),
        },
        Ok(Message::Error(error)) => tracing::warn!("the relay says: {error}"),
        Ok(other) => tracing::debug!(kind = other.kind(), "ignored a frame from the relay"),
        Err(unreadable) => tracing::warn!("the relay sent a frame this host cannot read: {unreadable:?}"),
    }
    None
}

/// Acks an action at once, runs it in a task of its own (once: a repeat waits for it, or gets
/// its kept result) and answers with its result.
fn run_action(
    host: &Host,
    outbox: &mpsc::UnboundedSender<Envelope>,
    id: Option<String>,
    mut request: ActionRequest,
) {
    let action_id = request.action_id.get_or_insert_with(String::new).clone();
    let ack = Ack {
        action_id: action_id.clone(),
    };
    let _ = outbox.send(Envelope::of(Message::BrowserActionAck(ack)).reply_to(id.clone()));
    // A person's look is not an action of the session: it is neither kept nor deduplicated.
    if request.peek {
        let executor = host.executor.clone();
        let outbox = outbox.clone();
        tokio::spawn(async move {
            let (result, _) = bounded(executor.execute(timeout_of(&request), request).await);
            let _ = outbox.send(Envelope::of(Message::BrowserActionResult(result)).reply_to(id));
        });
        return;
    }
    match host.deliveries.begin(&request.session_id, &action_id, id) {
        Begin::Run => {}
        Begin::Waiting => return,
        Begin::Done(again) => {
            let _ = outbox.send(again);
            return;
        }
    }
    let (executor, deliveries) = (host.executor.clone(), host.deliveries.clone());
    tokio::spawn(async move {
        let (result, bytes) = bounded(executor.execute(timeout_of(&request), request).await);
        deliveries.finish(result, bytes);
    });
}

fn timeout_of(request: &ActionRequest) -> Duration {
    request
        .timeout_ms
        .map_or(DEFAULT_TIMEOUT, |ms| Duration::from_millis(ms.get()))
}

/// The result, made an error if it is bigger than the relay accepts (it would refuse the frame
/// and drop the link); and its size.
fn bounded(mut result: tether_protocol::ActionResult) -> (tether_protocol::ActionResult, usize) {
    // Counted as it is written, not written out: a scan's answer can be a megabyte.
    let mut counted = Counted(0);
    let size = serde_json::to_writer(&mut counted, &result).map_or(0, |()| counted.0);
    if size > MAX_ENVELOPE_BYTES - 4096 {
        result.status = ResultStatus::Error;
        result.result = None;
        result.error = Some(ActionError::new(
            ErrorCode::PayloadTooLarge,
            format!("the result is {size} bytes, over what the relay accepts; narrow the request (a scope, an xpath)"),
        ));
    }
    (result, size)
}

/// A writer that only counts the bytes written to it.
struct Counted(usize);

impl std::io::Write for Counted {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn text(envelope: &Envelope) -> WsMessage {
    WsMessage::Text(serde_json::to_string(envelope).unwrap_or_default().into())
}

/// The next envelope from the relay; `None` once the connection is gone.
async fn next_envelope<S>(stream: &mut S) -> Option<Envelope>
where
    S: futures::Stream<Item = Result<WsMessage, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
    loop {
        match stream.next().await? {
            Ok(WsMessage::Text(text)) => match serde_json::from_str(&text) {
                Ok(envelope) => return Some(envelope),
                Err(e) => tracing::warn!("the relay sent a frame that is not an envelope: {e}"),
            },
            Ok(WsMessage::Close(_)) | Err(_) => return None,
            Ok(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::relay_urls;

    #[test]
    fn relay_urls_accept_what_users_type() {
        for given in [
            "ws://127.0.0.1:17800",
            "http://127.0.0.1:17800/",
            "ws://127.0.0.1:17800/ws",
        ] {
            assert_eq!(
                relay_urls(given),
                ("ws://127.0.0.1:17800/ws".into(), "http://127.0.0.1:17800".into())
            );
        }
        assert_eq!(relay_urls("wss://relay.example/ws").1, "https://relay.example");
    }
}
