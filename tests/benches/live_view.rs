//! What the live view (docs/protocol.md §18) costs, measured from outside: a worker's tab on a
//! page that changes on every animation frame, behind the relay, for 10 s each way.
//! 1. Nobody watching: the CPU time of this process (relay and worker) and of Chromium, and
//!    the frames the relay passes on (none).
//! 2. One watcher on the relay's WebSocket, as the console is: the frames and bytes a second in
//!    its hands, and the same CPU times.
//! 3. Nobody watching again, once it stopped.
//!
//! Targets: nothing while nobody watches; under 10 frames and 1 MB a second per watcher.
//!
//!     cargo bench -p tether-tests --bench live_view
//!
//! Figures go to docs/performance.md.

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::{json, Value};
use tether_tests::client::{orchestrator, request};
use tether_tests::Harness;

const FOR: Duration = Duration::from_secs(10);

fn main() {
    tether_tests::block_on(async {
        let h = Harness::launch_worker().await;
        let relay = tether_tests::bench::relayed_worker(&h).await;
        let s = "watched";
        let page = json!({ "url": h.url("/fixtures/clock.html") });
        relay.ok(s, "session_start", page).await;
        let addr = relay.addr.to_string();

        let unwatched = cpu_over(FOR).await;
        let mut ws = orchestrator(&addr).await;
        let started = request(&mut ws, "live_view.start", "watch", json!({ "sessionId": s })).await;
        assert_eq!(started["type"], "live_view.start", "{started}");
        let (frames, bytes, watched) = {
            let cpu = Cpu::now();
            let (mut frames, mut bytes) = (0u64, 0u64);
            let until = Instant::now() + FOR;
            while let Ok(Some(Ok(message))) = tokio::time::timeout_at(until.into(), ws.next()).await {
                let text = message.into_text().unwrap_or_default();
                let kind = serde_json::from_str::<Value>(&text)
                    .map(|v| v["type"].clone())
                    .unwrap_or_default();
                if kind == "live_view.frame" {
                    frames += 1;
                    bytes += text.len() as u64;
                }
            }
            (frames, bytes, cpu.spent())
        };
        let stopped = request(&mut ws, "live_view.stop", "unwatch", json!({ "sessionId": s })).await;
        assert_eq!(stopped["type"], "live_view.stop", "{stopped}");
        let unwatched_again = cpu_over(FOR).await;
        let secs = FOR.as_secs_f64();
        println!(
            "nobody watching: this process {:.0} ms, Chromium {:.0} ms of CPU in {secs:.0} s",
            unwatched.0, unwatched.1
        );
        println!(
            "nobody watching again: this process {:.0} ms, Chromium {:.0} ms of CPU in {secs:.0} s",
            unwatched_again.0, unwatched_again.1
        );
        println!(
            "one watcher: {:.1} frames/s, {:.0} KB/s in its hands; this process {:.0} ms, Chromium {:.0} ms of CPU in {secs:.0} s",
            frames as f64 / secs,
            bytes as f64 / secs / 1000.0,
            watched.0,
            watched.1
        );
    });
}

/// CPU time so far of this process and of every Chromium process on the machine.
struct Cpu(Duration, Duration);

impl Cpu {
    fn now() -> Self {
        Cpu(
            tether_tests::process::cpu_time(std::process::id()),
            chromium_cpu(),
        )
    }

    /// Milliseconds of CPU since `now`: (this process, Chromium).
    fn spent(&self) -> (f64, f64) {
        let now = Cpu::now();
        (
            (now.0 - self.0).as_secs_f64() * 1000.0,
            (now.1 - self.1).as_secs_f64() * 1000.0,
        )
    }
}

async fn cpu_over(span: Duration) -> (f64, f64) {
    let cpu = Cpu::now();
    tokio::time::sleep(span).await;
    cpu.spent()
}

fn chromium_cpu() -> Duration {
    let Ok(processes) = std::fs::read_dir("/proc") else {
        return Duration::ZERO;
    };
    processes
        .flatten()
        .filter_map(|p| p.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim().starts_with("chrom"))
        })
        .filter_map(cpu_of)
        .sum()
}

/// A process's CPU time, if it is still there (Chromium's helpers come and go).
fn cpu_of(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let ticks: u64 = stat
        .rsplit_once(')')?
        .1
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|t| t.parse::<u64>().ok())
        .sum();
    Some(Duration::from_millis(ticks * 10))
}
