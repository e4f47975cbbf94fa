//! A burst through two real relays on a real `nats-server` (docs/protocol.md §19): an
//! orchestrator on one relay sends every action of many sessions at once, without waiting,
//! for browsers held by the other relay. The relay owning the sessions takes what its queues
//! and its link to NATS can hold and refuses the rest with `QUEUE_FULL`: every action has
//! exactly one result, and the owner's memory stays bounded while the burst passes.
//!
//! CI sends 10,000 actions; `TETHER_BURST=100000` sends the figure docs/performance.md reports.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::client::{envelope, orchestrator};
use common::counting::{host, CountingBrowser};
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tether_tests::nats::NatsServer;
use tokio_tungstenite::tungstenite::Message;

const SESSIONS: usize = 500;
const HOSTS: usize = 4;
/// The owner relay's resident memory stays under this while the burst passes.
const RSS_BOUND_MIB: u64 = 100;
/// The longest wait for the next result: the relay is working through the burst, not stuck.
const NEXT_WITHIN: Duration = Duration::from_secs(30);

fn burst_size() -> usize {
    std::env::var("TETHER_BURST")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(10_000)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_through_two_relays_gets_one_result_each_within_bounded_memory() {
    let nats = NatsServer::start().await;
    let relays = nats.relays(2, &[]).await;
    let (hosts_relay, owner) = (&relays[0], &relays[1]);
    let browser = Arc::new(CountingBrowser::default());
    for h in 0..HOSTS {
        let client_id = format!("host-{h}");
        host(&[&hosts_relay.addr], &client_id, browser.clone());
        owner.api().wait_online(&client_id, NEXT_WITHIN).await;
    }

    let pid = owner.child.id().expect("running");
    let before_mib = tether_tests::process::rss_kib(pid) / 1024;
    let peak_kib = Arc::new(AtomicU64::new(0));
    let sampling = {
        let peak_kib = peak_kib.clone();
        // Sampled, not waited on: the burst's end is told by its results.
        tokio::spawn(async move {
            let mut every = tokio::time::interval(Duration::from_millis(20));
            loop {
                every.tick().await;
                peak_kib.fetch_max(tether_tests::process::rss_kib(pid), Ordering::Relaxed);
            }
        })
    };

    let total = burst_size();
    let (mut sink, mut stream) = orchestrator(&owner.addr).await.split();
    let sending = tokio::spawn(async move {
        for n in 0..total {
            let s = n % SESSIONS;
            let payload = json!({ "sessionId": format!("burst-{s}"), "clientId": format!("host-{}", s % HOSTS),
                "actionId": format!("a-{n}"), "actionName": "browser_click",
                "params": { "tabId": 1, "xpath": "//a" } });
            let frame = envelope("browser_action", &format!("r-{n}"), payload).to_string();
            sink.feed(Message::Text(frame.into())).await.unwrap();
        }
        sink.flush().await.unwrap();
        sink
    });
    let mut results: HashMap<String, Value> = HashMap::new();
    while results.len() < total {
        let next = tokio::time::timeout(NEXT_WITHIN, stream.next()).await;
        let Ok(Some(Ok(Message::Text(text)))) = next else {
            panic!("the relay stopped answering after {} results", results.len());
        };
        let reply: Value = serde_json::from_str(&text).unwrap();
        if reply["type"] == "browser_action.result" {
            let id = reply["replyTo"].as_str().unwrap().to_owned();
            let result = reply["payload"].clone();
            assert!(
                results.insert(id, result).is_none(),
                "two results for one request: {reply}"
            );
        }
    }
    drop(sending.await);
    sampling.abort();

    let mut by_outcome: HashMap<String, usize> = HashMap::new();
    for result in results.values() {
        let outcome = match result["status"].as_str() {
            Some("success") => "success".to_owned(),
            _ => result["error"]["code"].as_str().unwrap_or("?").to_owned(),
        };
        *by_outcome.entry(outcome).or_default() += 1;
    }
    let peak_mib = peak_kib.load(Ordering::Relaxed) / 1024;
    let after_mib = tether_tests::process::rss_kib(pid) / 1024;
    println!("burst of {total}: {by_outcome:?}; owner relay RSS {before_mib} MiB before, peak {peak_mib} MiB, {after_mib} MiB after");
    let refused = by_outcome.get("QUEUE_FULL").copied().unwrap_or(0);
    let succeeded = by_outcome.get("success").copied().unwrap_or(0);
    assert_eq!(
        succeeded + refused,
        total,
        "each ran or was refused as too much: {by_outcome:?}"
    );
    assert_eq!(
        browser.ran.lock().unwrap().len(),
        succeeded,
        "each success ran once, each refusal not at all"
    );
    assert!(peak_mib < RSS_BOUND_MIB, "the owner relay grew to {peak_mib} MiB");
}
