//! How long the relay binary takes to answer `/healthz`, and what it holds, with 1,000,000 kept
//! actions behind it against an empty data dir (docs/protocol.md §22: start-up does not grow
//! with what is kept, RSS within 10 % of an empty relay's).
//!
//!     cargo bench -p tether-relay --bench startup
//!
//! The data dir is written through the relay's own store as a busy relay leaves it: 100,000
//! sessions, each bound, with 10 actions started and finished with a result of about 400 bytes
//! (a click's summary). Then the real `tether-relay` is started on it and on an empty dir, three
//! times each, alternating: the time from spawning it to its first `/healthz` answer (over
//! HTTP, from outside), its RSS then, and the data dir's size.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::Utc;
use serde_json::json;
use tether_protocol::result::{ActionHeader, Output};
use tether_protocol::ActionResult;
use tether_relay::stores::store::{Action, Head, Standing, Store};
use tether_tests::process::RelayProcess;

const SESSIONS: usize = 100_000;
const ACTIONS: usize = 10;

fn result(session_id: &str, action_id: &str) -> tether_relay::stores::store::Stored {
    let header = ActionHeader {
        action_id: action_id.to_owned(),
        action_name: "browser_click".into(),
        session_id: session_id.to_owned(),
        client_id: "browser-1".into(),
    };
    let output = json!({ "tabId": 1, "clicked": { "tag": "button", "name": "Add to cart", "xpath": "/html/body/main/section[2]/div[3]/button[1]" },
                         "navigated": false, "url": "https://shop.example/items/42?ref=list", "title": "Item 42 - Shop" });
    let result = ActionResult::new(header, Utc::now(), Utc::now(), Ok(Output::of(&output)));
    Arc::from(serde_json::value::to_raw_value(&result).unwrap())
}

async fn write_history(dir: &std::path::Path) {
    let store = Store::open(dir).unwrap();
    let head = |standing| Head {
        client_id: Some(format!("browser-{}", 1)),
        current_tab: Some(1),
        standing,
        active_at: Utc::now().timestamp_millis(),
        ..Head::default()
    };
    for s in 0..SESSIONS {
        let session_id = format!("session-{s}");
        let mut last = store.keep(&session_id, Some(head(Standing::Created)), None);
        for n in 0..ACTIONS {
            let action_id = format!("act-{s}-{n}");
            let started = Action::Started {
                action_id: action_id.clone(),
                action_name: "browser_click".into(),
                tab_id: Some(1),
            };
            store.keep(&session_id, None, Some(started));
            let finished = Action::Finished {
                result: result(&session_id, &action_id),
                action_id,
                forgotten: None,
                current_tab: Some(1),
            };
            last = store.keep(&session_id, Some(head(Standing::Ongoing)), Some(finished));
        }
        // Paced by the writer, a thousand sessions at a time.
        if s % 1000 == 999 {
            last.wait().await;
        }
    }
    let (sessions, actions) = store.counts();
    assert_eq!(
        (sessions, actions),
        (SESSIONS as u64, (SESSIONS * ACTIONS) as u64)
    );
}

fn dir_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok()?.metadata().ok())
        .filter(|m| m.is_file())
        .map(|m| m.len())
        .sum()
}

/// Starts the relay on a copy-free reuse of `data`; time to `/healthz` and RSS (KiB) then.
async fn start(data: tempfile::TempDir) -> (Duration, u64, tempfile::TempDir) {
    let start = Instant::now();
    let relay = RelayProcess::start_in(data, &[]).await;
    let health = tether_tests::client::own_http()
        .get(format!("http://{}/healthz", relay.addr))
        .send()
        .await
        .unwrap();
    assert!(health.status().is_success());
    let took = start.elapsed();
    let rss = relay.rss_kib();
    let stopped = relay.kill9().await;
    (took, rss, stopped.data)
}

#[tokio::main]
async fn main() {
    let mut full = tempfile::tempdir().unwrap();
    let mut empty = tempfile::tempdir().unwrap();
    let wrote = Instant::now();
    write_history(full.path()).await;
    println!(
        "{SESSIONS} sessions x {ACTIONS} actions written in {:.1} s; data dir {:.1} MB ({:.0} B per kept action, whose result is {} B)",
        wrote.elapsed().as_secs_f64(),
        dir_bytes(full.path()) as f64 / 1e6,
        dir_bytes(full.path()) as f64 / (SESSIONS * ACTIONS) as f64,
        result("session-99999", "act-99999-9").get().len()
    );
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("| data dir | to /healthz ms | RSS MiB |\n|---|---:|---:|");
    for _ in 0..3 {
        let (took, rss, back) = start(empty).await;
        empty = back;
        println!("| empty | {:.1} | {:.1} |", ms(took), rss as f64 / 1024.0);
        let (took, rss, back) = start(full).await;
        full = back;
        println!(
            "| 1,000,000 kept actions | {:.1} | {:.1} |",
            ms(took),
            rss as f64 / 1024.0
        );
    }
}
