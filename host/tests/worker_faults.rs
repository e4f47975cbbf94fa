//! A worker whose Chromium crashes mid-action: the action ends with an error result at once,
//! and the worker stops with a message saying why (so a supervisor can start it again).

use std::process::Stdio;
use std::time::Duration;

use serde_json::json;
use tether_tests::extension::JOIN_WITHIN;
use tether_tests::fixtures;
use tether_tests::relay::{TestRelay, HOST};
use tokio::io::AsyncReadExt;

/// Chromium processes whose parent is `pid`.
fn browser_children(pid: u32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| {
            let child: i32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).ok()?;
            let parent: u32 = stat.rsplit(')').next()?.split_whitespace().nth(1)?.parse().ok()?;
            let name = std::fs::read_to_string(format!("/proc/{child}/comm")).ok()?;
            (parent == pid && name.trim().starts_with("chrom")).then_some(child)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chromium_crash_ends_the_running_action_and_stops_the_worker() {
    let dirs = tempfile::tempdir().unwrap();
    let relay = std::sync::Arc::new(TestRelay::start(&dirs.path().join("relay"), None));
    let fixtures = fixtures::Server::start().await;
    let mut worker = tokio::process::Command::new(env!("CARGO_BIN_EXE_tether-host"))
        .args([
            "worker",
            "--relay",
            &format!("ws://{}", relay.addr),
            "--token",
            HOST,
        ])
        .args(["--client-id", "crashing", "--headless"])
        .env("XDG_CONFIG_HOME", dirs.path().join("config"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    relay.wait_online("crashing", JOIN_WITHIN).await;

    let start = json!({ "sessionId": "crash", "actionName": "session_start",
                        "params": { "url": fixtures.url("/never-loads") } });
    let started = relay.post(start).await;
    let tab = started["result"]["tabId"].clone();
    let waiting = {
        let relay = relay.clone();
        tokio::spawn(async move {
            let wait = json!({ "sessionId": "crash", "actionName": "browser_wait_for_loaded",
                               "params": { "tabId": tab, "timeoutMs": 20_000 } });
            relay.post(wait).await
        })
    };
    // The action is running once the relay says so (bounded).
    let running = async {
        loop {
            let state = relay.get("/api/sessions/crash").await;
            if state["status"] == "running" {
                return;
            }
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(20), running)
        .await
        .expect("the wait started");

    let browsers = browser_children(worker.id().unwrap());
    assert_eq!(browsers.len(), 1, "the worker's own Chromium: {browsers:?}");
    unsafe { libc::kill(browsers[0], libc::SIGKILL) };

    let result = tokio::time::timeout(Duration::from_secs(10), waiting)
        .await
        .expect("the running action ended at once")
        .unwrap();
    assert_eq!(result["status"], "error", "{result}");
    assert!(
        ["CDP_ERROR", "CLIENT_OFFLINE"].contains(&result["error"]["code"].as_str().unwrap()),
        "{result}"
    );
    let status = tokio::time::timeout(Duration::from_secs(20), worker.wait())
        .await
        .expect("the worker stops without its browser")
        .unwrap();
    assert_eq!(status.code(), Some(2));
    let mut stderr = String::new();
    worker
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .await
        .unwrap();
    assert!(stderr.contains("Chromium exited"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_the_worker_and_the_chromium_it_launched() {
    let dirs = tempfile::tempdir().unwrap();
    let relay = TestRelay::start(&dirs.path().join("relay"), None);
    let mut worker = tokio::process::Command::new(env!("CARGO_BIN_EXE_tether-host"))
        .args([
            "worker",
            "--relay",
            &format!("ws://{}", relay.addr),
            "--token",
            HOST,
        ])
        .args(["--client-id", "terminated", "--headless"])
        .env("XDG_CONFIG_HOME", dirs.path().join("config"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    relay.wait_online("terminated", JOIN_WITHIN).await;
    let browsers = browser_children(worker.id().unwrap());
    assert_eq!(browsers.len(), 1, "{browsers:?}");
    unsafe { libc::kill(worker.id().unwrap() as i32, libc::SIGTERM) };
    let status = tokio::time::timeout(Duration::from_secs(20), worker.wait())
        .await
        .expect("the worker stops on SIGTERM")
        .unwrap();
    assert_eq!(status.code(), Some(0));
    assert!(
        !std::path::Path::new(&format!("/proc/{}", browsers[0])).exists(),
        "the worker closed its Chromium"
    );
}
