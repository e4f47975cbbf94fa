//! The load test across a `kill -9` of the real relay binary (docs/protocol.md §13): 100 sessions
//! x 50 actions; the relay dies with actions queued, in flight and finished-but-unreported,
//! and comes back on the same port and data dir. The orchestrator repeats, by `actionId`,
//! every action it has no result for: each ends in exactly one result, none runs twice, and
//! each session's actions run in the order they were sent.
//!
//! The hosts are the real host's link to the relay (`tether_host::modes::relay_link`, with its kept
//! results); only the browser behind it is a stand-in that counts what it is asked to run.

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use common::client::{envelope, orchestrator, Ws};
use common::counting::{host, CountingBrowser};
use common::process::RelayProcess;
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

const SESSIONS: usize = 100;
const ACTIONS: usize = 50;
const HOSTS: usize = 2;
/// The relay is killed once this many results have come back.
const KILL_AFTER: usize = SESSIONS * ACTIONS * 2 / 5;
const BACK_WITHIN: Duration = Duration::from_secs(20);

fn action(s: usize, n: usize) -> (String, Value) {
    let id = format!("{s}-{n}");
    let payload = json!({ "sessionId": format!("load-{s}"), "clientId": format!("host-{}", s % HOSTS),
        "actionId": id, "actionName": "browser_click", "params": { "tabId": 1, "xpath": "//a" } });
    (id, payload)
}

/// Sends `actions` (in order) and collects results into `results` until `until` of them are in
/// or the relay closes the socket.
async fn exchange(ws: Ws, actions: Vec<(String, Value)>, results: &mut HashMap<String, Value>, until: usize) {
    let (mut sink, mut stream) = ws.split();
    let sending = tokio::spawn(async move {
        for (id, payload) in actions {
            let frame = envelope("browser_action", &id, payload).to_string();
            if sink.feed(Message::Text(frame.into())).await.is_err() {
                break;
            }
        }
        let _ = sink.flush().await;
        sink
    });
    while results.len() < until {
        let Some(Ok(Message::Text(text))) = stream.next().await else {
            break;
        };
        let reply: Value = serde_json::from_str(&text).unwrap();
        if reply["type"] == "browser_action.result" {
            let id = reply["replyTo"].as_str().unwrap().to_owned();
            assert!(
                results.insert(id, reply["payload"].clone()).is_none(),
                "two results for one request: {reply}"
            );
        }
    }
    drop(sending.await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_killed_under_load_loses_nothing_and_runs_nothing_twice() {
    let relay = RelayProcess::start(&[]).await;
    let browser = Arc::new(CountingBrowser::default());
    for h in 0..HOSTS {
        host(&[&relay.addr], &format!("host-{h}"), browser.clone());
        relay.api().wait_online(&format!("host-{h}"), BACK_WITHIN).await;
    }
    let all: Vec<(String, Value)> = (0..ACTIONS)
        .flat_map(|n| (0..SESSIONS).map(move |s| action(s, n)))
        .collect();
    let mut results = HashMap::new();
    exchange(
        orchestrator(&relay.addr).await,
        all.clone(),
        &mut results,
        KILL_AFTER,
    )
    .await;

    let relay = relay.kill9().await.restart().await;
    for h in 0..HOSTS {
        relay.api().wait_online(&format!("host-{h}"), BACK_WITHIN).await;
    }
    let left: Vec<_> = all
        .iter()
        .filter(|(id, _)| !results.contains_key(id))
        .cloned()
        .collect();
    let repeated = left.len();
    assert!(repeated > 0);
    let mut after = HashMap::new();
    exchange(orchestrator(&relay.addr).await, left, &mut after, repeated).await;
    assert_eq!(after.len(), repeated, "every repeat got its result");
    results.extend(after);

    for (id, result) in &results {
        assert_eq!(
            (result["status"].as_str(), result["actionId"].as_str()),
            (Some("success"), Some(id.as_str())),
            "{result}"
        );
    }
    let ran = browser.ran.lock().unwrap().clone();
    let mut times: HashMap<&(String, String), usize> = HashMap::new();
    for key in &ran {
        *times.entry(key).or_default() += 1;
    }
    let twice: Vec<_> = times.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "ran twice: {twice:?}");
    assert_eq!(ran.len(), SESSIONS * ACTIONS, "each action ran once");
    let mut next: HashMap<&str, usize> = HashMap::new();
    for (session, id) in &ran {
        let n: usize = id.split_once('-').unwrap().1.parse().unwrap();
        let want = next.entry(session).or_default();
        assert_eq!(n, *want, "{session} ran its actions in order");
        *want += 1;
    }
}
