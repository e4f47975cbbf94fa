//! What a caller with a token can make the real `tether-relay` binary hold (docs/protocol.md §15,
//! "bounded after it is known"): readers replaying a long session log hold a page of it each,
//! a caller naming thousands of sessions cannot take the relay's file descriptors, and sessions
//! left idle past `--session-retention` are forgotten, in memory, files and the store (§19, §22).

use std::io::Write as _;
use std::time::Duration;

use serde_json::json;

mod common;

use common::client::{connect, join, recv, send};
use common::process::RelayProcess;
use common::test_host::TestHost;
use common::ORCHESTRATOR;

/// A session log of about `bytes`: results of ~1 KiB each.
fn long_log(data: &std::path::Path, session: &str, bytes: usize) {
    std::fs::create_dir_all(data.join("logs")).unwrap();
    let mut file =
        std::io::BufWriter::new(std::fs::File::create(data.join(format!("logs/{session}.jsonl"))).unwrap());
    let filler = "x".repeat(900);
    let (mut written, mut index) = (0, 0u64);
    while written < bytes {
        let line = json!({
            "sessionId": session, "eventIndex": index, "timestamp": "2026-11-26T10:00:00.000Z",
            "direction": "out", "type": "browser_action.result",
            "payload": { "actionId": format!("a{index}"), "actionName": "browser_click", "sessionId": session,
                "clientId": "c", "status": "success", "result": { "clicked": true, "note": filler },
                "startedAt": "2026-11-26T10:00:00.000Z", "finishedAt": "2026-11-26T10:00:00.001Z", "durationMs": 1 }
        })
        .to_string();
        writeln!(file, "{line}").unwrap();
        written += line.len() + 1;
        index += 1;
    }
}

#[tokio::test]
async fn readers_replaying_a_long_log_hold_a_page_each() {
    let data = tempfile::tempdir().unwrap();
    long_log(data.path(), "long", 30 << 20);
    let relay = RelayProcess::start_in(data, &[]).await;
    let before = relay.rss_kib();
    let mut readers = Vec::new();
    for _ in 0..20 {
        let response = tether_tests::client::own_http()
            .get(format!("http://{}/api/sessions/long/events?from=0", relay.addr))
            .bearer_auth(ORCHESTRATOR)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), 200);
        readers.push(response);
    }
    // Each reader takes in 2 MiB of the replay (a few of the relay's pages), then stops reading.
    for reader in &mut readers {
        let mut got = 0;
        while got < 2 << 20 {
            let chunk = tokio::time::timeout(Duration::from_secs(30), reader.chunk())
                .await
                .expect("the replay goes on")
                .unwrap()
                .expect("more of the replay");
            got += chunk.len();
        }
    }
    let added = relay.rss_kib().saturating_sub(before);
    assert!(added < 50 * 1024, "20 readers of a 30 MB log added {added} KiB");
}

#[tokio::test]
async fn naming_thousands_of_sessions_leaves_the_relay_serving() {
    // As under the common `ulimit -n 1024`.
    let relay = RelayProcess::start_with_open_files(1024, &[]).await;
    let mut observer = connect(&relay.addr).await;
    send(&mut observer, join("observer", ORCHESTRATOR)).await;
    recv(&mut observer).await;
    // In batches, each answered before the next (a peer that never reads its answers is cut
    // off once its outbox is full, which is another bound).
    for batch in 0..10 {
        for n in batch * 500..(batch + 1) * 500 {
            let said = json!({ "v": "1", "type": "user.message", "id": format!("m{n}"),
                "payload": { "sessionId": format!("named-{n}"), "text": "hello" } });
            send(&mut observer, said).await;
        }
        let last = format!("m{}", (batch + 1) * 500 - 1);
        loop {
            let answer = recv(&mut observer).await;
            assert_ne!(answer["type"], "error", "{answer}");
            if answer["replyTo"] == last.as_str() {
                break;
            }
        }
    }
    let health = tokio::time::timeout(
        Duration::from_secs(1),
        tether_tests::client::own_http()
            .get(format!("http://{}/healthz", relay.addr))
            .send(),
    )
    .await
    .expect("/healthz within 1 s")
    .unwrap();
    assert_eq!(health.status().as_u16(), 200);
    let open = std::fs::read_dir(format!("/proc/{}/fd", relay.child.id().unwrap()))
        .unwrap()
        .count();
    assert!(open < 512, "{open} files open");
    // And its log of a session named last is whole.
    let log = relay.data.path().join("logs/named-4999.jsonl");
    assert!(std::fs::read_to_string(log).unwrap().contains("hello"));
}

/// The session logs the relay holds open (its sockets come and go with the test's requests).
fn logs_open(relay: &RelayProcess) -> usize {
    let logs = relay.data.path().join("logs");
    std::fs::read_dir(format!("/proc/{}/fd", relay.child.id().unwrap()))
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|target| target.starts_with(&logs))
        .count()
}

#[tokio::test]
async fn sessions_left_idle_are_forgotten_with_their_files_and_what_the_store_kept() {
    let relay = RelayProcess::start(&["--session-retention", "1s"]).await;
    let _host = TestHost::join(&relay.addr, "keeper").await;
    let http = tether_tests::client::own_http();
    for n in 0..300 {
        let bound = http
            .post(format!("http://{}/api/sessions/idle-{n}/bind", relay.addr))
            .bearer_auth(ORCHESTRATOR)
            .json(&json!({ "clientId": "keeper" }))
            .send()
            .await
            .unwrap();
        assert_eq!(bound.status().as_u16(), 200);
    }
    let last = common::client::get_json(&relay.addr, "/api/sessions/idle-299").await;
    assert_eq!(last["clientId"], "keeper", "{last}");
    assert!(logs_open(&relay) > 50, "their logs are open while they are busy");

    // Looked at until the relay has forgotten them, within a bound.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let listed = common::client::get_json(&relay.addr, "/api/sessions").await;
        let last = common::client::get_json(&relay.addr, "/api/sessions/idle-299").await;
        if listed["sessions"].as_array().unwrap().is_empty() && last["clientId"].is_null() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "still kept after 20 s: {} sessions listed",
            listed["sessions"].as_array().unwrap().len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(logs_open(&relay), 0, "their logs are closed");
    assert!(
        relay.data.path().join("logs/idle-299.jsonl").exists(),
        "the logs themselves stay for --log-retention-days"
    );
}

#[tokio::test]
async fn the_session_logs_past_their_total_bound_lose_the_oldest() {
    // Logs of sessions long ended, from an earlier run: 30 of 100 KB, each written a day
    // before the next; the bound keeps ten.
    let data = tempfile::tempdir().unwrap();
    let logs = data.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let now = std::time::SystemTime::now();
    for n in 0..30u32 {
        let path = logs.join(format!("ended-{n}.jsonl"));
        std::fs::write(&path, vec![b'\n'; 100_000]).unwrap();
        let written = now - Duration::from_secs(86_400) * (30 - n);
        std::fs::File::options()
            .append(true)
            .open(&path)
            .unwrap()
            .set_modified(written)
            .unwrap();
    }
    let relay = RelayProcess::start_in(data, &["--log-total-bytes", "1000000"]).await;
    let kept = || -> Vec<u32> {
        let mut kept: Vec<u32> = std::fs::read_dir(relay.data.path().join("logs"))
            .unwrap()
            .filter_map(|e| {
                e.ok()?
                    .file_name()
                    .to_str()?
                    .strip_prefix("ended-")?
                    .strip_suffix(".jsonl")?
                    .parse()
                    .ok()
            })
            .collect();
        kept.sort_unstable();
        kept
    };
    // Looked at as the relay starts, within a bound.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while kept().len() > 10 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "still {} logs after 20 s",
            kept().len()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(kept(), (20..30).collect::<Vec<_>>(), "the ten written last stay");
}
