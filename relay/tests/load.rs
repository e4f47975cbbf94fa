//! 1000 sessions x 100 actions through the relay to test hosts, every session keeping its
//! actions queued ahead: none lost, none doubled, each session's results in the order its
//! actions were sent.

mod common;

use std::collections::HashMap;

use common::client::{envelope, orchestrator, recv, send};
use common::start;
use common::test_host::TestHost;
use futures::{SinkExt, StreamExt};
use serde_json::json;
use tether_relay::config::Settings;
use tether_relay::stores::artifacts::Limits;
use tokio_tungstenite::tungstenite::Message;

const SESSIONS: usize = 1000;
const ACTIONS: usize = 100;
const HOSTS: usize = 4;
const ORCHESTRATORS: usize = 4;

/// Sends every action of its sessions at once (the relay queues them), then checks what
/// comes back; returns how many results arrived.
async fn orchestrate(addr: String, sessions: Vec<usize>) -> usize {
    let count = sessions.len();
    let ws = orchestrator(&addr).await;
    let (mut sink, mut stream) = ws.split();
    let sending = tokio::spawn(async move {
        for n in 0..ACTIONS {
            for &s in &sessions {
                let payload = json!({ "sessionId": format!("load-{s}"), "actionId": format!("{s}-{n}"),
                    "actionName": "browser_click", "params": { "tabId": 1, "xpath": format!("//a[{n}]") } });
                let frame = envelope("browser_action", &format!("{s}-{n}"), payload);
                sink.feed(Message::Text(frame.to_string().into())).await.unwrap();
            }
            sink.flush().await.unwrap();
        }
        sink
    });
    let mut next: HashMap<String, usize> = HashMap::new();
    let mut results = 0;
    let expected = count * ACTIONS;
    while results < expected {
        let text = match stream.next().await {
            Some(Ok(Message::Text(text))) => text,
            other => panic!("the relay closed an orchestrator: {other:?}"),
        };
        let reply: serde_json::Value = serde_json::from_str(&text).unwrap();
        if reply["type"] != "browser_action.result" {
            continue;
        }
        let p = &reply["payload"];
        assert_eq!(p["status"], "success", "{reply}");
        assert_eq!(
            reply["replyTo"], p["actionId"],
            "each result answers its own request"
        );
        let (session, n) = p["actionId"].as_str().unwrap().split_once('-').unwrap();
        let n: usize = n.parse().unwrap();
        let want = next.entry(session.to_owned()).or_default();
        assert_eq!(
            n, *want,
            "session {session}: results in order, none lost or doubled"
        );
        assert_eq!(
            p["result"]["echo"]["xpath"],
            format!("//a[{n}]"),
            "the host ran this very action"
        );
        *want += 1;
        results += 1;
    }
    drop(sending.await.unwrap());
    results
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_thousand_actions_none_lost_none_doubled_in_order() {
    let settings = Settings {
        queue_limit: ACTIONS,
        ..Settings::default()
    };
    let (addr, _) = start(settings, Limits::default()).await;
    let addr = addr.to_string();
    for h in 0..HOSTS {
        TestHost::join(&addr, &format!("host-{h}")).await.serve_echo();
    }
    let mut binder = orchestrator(&addr).await;
    for s in 0..SESSIONS {
        let bind = json!({ "sessionId": format!("load-{s}"), "clientId": format!("host-{}", s % HOSTS) });
        send(&mut binder, envelope("session.bind", "b", bind)).await;
        assert_eq!(recv(&mut binder).await["type"], "session.bound");
    }
    let tasks: Vec<_> = (0..ORCHESTRATORS)
        .map(|o| {
            let mine: Vec<usize> = (0..SESSIONS).filter(|s| s % ORCHESTRATORS == o).collect();
            tokio::spawn(orchestrate(addr.clone(), mine))
        })
        .collect();
    let mut total = 0;
    for task in tasks {
        total += task.await.unwrap();
    }
    assert_eq!(total, SESSIONS * ACTIONS);
}
