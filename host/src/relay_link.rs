//! The host's link to the relay (PROTOCOL.md §2.1, §2.5): dial out, join as `host` with a
//! stable clientId and meta, report the twin, ack each `browser_action` on receipt and answer
//! it with its result, send heartbeats; when the link drops, dial again with capped
//! exponential backoff plus jitter. A refused token ends the link: retrying cannot fix it.

use std::sync::Arc;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use rand::Rng;
use serde_json::{json, Value};
use tether_protocol::envelope::MAX_ENVELOPE_BYTES;
use tether_protocol::{Envelope, ErrorCode};
use tokio::sync::{broadcast, mpsc};
use tokio_tungstenite::tungstenite::Message;

use crate::engine::Engine;
use crate::twin_report::{TwinChange, TwinSource};

const HEARTBEAT: Duration = Duration::from_secs(15);
const FIRST_RETRY: Duration = Duration::from_millis(250);
const MAX_RETRY: Duration = Duration::from_secs(10);
/// An action whose request names no timeout gets the relay's default.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

pub struct LinkOptions {
    /// The relay's `/ws` URL.
    pub ws_url: String,
    pub token: String,
    pub client_id: String,
    pub meta: Value,
    pub twin: Arc<dyn TwinSource>,
    /// Told whether the host is joined to the relay, each time that changes.
    pub on_link: Option<Arc<dyn Fn(bool) + Send + Sync>>,
    /// For a `wss://` relay.
    pub tls: Arc<rustls::ClientConfig>,
}

#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("the relay refused this host ({}): {message}", code.as_str())]
    Refused { code: ErrorCode, message: String },
}

/// How one connection ended.
enum Ended {
    /// Joined, served, then lost: dial again soon.
    AfterJoin(String),
    /// Could not connect or join: back off.
    BeforeJoin(String),
    Refused(LinkError),
}

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

/// Serves the relay until it refuses this host; reconnects on every other failure.
pub async fn run(options: LinkOptions, engine: Arc<Engine>) -> LinkError {
    let mut retry = FIRST_RETRY;
    loop {
        let ended = serve_once(&options, &engine).await;
        if let (Ended::AfterJoin(_), Some(on_link)) = (&ended, &options.on_link) {
            on_link(false);
        }
        match ended {
            Ended::Refused(error) => return error,
            Ended::AfterJoin(why) => {
                tracing::warn!("the link to the relay dropped ({why}); reconnecting");
                retry = FIRST_RETRY;
            }
            Ended::BeforeJoin(why) => tracing::warn!("cannot reach the relay ({why})"),
        }
        // Jitter spreads the reconnects of many hosts after a relay restart.
        let jitter = rand::rng().random_range(0.5..1.5);
        tokio::time::sleep(retry.mul_f64(jitter)).await;
        retry = (retry * 2).min(MAX_RETRY);
    }
}

async fn serve_once(options: &LinkOptions, engine: &Arc<Engine>) -> Ended {
    // Without Nagle: each frame is small and someone waits for it.
    let connector = tokio_tungstenite::Connector::Rustls(options.tls.clone());
    let connecting = tokio_tungstenite::connect_async_tls_with_config(
        options.ws_url.as_str(),
        None,
        true,
        Some(connector),
    );
    let (ws, _) = match connecting.await {
        Ok(connected) => connected,
        Err(e) => return Ended::BeforeJoin(e.to_string()),
    };
    let (mut sink, mut stream) = ws.split();
    let join = Envelope::new(
        "relay.join",
        json!({ "role": "host", "token": options.token, "clientId": options.client_id, "meta": options.meta }),
    )
    .with_id("join");
    if let Err(e) = sink.send(text(&join)).await {
        return Ended::BeforeJoin(e.to_string());
    }
    match next_envelope(&mut stream).await {
        Some(reply) if reply.kind == "relay.joined" => {}
        Some(reply) if reply.kind == "error" => {
            let code = serde_json::from_value(reply.payload["code"].clone()).unwrap_or(ErrorCode::Internal);
            let message = reply.payload["message"].as_str().unwrap_or_default().to_owned();
            return Ended::Refused(LinkError::Refused { code, message });
        }
        other => return Ended::BeforeJoin(format!("no relay.joined but {other:?}")),
    }
    tracing::info!(client_id = options.client_id, "joined the relay");
    if let Some(on_link) = &options.on_link {
        on_link(true);
    }

    let (outbox, mut outgoing) = mpsc::unbounded_channel::<Envelope>();
    let mut twin = options.twin.changes();
    if let Some(state) = options.twin.full_state().await {
        let _ = outbox.send(Envelope::new("full_state_sync", state));
    }
    let mut heartbeat = tokio::time::interval(HEARTBEAT);
    loop {
        tokio::select! {
            frame = next_envelope(&mut stream) => match frame {
                Some(envelope) => handle(engine, &outbox, envelope),
                None => return Ended::AfterJoin("the relay closed the connection".into()),
            },
            Some(envelope) = outgoing.recv() => {
                if let Err(e) = sink.send(text(&envelope)).await {
                    return Ended::AfterJoin(e.to_string());
                }
            }
            change = twin.recv() => match change {
                Ok(TwinChange::Event(payload)) => {
                    let _ = outbox.send(Envelope::new("tab_event", payload));
                }
                Ok(TwinChange::Full(payload)) if !payload.is_null() => {
                    let _ = outbox.send(Envelope::new("full_state_sync", payload));
                }
                // Reports were missed (or a source asks for a resync): send the whole state.
                Ok(TwinChange::Full(_)) | Err(broadcast::error::RecvError::Lagged(_)) => {
                    if let Some(state) = options.twin.full_state().await {
                        let _ = outbox.send(Envelope::new("full_state_sync", state));
                    }
                }
                Err(broadcast::error::RecvError::Closed) => {
                    return Ended::AfterJoin("the browser's reports ended".into());
                }
            },
            _ = heartbeat.tick() => {
                let _ = outbox.send(Envelope::new("heartbeat", json!({})));
            }
        }
    }
}

/// One frame from the relay: an action to run, or something to note.
fn handle(engine: &Arc<Engine>, outbox: &mpsc::UnboundedSender<Envelope>, envelope: Envelope) {
    match envelope.kind.as_str() {
        "browser_action" => {
            let p = &envelope.payload;
            let field = |key: &str| p.get(key).and_then(Value::as_str).unwrap_or_default().to_owned();
            let action_id = field("actionId");
            let ack = Envelope::new("browser_action.ack", json!({ "actionId": action_id }))
                .reply_to(envelope.id.clone());
            let _ = outbox.send(ack);
            let timeout = p
                .get("timeoutMs")
                .and_then(Value::as_u64)
                .map_or(DEFAULT_TIMEOUT, Duration::from_millis);
            let (session_id, action_name) = (field("sessionId"), field("actionName"));
            let params = p.get("params").cloned().unwrap_or_else(|| json!({}));
            let (engine, outbox) = (engine.clone(), outbox.clone());
            tokio::spawn(async move {
                let mut result = engine
                    .execute_within(timeout, &action_id, &session_id, &action_name, params)
                    .await;
                // The relay would refuse (and drop the link for) a bigger frame.
                let size = serde_json::to_vec(&result).map_or(0, |v| v.len());
                if size > MAX_ENVELOPE_BYTES - 4096 {
                    result.status = tether_protocol::result::ResultStatus::Error;
                    result.result = None;
                    result.error = Some(tether_protocol::ActionError::new(
                        ErrorCode::PayloadTooLarge,
                        format!("the result is {size} bytes, over what the relay accepts; narrow the request (a scope, an xpath)"),
                    ));
                }
                let reply = Envelope::new("browser_action.result", json!(result)).reply_to(envelope.id);
                let _ = outbox.send(reply);
            });
        }
        "error" => tracing::warn!("the relay says: {}", envelope.payload),
        _ => tracing::debug!(kind = envelope.kind, "ignored a frame from the relay"),
    }
}

fn text(envelope: &Envelope) -> Message {
    Message::Text(serde_json::to_string(envelope).unwrap_or_default().into())
}

/// The next envelope from the relay; `None` once the connection is gone.
async fn next_envelope<S>(stream: &mut S) -> Option<Envelope>
where
    S: futures::Stream<Item = Result<Message, tokio_tungstenite::tungstenite::Error>> + Unpin,
{
    loop {
        match stream.next().await? {
            Ok(Message::Text(text)) => match serde_json::from_str(&text) {
                Ok(envelope) => return Some(envelope),
                Err(e) => tracing::warn!("the relay sent a frame that is not an envelope: {e}"),
            },
            Ok(Message::Close(_)) | Err(_) => return None,
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
