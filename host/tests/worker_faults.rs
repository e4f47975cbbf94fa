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
    assert!(
        !stderr.contains('\u{1b}'),
        "a log to a pipe has no colour codes: {stderr:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_stops_the_worker_and_the_chromium_it_launched() {
    let dirs = tempfile::tempdir().unwrap();
    let relay = TestRelay::start(&dirs.path().join("relay"), None);
    let mut worker = worker_command(&relay.addr, "terminated", dirs.path())
        .args(["--token", HOST])
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_logs_each_join_and_loss_of_its_relay_with_the_relays_address() {
    use tokio::io::AsyncBufReadExt;
    let dirs = tempfile::tempdir().unwrap();
    let relay = TestRelay::start(&dirs.path().join("relay"), None);
    let addr = relay.addr;
    let mut worker = worker_command(&addr, "logging", dirs.path())
        .args(["--token", HOST, "--log-format", "json"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(worker.stderr.take().unwrap()).lines();
    // The next log line whose message starts with `said`, as JSON (bounded).
    let mut next = async |said: &str| {
        let found = async {
            while let Some(line) = lines.next_line().await.unwrap() {
                let parsed: serde_json::Value =
                    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{line:?} is not JSON: {e}"));
                if parsed["fields"]["message"]
                    .as_str()
                    .unwrap_or("")
                    .starts_with(said)
                {
                    return parsed;
                }
            }
            panic!("the worker's log ended before {said:?}")
        };
        tokio::time::timeout(JOIN_WITHIN, found).await.expect(said)
    };
    let url = format!("ws://{addr}/ws");
    let joined = next("joined the relay").await;
    assert_eq!(joined["level"], "INFO");
    assert!(
        joined["fields"]["message"].as_str().unwrap().contains(&url),
        "{joined}"
    );

    relay.kill().await;
    let left = next("left the relay").await;
    assert_eq!(left["level"], "WARN");
    assert!(
        left["fields"]["message"].as_str().unwrap().contains(&url),
        "{left}"
    );

    let _again = TestRelay::start(&dirs.path().join("relay"), Some(addr));
    let rejoined = next("joined the relay").await;
    assert!(
        rejoined["fields"]["message"].as_str().unwrap().contains(&url),
        "{rejoined}"
    );
    let _ = worker.kill().await;
}

/// `tether-host worker` for `client_id` on the relay at `addr`, headless, its config in `dir`.
fn worker_command(
    addr: &std::net::SocketAddr,
    client_id: &str,
    dir: &std::path::Path,
) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_tether-host"));
    command
        .args(["worker", "--relay", &format!("ws://{addr}"), "--headless"])
        .args(["--client-id", client_id])
        .env("XDG_CONFIG_HOME", dir.join("config"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    command
}

/// The sockets process `pid` listens on (TCP, v4 and v6).
fn listening_sockets(pid: i32) -> usize {
    let inodes: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|fds| {
            fds.filter_map(|fd| {
                let link = std::fs::read_link(fd.ok()?.path()).ok()?;
                let link = link.to_str()?;
                Some(link.strip_prefix("socket:[")?.strip_suffix(']')?.to_owned())
            })
            .collect()
        })
        .unwrap_or_default();
    ["tcp", "tcp6"]
        .iter()
        .filter_map(|table| std::fs::read_to_string(format!("/proc/net/{table}")).ok())
        .flat_map(|text| {
            text.lines()
                .skip(1)
                .map(|line| line.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        })
        .filter(|fields| fields.get(3).map(String::as_str) == Some("0A"))
        .filter(|fields| fields.get(9).is_some_and(|inode| inodes.contains(inode)))
        .count()
}

/// docs/protocol.md §15: no other local process can drive a worker's own Chromium: it is driven
/// over a pipe, listens on no port, and a flag asking for one is refused. The token comes from
/// the environment, not the command line.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workers_chromium_is_driven_over_a_pipe_only() {
    let dirs = tempfile::tempdir().unwrap();
    let relay = TestRelay::start(&dirs.path().join("relay"), None);
    let worker = worker_command(&relay.addr, "piped", dirs.path())
        .env("TETHER_HOST_TOKEN", HOST)
        .spawn()
        .unwrap();
    relay.wait_online("piped", JOIN_WITHIN).await;
    let browsers = browser_children(worker.id().unwrap());
    assert_eq!(browsers.len(), 1, "{browsers:?}");
    let cmdline = std::fs::read_to_string(format!("/proc/{}/cmdline", browsers[0])).unwrap();
    assert!(cmdline.contains("--remote-debugging-pipe"), "{cmdline}");
    assert!(!cmdline.contains("--remote-debugging-port"), "{cmdline}");
    assert_eq!(listening_sockets(browsers[0]), 0, "the browser listens on a port");
    let worker_cmdline = std::fs::read_to_string(format!("/proc/{}/cmdline", worker.id().unwrap())).unwrap();
    assert!(
        !worker_cmdline.contains(HOST),
        "the token is in the worker's arguments"
    );

    // In any letter case: Chromium on Windows reads switches without it.
    for asking in ["--remote-debugging-port=9222", "--Remote-Debugging-Port=9222"] {
        let refused = worker_command(&relay.addr, "asking-for-a-port", dirs.path())
            .arg(format!("--chromium-arg={asking}"))
            .env("TETHER_HOST_TOKEN", HOST)
            .stderr(Stdio::piped())
            .output()
            .await
            .unwrap();
        assert!(!refused.status.success());
        let said = String::from_utf8_lossy(&refused.stderr);
        assert!(said.contains(asking) && said.contains("pipe"), "{said}");
    }
}
