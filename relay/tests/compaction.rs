//! A `kill -9` in the middle of a journal compaction (docs/protocol.md §19): the real relay
//! binary compacts its journal while actions go on (their results are large, so it grows past
//! the compaction threshold every few dozen actions); it is killed while the compacted journal
//! is being written (`sessions.jsonl.new` is there, and still is once the process is dead),
//! started again on the same data dir, and every session is back: its binding, and a result
//! for every action it was sent, those answered before the kill repeated from what the relay
//! kept, none run twice by the browser.

mod common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::client::{envelope, orchestrator, Ws};
use common::counting::{host, pad, CountingBrowser};
use common::process::RelayProcess;
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;

/// Sessions a round sends to, each its own: a session keeps its last 64 results, so each is
/// sent fewer, and every one can be repeated.
const SESSIONS: usize = 4;
const PER_SESSION: usize = 60;
/// Bytes each result carries: a round's 240 results grow the journal by 11 MiB, past the
/// 4 MiB at which it is compacted, and the snapshot it writes takes milliseconds.
const PAD: usize = 48 * 1024;
/// Rounds, each ending with the relay killed once a compaction began (caught in it or not).
const ROUNDS: usize = 6;
const BACK_WITHIN: Duration = Duration::from_secs(20);

fn session(round: usize, s: usize) -> String {
    format!("compacted-{round}-{s}")
}

fn action(round: usize, n: usize) -> (String, Value) {
    let id = format!("{round}-{n}");
    let session = session(round, n % SESSIONS);
    let payload = json!({ "sessionId": session, "clientId": "host-0", "actionId": id,
        "actionName": "browser_click", "params": { "tabId": 1, "xpath": pad(PAD) } });
    (id, payload)
}

/// Sends `actions` one after another, each once the one before is answered, until all are
/// answered or the relay is gone; the results by action id.
async fn run(ws: Ws, actions: &[(String, Value)], results: &mut HashMap<String, Value>) {
    let (mut sink, mut stream) = ws.split();
    for (id, payload) in actions {
        let frame = envelope("browser_action", id, payload.clone()).to_string();
        if sink.send(Message::Text(frame.into())).await.is_err() {
            return;
        }
        loop {
            let Some(Ok(Message::Text(text))) = stream.next().await else {
                return;
            };
            let reply: Value = serde_json::from_str(&text).unwrap();
            if reply["type"] == "browser_action.result" {
                assert_eq!(reply["replyTo"], id.as_str(), "{reply}");
                results.insert(id.clone(), reply["payload"].clone());
                break;
            }
        }
    }
}

/// Kills the relay with SIGKILL the moment a compaction is writing its new journal, unless
/// `stop` is set first; whether it killed.
fn kill_when_compacting(pid: u32, data: &Path, stop: Arc<AtomicBool>) -> tokio::task::JoinHandle<bool> {
    let compacting = data.join("sessions.jsonl.new");
    tokio::task::spawn_blocking(move || {
        // Watching a file appear: nothing can tell of it sooner than looking.
        while !compacting.exists() {
            if stop.load(Ordering::Relaxed) {
                return false;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        let killed = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
        killed.is_ok_and(|status| status.success())
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_killed_while_compacting_its_journal_keeps_every_session() {
    let mut relay = RelayProcess::start(&[]).await;
    let browser = Arc::new(CountingBrowser::default());
    host(&[&relay.addr], "host-0", browser.clone());
    relay.api().wait_online("host-0", BACK_WITHIN).await;

    let (mut sent, mut caught) = (Vec::new(), false);
    for round in 0..ROUNDS {
        let pid = relay.child.id().expect("running");
        let stop = Arc::new(AtomicBool::new(false));
        let killer = kill_when_compacting(pid, relay.data.path(), stop.clone());
        let actions: Vec<_> = (0..SESSIONS * PER_SESSION).map(|n| action(round, n)).collect();
        let mut answered = HashMap::new();
        run(orchestrator(&relay.addr).await, &actions, &mut answered).await;
        sent.push((round, actions));
        stop.store(true, Ordering::Relaxed);
        if !killer.await.unwrap() {
            // The round ended before a compaction began: there is nothing to catch.
            continue;
        }
        let stopped = relay.kill9().await;
        caught = stopped.data.path().join("sessions.jsonl.new").exists();
        relay = stopped.restart().await;
        relay.api().wait_online("host-0", BACK_WITHIN).await;
        all_back(&relay, &sent, &browser).await;
        if caught {
            break;
        }
    }
    assert!(
        caught,
        "no kill landed in the middle of a compaction in {ROUNDS} rounds"
    );
}

/// Every session is bound to its host again, and every action sent has its one result: those
/// answered before from what was kept, the rest run now, once.
async fn all_back(relay: &RelayProcess, sent: &[(usize, Vec<(String, Value)>)], browser: &CountingBrowser) {
    for (round, _) in sent {
        for s in 0..SESSIONS {
            let state = relay
                .api()
                .get(&format!("/api/sessions/{}", session(*round, s)))
                .await;
            assert_eq!(state["clientId"], "host-0", "the binding is back: {state}");
        }
    }
    let sent: Vec<_> = sent
        .iter()
        .flat_map(|(_, actions)| actions.iter().cloned())
        .collect();
    let mut results = HashMap::new();
    run(orchestrator(&relay.addr).await, &sent, &mut results).await;
    assert_eq!(results.len(), sent.len(), "every repeat got its result");
    for (id, result) in &results {
        assert_eq!(result["status"], "success", "{result}");
        assert_eq!(
            result["result"]["pad"].as_str().map(str::len),
            Some(PAD),
            "{id}: the kept result whole"
        );
        assert_eq!(browser.ran(id), 1, "{id} ran once");
    }
}
