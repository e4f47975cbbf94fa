//! The soak (docs/protocol.md §19): a steady mix of actions from many short sessions, through
//! the real `tether-relay` binary to two real `tether-host worker`s, each with its own
//! headless Chromium. Sessions start and end all the time (each: `session_start` on a page, a
//! snapshot, a click, `session_stop`), as an orchestrator's users make them, over HTTP with
//! keep-alive. Every minute it samples the relay's and the workers' memory and open files,
//! the store's and the session logs' size, and the latency of the actions in that minute
//! (the relay's open files counted every second, the minute's median its figure); at the end
//! it checks every action got exactly one result and prints a Markdown table.
//!
//! The relay runs at its defaults (`--session-retention` 24 h: every session of the run stays
//! kept, in the store; memory holds the ones that run, docs/protocol.md §22). The store's size
//! per kept action is printed at the end.
//!
//! ```sh
//! cargo bench -p tether-relay --bench soak              # 30 minutes
//! cargo bench -p tether-relay --bench soak -- 6         # 6 minutes
//! cargo bench -p tether-relay --bench soak -- 6 nats    # through two relays on NATS
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tether_tests::fixtures::Server;
use tether_tests::nats::NatsServer;
use tether_tests::process::RelayProcess;
use tether_tests::relay::{HOST, ORCHESTRATOR};
use tokio::process::{Child, Command};

const WORKERS: usize = 2;
/// Orchestrator loops, each running one session after another.
const LOOPS: usize = 6;
const SAMPLE_EVERY: Duration = Duration::from_secs(60);
/// How often the relay's open files are counted within a minute.
const FILES_EVERY: Duration = Duration::from_secs(1);

/// What the load counts.
#[derive(Default)]
struct Counts {
    sent: AtomicU64,
    answered: AtomicU64,
    failed: AtomicU64,
    /// Answers that were not the one result of the action sent (another id, or none).
    wrong: AtomicU64,
    sessions: AtomicU64,
    latencies: Mutex<Vec<Duration>>,
}

struct Sample {
    minute: u64,
    relay_rss_mib: f64,
    /// The median of the minute's counts, one a second: a count at one instant is as much the
    /// sessions in flight at that instant (their connections and logs) as the relay's level.
    relay_files: usize,
    /// The fewest and most of those counts.
    relay_files_range: (usize, usize),
    worker_rss_mib: f64,
    worker_files: usize,
    /// The database and its WAL (the WAL is reused, up to ~40 MB between checkpoints).
    store_kib: u64,
    /// The database alone.
    db_kib: u64,
    logs_mib: f64,
    sessions_per_s: f64,
    actions: usize,
    p50_ms: f64,
    p99_ms: f64,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let minutes: u64 = args.first().and_then(|m| m.parse().ok()).unwrap_or(30);
    let nats = args.iter().any(|a| a == "nats");
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(soak(minutes, nats));
}

async fn soak(minutes: u64, nats: bool) {
    let pages = Server::start().await;
    let nats_server = if nats {
        Some(NatsServer::start().await)
    } else {
        None
    };
    let mut args: Vec<&str> = Vec::new();
    if let Some(server) = &nats_server {
        args.extend(["--nats", server.url.as_str()]);
    }
    let hosts_relay = RelayProcess::start(&args).await;
    // With NATS, orchestrators call a second relay: every action crosses both.
    let callers_relay = if nats {
        Some(RelayProcess::start(&args).await)
    } else {
        None
    };
    let call_at = callers_relay.as_ref().unwrap_or(&hosts_relay).addr.clone();
    let mut workers = Vec::new();
    for n in 0..WORKERS {
        workers.push(worker(&hosts_relay.addr, &format!("soak-{n}")));
        hosts_relay
            .api()
            .wait_online(&format!("soak-{n}"), Duration::from_secs(60))
            .await;
    }
    let counts = Arc::new(Counts::default());
    let page = pages.url("/fixtures/clicks.html");
    // The callers keep their connections for the whole run, one each: the relay's open files
    // are then its own doing, not a pool's closing idle connections and opening new ones.
    let http = tether_tests::client::http_builder()
        .pool_max_idle_per_host(LOOPS)
        .pool_idle_timeout(None)
        .build()
        .expect("an HTTP client");
    let end = Instant::now() + Duration::from_secs(minutes * 60);
    let loops: Vec<_> = (0..LOOPS)
        .map(|n| {
            let (http, counts, page, call_at) = (http.clone(), counts.clone(), page.clone(), call_at.clone());
            tokio::spawn(async move { run_sessions(n, &http, &call_at, &page, &counts, end).await })
        })
        .collect();

    let relays: Vec<&RelayProcess> = std::iter::once(&hosts_relay)
        .chain(callers_relay.as_ref())
        .collect();
    let mut samples = Vec::new();
    let started = Instant::now();
    let mut last_sessions = 0;
    for minute in 1..=minutes {
        let minute_ends = started + SAMPLE_EVERY * minute as u32;
        let mut relay_files = Vec::new();
        while Instant::now() < minute_ends {
            relay_files.push(relays.iter().filter_map(|r| r.child.id()).map(files_open).sum());
            let next = (Instant::now() + FILES_EVERY).min(minute_ends);
            tokio::time::sleep_until(next.into()).await;
        }
        let latencies = std::mem::take(&mut *counts.latencies.lock().unwrap());
        let sessions = counts.sessions.load(Ordering::Relaxed);
        samples.push(sample(
            minute,
            (&relays, &workers),
            relay_files,
            latencies,
            sessions - last_sessions,
        ));
        last_sessions = sessions;
        print_sample(samples.last().unwrap());
    }
    for running in loops {
        let _ = running.await;
    }
    report(&samples, &counts, nats);
    for mut worker in workers {
        let _ = worker.kill().await;
    }
}

/// A `tether-host worker` with its own headless Chromium.
fn worker(relay: &str, client_id: &str) -> Child {
    Command::new(tether_tests::binary("tether-host"))
        .args([
            "worker",
            "--headless",
            "--relay",
            &format!("ws://{relay}"),
            "--token",
            HOST,
        ])
        .args(["--client-id", client_id])
        .kill_on_drop(true)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("start tether-host worker")
}

/// One orchestrator's users, one after another until `end`: each a session of four actions.
async fn run_sessions(
    n: usize,
    http: &reqwest::Client,
    relay: &str,
    page: &str,
    counts: &Counts,
    end: Instant,
) {
    let mut s = 0;
    while Instant::now() < end {
        let session = format!("soak-{n}-{s}");
        let client = format!("soak-{}", (n + s) % WORKERS);
        s += 1;
        counts.sessions.fetch_add(1, Ordering::Relaxed);
        let Some(started) = act(
            http,
            relay,
            &session,
            Some(&client),
            "session_start",
            json!({ "url": page }),
            counts,
        )
        .await
        else {
            continue;
        };
        let tab = started["tabId"].clone();
        act(
            http,
            relay,
            &session,
            None,
            "browser_snapshot",
            json!({ "tabId": tab }),
            counts,
        )
        .await;
        let click = json!({ "tabId": tab, "xpath": "//button[@id='target']" });
        act(http, relay, &session, None, "browser_click", click, counts).await;
        act(http, relay, &session, None, "session_stop", json!({}), counts).await;
    }
}

/// One action over HTTP; its `result` when it succeeded.
async fn act(
    http: &reqwest::Client,
    relay: &str,
    session: &str,
    client: Option<&str>,
    action: &str,
    params: Value,
    counts: &Counts,
) -> Option<Value> {
    let action_id = format!("{session}-{action}");
    let mut body =
        json!({ "sessionId": session, "actionId": action_id, "actionName": action, "params": params });
    if let Some(client) = client {
        body["clientId"] = json!(client);
    }
    counts.sent.fetch_add(1, Ordering::Relaxed);
    let began = Instant::now();
    let answer = http
        .post(format!("http://{relay}/api/browser/action"))
        .bearer_auth(ORCHESTRATOR)
        .json(&body)
        .send()
        .await;
    let payload: Option<Value> = match answer {
        Ok(response) => response.json().await.ok(),
        Err(_) => None,
    };
    counts.latencies.lock().unwrap().push(began.elapsed());
    let Some(payload) = payload.filter(|p| p["actionId"] == action_id.as_str()) else {
        counts.wrong.fetch_add(1, Ordering::Relaxed);
        return None;
    };
    counts.answered.fetch_add(1, Ordering::Relaxed);
    if payload["status"] != "success" {
        counts.failed.fetch_add(1, Ordering::Relaxed);
        return None;
    }
    Some(payload["result"].clone())
}

fn sample(
    minute: u64,
    (relays, workers): (&[&RelayProcess], &[Child]),
    mut relay_files: Vec<usize>,
    mut latencies: Vec<Duration>,
    sessions: u64,
) -> Sample {
    relay_files.sort_unstable();
    let files_median = relay_files
        .get(relay_files.len() / 2)
        .copied()
        .unwrap_or_default();
    let files_range = (
        relay_files.first().copied().unwrap_or_default(),
        relay_files.last().copied().unwrap_or_default(),
    );
    latencies.sort();
    let at = |q: f64| {
        latencies
            .get(((latencies.len() as f64 * q) as usize).min(latencies.len().saturating_sub(1)))
            .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
    };
    let pids: Vec<u32> = workers.iter().filter_map(Child::id).collect();
    let relay_pids: Vec<u32> = relays.iter().filter_map(|r| r.child.id()).collect();
    // Every relay's data dir: through NATS the sessions are the callers' relay's.
    let datas: Vec<&std::path::Path> = relays.iter().map(|r| r.data.path()).collect();
    Sample {
        minute,
        relay_rss_mib: relay_pids
            .iter()
            .map(|&p| tether_tests::process::rss_kib(p))
            .sum::<u64>() as f64
            / 1024.0,
        relay_files: files_median,
        relay_files_range: files_range,
        worker_rss_mib: pids
            .iter()
            .map(|&p| tether_tests::process::rss_kib(p))
            .sum::<u64>() as f64
            / 1024.0,
        worker_files: pids.iter().map(|&p| files_open(p)).sum(),
        store_kib: files_kib(&datas, &["relay.db", "relay.db-wal"]),
        db_kib: files_kib(&datas, &["relay.db"]),
        logs_mib: datas.iter().map(|d| dir_bytes(&d.join("logs"))).sum::<u64>() as f64 / (1 << 20) as f64,
        sessions_per_s: sessions as f64 / SAMPLE_EVERY.as_secs_f64(),
        actions: latencies.len(),
        p50_ms: at(0.5),
        p99_ms: at(0.99),
    }
}

fn files_open(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

fn dir_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir).map_or(0, |entries| {
        entries
            .filter_map(Result::ok)
            .filter_map(|e| e.metadata().ok())
            .map(|m| m.len())
            .sum()
    })
}

const HEADER: &str = "| minute | relay RSS MiB | relay files (min-max) | workers RSS MiB | workers files | store KiB | logs MiB | sessions/s | actions | p50 ms | p99 ms |\n|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|";

fn row(s: &Sample) -> String {
    format!(
        "| {} | {:.1} | {} ({}-{}) | {:.1} | {} | {} | {:.1} | {:.1} | {} | {:.1} | {:.1} |",
        s.minute,
        s.relay_rss_mib,
        s.relay_files,
        s.relay_files_range.0,
        s.relay_files_range.1,
        s.worker_rss_mib,
        s.worker_files,
        s.store_kib,
        s.logs_mib,
        s.sessions_per_s,
        s.actions,
        s.p50_ms,
        s.p99_ms
    )
}

fn print_sample(s: &Sample) {
    if s.minute == 1 {
        println!("{HEADER}");
    }
    println!("{}", row(s));
}

/// The run's verdict: after the first five minutes (or the first half of a shorter run), how
/// far memory and open files moved (largest over smallest), and p99 against its early value.
fn report(samples: &[Sample], counts: &Counts, nats: bool) {
    // The first five minutes settle a run of ten or more; a shorter one, its first half.
    let settled = if samples.len() >= 10 { 5 } else { samples.len() / 2 };
    let (early, late) = samples.split_at(settled.min(samples.len().saturating_sub(1)));
    let spread = |f: &dyn Fn(&Sample) -> f64| {
        let values: Vec<f64> = late.iter().map(f).collect();
        let (lo, hi) = values
            .iter()
            .fold((f64::MAX, 0.0f64), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
        if lo > 0.0 {
            hi / lo
        } else {
            0.0
        }
    };
    let p99_early = early.iter().map(|s| s.p99_ms).fold(0.0, f64::max);
    let p99_late = late.iter().map(|s| s.p99_ms).fold(0.0, f64::max);
    println!();
    println!(
        "soak{}: {} sessions, {} actions sent, {} answered ({} of them errors), {} without their one result",
        if nats { " through two relays on NATS" } else { "" },
        counts.sessions.load(Ordering::Relaxed),
        counts.sent.load(Ordering::Relaxed),
        counts.answered.load(Ordering::Relaxed),
        counts.failed.load(Ordering::Relaxed),
        counts.wrong.load(Ordering::Relaxed)
    );
    println!(
        "after minute {settled}: relay RSS within {:.2}x, relay files {:.2}x, workers RSS {:.2}x, workers files {:.2}x; p99 {:.2}x its early value",
        spread(&|s| s.relay_rss_mib),
        spread(&|s| s.relay_files as f64),
        spread(&|s| s.worker_rss_mib),
        spread(&|s| s.worker_files as f64),
        if p99_early > 0.0 { p99_late / p99_early } else { 0.0 },
    );
    // Every action of the run is kept (24 h retention): the store grows with them.
    let answered = counts.answered.load(Ordering::Relaxed).max(1) as f64;
    let db_bytes = samples.last().map_or(0, |s| s.db_kib * 1024) as f64;
    println!(
        "store: the database {:.0} B per kept action (its WAL besides: reused, bounded by its checkpoints)",
        db_bytes / answered
    );
}

/// The size of these files in every data dir, in KiB.
fn files_kib(datas: &[&std::path::Path], files: &[&str]) -> u64 {
    let bytes = |d: &&std::path::Path| -> u64 {
        files
            .iter()
            .map(|f| std::fs::metadata(d.join(f)).map_or(0, |m| m.len()))
            .sum()
    };
    datas.iter().map(bytes).sum::<u64>() / 1024
}
