//! How long the relay takes to start with 10,000 sessions behind it (docs/protocol.md §13: it
//! rebuilds sessions, bindings and kept results before it accepts connections).
//!
//!     cargo bench -p tether-relay --bench startup
//!
//! The data dir is written through the relay's own journal as a busy relay leaves it: each
//! session bound, then 20 actions started and finished with a result of about 400 bytes (a
//! click's or a scan's summary). Measured: `Relay::open` on it the first time (replaying every
//! record, then rewriting the journal as one record per session) and again (the steady state:
//! every later start), against the floor of reading the same file's bytes, and an empty dir.

use std::time::{Duration, Instant};

use chrono::Utc;
use serde_json::json;
use tether_protocol::result::{ActionHeader, Output};
use tether_protocol::ActionResult;
use tether_relay::artifacts::Limits;
use tether_relay::config::{Settings, Tokens};
use tether_relay::journal::{Journal, Record};
use tether_relay::state::Relay;

const SESSIONS: usize = 10_000;
const ACTIONS: usize = 20;

fn tokens() -> Tokens {
    Tokens {
        orchestrator: "o".into(),
        host: "h".into(),
        observer: "w".into(),
        bound: Default::default(),
    }
}

fn write_history(dir: &std::path::Path) {
    let journal = Journal::rewrite(dir, []).unwrap();
    for s in 0..SESSIONS {
        let session_id = format!("session-{s}");
        journal.append(&Record::Bound {
            session_id: session_id.as_str().into(),
            client_id: format!("browser-{}", s % 50).into(),
        });
        for n in 0..ACTIONS {
            let action_id = format!("act-{s}-{n}");
            journal.append(&Record::Started {
                session_id: session_id.as_str().into(),
                action_id: action_id.as_str().into(),
                action_name: "browser_click".into(),
                tab_id: Some(1),
            });
            let header = ActionHeader {
                action_id,
                action_name: "browser_click".into(),
                session_id: session_id.clone(),
                client_id: format!("browser-{}", s % 50),
            };
            let output = json!({ "tabId": 1, "clicked": { "tag": "button", "name": "Add to cart", "xpath": "/html/body/main/section[2]/div[3]/button[1]" },
                                 "navigated": false, "url": "https://shop.example/items/42?ref=list", "title": "Item 42 - Shop" });
            let result = ActionResult::new(header, Utc::now(), Utc::now(), Ok(Output::of(&output)));
            let raw = serde_json::value::to_raw_value(&result).unwrap();
            journal.append(&Record::Finished {
                session_id: session_id.as_str().into(),
                current_tab: Some(1),
                result: &raw,
            });
        }
    }
}

fn open(dir: &std::path::Path) -> Duration {
    let start = Instant::now();
    let relay = Relay::open(Settings::default(), tokens(), dir, Limits::default()).unwrap();
    let took = start.elapsed();
    assert_eq!(
        relay.sessions.count(),
        if dir.join("sessions.jsonl").metadata().unwrap().len() > 0 {
            SESSIONS
        } else {
            0
        }
    );
    took
}

fn main() {
    let empty = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    write_history(dir.path());
    let bytes = dir.path().join("sessions.jsonl").metadata().unwrap().len();
    let read_start = Instant::now();
    let read = std::fs::read(dir.path().join("sessions.jsonl")).unwrap().len();
    let floor = read_start.elapsed();
    let first = open(dir.path());
    let compacted = dir.path().join("sessions.jsonl").metadata().unwrap().len();
    let mut again: Vec<Duration> = (0..5).map(|_| open(dir.path())).collect();
    again.sort();
    let empty_open = open(empty.path());
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("{SESSIONS} sessions x {ACTIONS} actions; journal {:.1} MB ({read} read in {:.0} ms), {:.1} MB after the first start", bytes as f64 / 1e6, ms(floor), compacted as f64 / 1e6);
    println!("empty data dir           {:>8.1} ms", ms(empty_open));
    println!("first start (replay all) {:>8.1} ms", ms(first));
    println!(
        "later starts, p50 of 5   {:>8.1} ms  ({:.1}x reading the file)",
        ms(again[2]),
        ms(again[2]) / ms(floor)
    );
}
