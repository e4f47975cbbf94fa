//! A `kill -9` while retention deletes sessions (docs/protocol.md §19, §22): the real relay
//! binary deletes thousands of sessions past `--session-retention` from its database, a batch
//! at a time, while new sessions are bound; it is killed once its sweeps have begun (the oldest
//! session is gone). The database it leaves is whole, every session bound before the kill is
//! there, and the relay starts on it. (Whether the kill lands between two batches or inside
//! one, no test can choose from outside; inside one is SQLite's all-or-none.)

mod common;

use common::process::RelayProcess;
use common::test_host::TestHost;
use common::ORCHESTRATOR;
use serde_json::{json, Value};

const OLD: usize = 3000;
/// Long enough for the old sessions to be bound before the first of them expires.
const RETENTION: &str = "4s";

async fn bind(http: &reqwest::Client, addr: &str, session: &str) {
    let bound = http
        .post(format!("http://{addr}/api/sessions/{session}/bind"))
        .bearer_auth(ORCHESTRATOR)
        .json(&json!({ "clientId": "keeper" }))
        .send()
        .await
        .unwrap();
    assert_eq!(bound.status().as_u16(), 200, "{session}");
}

async fn client_of(addr: &str, session: &str) -> Value {
    common::client::get_json(addr, &format!("/api/sessions/{session}")).await["clientId"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_killed_while_retention_deletes_keeps_a_whole_database() {
    let relay = RelayProcess::start(&["--session-retention", RETENTION]).await;
    let _host = TestHost::join(&relay.addr, "keeper").await;
    let http = tether_tests::client::own_http();
    for n in 0..OLD {
        bind(&http, &relay.addr, &format!("old-{n}")).await;
    }
    // New sessions are bound until the sweeps are seen deleting: then the kill.
    let mut live = Vec::new();
    loop {
        let session = format!("live-{}", live.len());
        bind(&http, &relay.addr, &session).await;
        live.push(session);
        if client_of(&relay.addr, "old-0").await.is_null() {
            break;
        }
    }
    let stopped = relay.kill9().await;

    let db = rusqlite::Connection::open(stopped.data.path().join("relay.db")).unwrap();
    let check: String = db.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(check, "ok");
    let kept = |id: &str| -> bool {
        db.query_row("SELECT count(*) FROM sessions WHERE id = ?1", [id], |r| {
            r.get::<_, i64>(0)
        })
        .unwrap()
            == 1
    };
    for session in &live {
        assert!(kept(session), "{session} was bound before the kill");
    }
    assert!(!kept("old-0"), "the sweep had deleted old-0");
    drop(db);

    let relay = stopped.restart().await;
    let last = live.last().unwrap();
    assert_eq!(
        client_of(&relay.addr, last).await,
        "keeper",
        "{last} after the restart"
    );
}
