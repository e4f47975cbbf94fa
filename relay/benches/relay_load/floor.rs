//! The floor under the relay's forwarding: a bare WebSocket router in a process of its own,
//! driven by the same load generator in the same run. It reads just enough of each frame to
//! route it (its type, `id` or `replyTo`, a session or client id), passes the text on as it
//! came, and keeps nothing else: no checks, no ids of its own, no state machine, no log, no
//! journal, no events. What the relay costs over it is what the relay does for its users.
//!
//! The bench binary runs it when started as `relay_load floor-router`; it prints its address.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::{SinkExt, StreamExt};
use serde::Deserialize;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::Message;

type Peer = mpsc::UnboundedSender<Message>;

#[derive(Default)]
struct Router {
    hosts: Mutex<HashMap<String, Peer>>,
    bound: Mutex<HashMap<String, String>>,
    /// The orchestrator waiting for the answers to each action, by the frame's id.
    pending: Mutex<HashMap<String, Peer>>,
}

/// What the router reads of a frame.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Frame {
    #[serde(rename = "type")]
    kind: String,
    id: Option<String>,
    reply_to: Option<String>,
    #[serde(default)]
    payload: Ids,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Ids {
    session_id: Option<String>,
    client_id: Option<String>,
}

/// Serves until the process is killed.
pub fn serve() {
    tether_tests::block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        println!("{}", listener.local_addr().unwrap());
        let router = Arc::new(Router::default());
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            tcp.set_nodelay(true).unwrap();
            tokio::spawn(connection(tcp, router.clone()));
        }
    });
}

async fn connection(tcp: TcpStream, router: Arc<Router>) {
    let Ok(ws) = tokio_tungstenite::accept_async(tcp).await else {
        return;
    };
    let (mut sink, mut stream) = ws.split();
    let (me, mut outbox) = mpsc::unbounded_channel::<Message>();
    tokio::spawn(async move {
        while let Some(frame) = outbox.recv().await {
            if sink.send(frame).await.is_err() {
                return;
            }
        }
    });
    while let Some(Ok(Message::Text(text))) = stream.next().await {
        let Ok(frame) = serde_json::from_str::<Frame>(&text) else {
            continue;
        };
        let reply = |kind: &str| {
            let answer = serde_json::json!({ "v": "1", "type": kind, "replyTo": frame.id, "payload": {} });
            let _ = me.send(Message::Text(answer.to_string().into()));
        };
        match frame.kind.as_str() {
            "relay.join" => {
                if let Some(client_id) = &frame.payload.client_id {
                    router.hosts.lock().unwrap().insert(client_id.clone(), me.clone());
                }
                reply("relay.joined");
            }
            "session.bind" => {
                let (Some(session), Some(client)) = (frame.payload.session_id, frame.payload.client_id)
                else {
                    continue;
                };
                if router.hosts.lock().unwrap().contains_key(&client) {
                    router.bound.lock().unwrap().insert(session, client);
                    reply("session.bound");
                } else {
                    reply("error");
                }
            }
            "browser_action" => {
                let host = frame.payload.session_id.and_then(|session| {
                    let client = router.bound.lock().unwrap().get(&session).cloned()?;
                    router.hosts.lock().unwrap().get(&client).cloned()
                });
                if let (Some(host), Some(id)) = (host, frame.id) {
                    router.pending.lock().unwrap().insert(id, me.clone());
                    let _ = host.send(Message::Text(text));
                }
            }
            "browser_action.ack" | "browser_action.result" => {
                let Some(reply_to) = frame.reply_to else { continue };
                let mut pending = router.pending.lock().unwrap();
                let orchestrator = if frame.kind == "browser_action.ack" {
                    pending.get(&reply_to).cloned()
                } else {
                    pending.remove(&reply_to)
                };
                drop(pending);
                if let Some(orchestrator) = orchestrator {
                    let _ = orchestrator.send(Message::Text(text));
                }
            }
            _ => {}
        }
    }
}
