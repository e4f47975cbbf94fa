//! An orchestrator of the relay as one in any language would be: its WebSocket (raw JSON
//! envelopes in, raw JSON out) and its HTTP calls.

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

use crate::tokens::ORCHESTRATOR;

pub type Ws = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// The kit's one HTTP client. Making a `reqwest::Client` costs milliseconds (it loads the
/// system's root certificates: ~6 ms a call in the modes bench, where it hid extension mode's
/// cost behind the bench's own), so it is made once. It keeps no idle connections: tests run
/// on runtimes of their own, and a pooled connection must not outlive the runtime it was
/// made on.
pub fn http() -> &'static reqwest::Client {
    static CLIENT: std::sync::LazyLock<reqwest::Client> = std::sync::LazyLock::new(|| {
        http_builder()
            .pool_max_idle_per_host(0)
            .build()
            .expect("an HTTP client")
    });
    &CLIENT
}

/// A client of the caller's own, with a pool of its own.
pub fn own_http() -> reqwest::Client {
    http_builder().build().expect("an HTTP client")
}

/// A builder for a client of the caller's own. reqwest is built without a TLS provider (the
/// workspace's one is ring: tether-host's `tls`), so ring is made the process's default first.
pub fn http_builder() -> reqwest::ClientBuilder {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
}

/// Longest a test waits for one frame: a relay that never answers fails the test, not CI.
pub const FRAME_WAIT: Duration = Duration::from_secs(20);

pub async fn connect(addr: &str) -> Ws {
    // Without Nagle, as real peers should: each frame is small and someone waits for it.
    tokio_tungstenite::connect_async_with_config(format!("ws://{addr}/ws"), None, true)
        .await
        .unwrap()
        .0
}

pub async fn send(ws: &mut Ws, envelope: Value) {
    ws.send(Message::Text(envelope.to_string().into())).await.unwrap();
}

/// The next envelope; panics if the relay closed instead, or said nothing for too long.
pub async fn recv(ws: &mut Ws) -> Value {
    let next = async {
        loop {
            match ws.next().await.expect("the relay closed the connection").unwrap() {
                Message::Text(text) => return serde_json::from_str(&text).unwrap(),
                Message::Close(_) => panic!("the relay closed the connection"),
                _ => {}
            }
        }
    };
    tokio::time::timeout(FRAME_WAIT, next)
        .await
        .expect("no frame from the relay in time")
}

/// The next envelope of type `kind`, skipping others.
pub async fn recv_type(ws: &mut Ws, kind: &str) -> Value {
    loop {
        let envelope = recv(ws).await;
        if envelope["type"] == kind {
            return envelope;
        }
    }
}

/// Whether the relay closes the connection (rather than sending another frame).
pub async fn closes(ws: &mut Ws) -> bool {
    let next = async {
        loop {
            match ws.next().await {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return true,
                Some(Ok(Message::Text(_))) => return false,
                Some(Ok(_)) => {}
            }
        }
    };
    tokio::time::timeout(FRAME_WAIT, next)
        .await
        .expect("the relay neither closed nor spoke")
}

pub fn join(role: &str, token: &str) -> Value {
    json!({ "v": "1", "type": "relay.join", "id": "j1", "payload": { "role": role, "token": token } })
}

pub fn envelope(kind: &str, id: &str, payload: Value) -> Value {
    json!({ "v": "1", "type": kind, "id": id, "payload": payload })
}

/// An orchestrator that has joined.
pub async fn orchestrator(addr: &str) -> Ws {
    let mut ws = connect(addr).await;
    send(&mut ws, join("orchestrator", ORCHESTRATOR)).await;
    assert_eq!(recv(&mut ws).await["type"], "relay.joined");
    ws
}

/// Sends a request and returns the reply to it (skipping events and other replies).
pub async fn request(ws: &mut Ws, kind: &str, id: &str, payload: Value) -> Value {
    send(ws, envelope(kind, id, payload)).await;
    loop {
        let reply = recv(ws).await;
        if reply["replyTo"] == id {
            return reply;
        }
    }
}

/// `browser_action` over the socket: returns (ack, result) envelopes.
pub async fn act(ws: &mut Ws, id: &str, payload: Value) -> (Option<Value>, Value) {
    send(ws, envelope("browser_action", id, payload)).await;
    let mut ack = None;
    loop {
        let reply = recv(ws).await;
        if reply["replyTo"] != id {
            continue;
        }
        match reply["type"].as_str() {
            Some("browser_action.ack") => ack = Some(reply),
            Some("browser_action.result") | Some("error") => return (ack, reply),
            other => panic!("unexpected reply {other:?}: {reply}"),
        }
    }
}

/// `POST /api/browser/action`: (status, body).
pub async fn post_action(addr: &str, token: &str, body: Value) -> (u16, Value) {
    let response = http()
        .post(format!("http://{addr}/api/browser/action"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap())
}

/// A GET with the orchestrator's token, as JSON.
pub async fn get_json(addr: &str, path: &str) -> Value {
    http()
        .get(format!("http://{addr}{path}"))
        .bearer_auth(ORCHESTRATOR)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap()
}

/// The relay's `/metrics` text, read with `token`.
pub async fn metrics(addr: &str, token: &str) -> String {
    http()
        .get(format!("http://{addr}/metrics"))
        .bearer_auth(token)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap()
}

/// An orchestrator that has joined and subscribed to `filter` (`{}`: everything).
pub async fn subscribed(addr: &str, filter: Value) -> Ws {
    let mut ws = orchestrator(addr).await;
    let reply = request(&mut ws, "subscribe", "subscribe", filter).await;
    assert_eq!(reply["type"], "subscribed", "{reply}");
    ws
}

/// Downloads an artifact by the URL a result carries, with no token; its type and bytes.
pub async fn download(url: &str) -> (String, Vec<u8>) {
    let response = crate::client::own_http().get(url).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 200, "{url}");
    let kind = response.headers()["content-type"].to_str().unwrap().to_owned();
    (kind, response.bytes().await.unwrap().to_vec())
}

/// `PUT /artifacts?name=` with the orchestrator's token, as an orchestrator stores a file for
/// a page: the stored artifact's id.
pub async fn upload_named(addr: &str, name: &str, content_type: &str, bytes: Vec<u8>) -> String {
    let mut url = url::Url::parse(&format!("http://{addr}/artifacts")).unwrap();
    url.query_pairs_mut().append_pair("name", name);
    let response = http()
        .put(url)
        .bearer_auth(ORCHESTRATOR)
        .header("content-type", content_type)
        .body(bytes)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200, "upload {name}");
    let stored: Value = response.json().await.unwrap();
    stored["artifactId"].as_str().unwrap().to_owned()
}

/// One SSE event: (event, id, data).
pub type Sse = (String, Option<u64>, Value);

/// Reads a session's SSE stream (docs/protocol.md §3), as a browser's EventSource would.
pub struct SseStream {
    response: reqwest::Response,
    buffer: String,
}

impl SseStream {
    pub async fn open(addr: &str, session: &str, last_event_id: Option<u64>) -> Self {
        let mut request = http()
            .get(format!("http://{addr}/api/sessions/{session}/events"))
            .bearer_auth(ORCHESTRATOR);
        if let Some(id) = last_event_id {
            request = request.header("Last-Event-ID", id.to_string());
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status().as_u16(), 200);
        assert!(response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream"));
        Self {
            response,
            buffer: String::new(),
        }
    }

    /// The next event, or None when the stream ends.
    pub async fn next(&mut self) -> Option<Sse> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let (mut event, mut id, mut data) = (String::new(), None, String::new());
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event:") {
                        event = v.trim().to_owned();
                    } else if let Some(v) = line.strip_prefix("id:") {
                        id = v.trim().parse().ok();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim_start());
                    }
                }
                if event.is_empty() {
                    continue;
                }
                return Some((event, id, serde_json::from_str(&data).unwrap()));
            }
            let chunk = tokio::time::timeout(FRAME_WAIT, self.response.chunk())
                .await
                .expect("no SSE event in time")
                .unwrap()?;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    pub async fn next_of(&mut self, kind: &str) -> Sse {
        loop {
            let event = self.next().await.expect("the stream ended");
            if event.0 == kind {
                return event;
            }
        }
    }
}
