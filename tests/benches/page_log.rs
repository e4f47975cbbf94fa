//! What keeping the page's console and requests (docs/protocol.md §17) costs a plain click or
//! type as a client sees it: the same actions through two relayed workers on one Chromium, one
//! keeping its tabs' logs (the default) and one started with `--no-page-log`, alternating, on
//! a page whose every change logs a line and sends a request. Target: <= 1.05x. Beside them,
//! the browser's own part: raw CDP typing into the same page with the `Network` and `Log`
//! events on, then off, alternating.
//!
//!     cargo bench -p tether-tests --bench page_log
//!
//! Figures go to docs/performance.md.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tether_tests::bench::{new_window, relayed_worker, relayed_worker_with, Raw, RelayedWorker};
use tether_tests::timing::median_ms;
use tether_tests::Harness;

const RUNS: usize = 100;
const WARMUP: usize = 5;
const SESSION: &str = "page-log";

fn main() {
    tether_tests::block_on(async {
        let h = Harness::launch_worker().await;
        let kept = relayed_worker(&h).await;
        let none = relayed_worker_with(&h, |w| w.no_page_log = true).await;
        let page = h.url("/fixtures/tally.html");
        let (kept_tab, none_tab) = (open(&kept, &page).await, open(&none, &page).await);
        let click = |tab: &Value, _: usize| {
            (
                "browser_click",
                json!({ "tabId": tab, "xpath": "//button[@id='add']" }),
            )
        };
        let typing = |tab: &Value, run: usize| {
            (
                "browser_type",
                json!({ "tabId": tab, "xpath": "//input[@id='name']", "text": format!("Ada {run}") }),
            )
        };
        for (name, action) in [
            ("click", &click as &dyn Fn(&Value, usize) -> (&'static str, Value)),
            ("type", &typing),
        ] {
            let (mut with_log, mut without) = (Vec::new(), Vec::new());
            for run in 0..WARMUP + RUNS {
                // Which worker goes first alternates.
                let (a, b) = if run % 2 == 0 {
                    let a = timed(&kept, action(&kept_tab, run)).await;
                    (a, timed(&none, action(&none_tab, run)).await)
                } else {
                    let b = timed(&none, action(&none_tab, run)).await;
                    (timed(&kept, action(&kept_tab, run)).await, b)
                };
                if run >= WARMUP {
                    with_log.push(a);
                    without.push(b);
                }
            }
            let console = kept
                .ok(
                    SESSION,
                    "browser_console",
                    json!({ "tabId": kept_tab, "limit": 500 }),
                )
                .await;
            let kept_lines = console["entries"].as_array().map_or(0, Vec::len);
            assert!(
                kept_lines >= RUNS,
                "the keeping worker kept the page's lines: {kept_lines}"
            );
            let (a, b) = (median_ms(with_log), median_ms(without));
            println!(
                "{name}: keeping the page's log {a:.2} ms p50, keeping none {b:.2} ms p50; ratio {:.3}x (target <= 1.05x)",
                a / b
            );
        }
        raw_typing(&h, &page).await;
    });
}

/// Raw CDP's `Input.insertText` into the page's field on three tabs of its own, one with the
/// `Network` and `Log` events on, one with `Network` alone, one with neither, in turn: what the
/// browser itself spends reporting a change's request and line.
async fn raw_typing(h: &Harness, page: &str) {
    const WAYS: [(bool, bool); 3] = [(true, true), (true, false), (false, false)];
    let cdp = h.worker().transport.connection();
    let mut tabs = Vec::new();
    for (network, log) in WAYS {
        let (session, _) = new_window(cdp).await;
        let raw = Raw::new(session);
        raw.call("Page.enable", json!({})).await;
        raw.call("Page.setLifecycleEventsEnabled", json!({ "enabled": true }))
            .await;
        raw.call("Runtime.enable", json!({})).await;
        if network {
            raw.call("Network.enable", json!({})).await;
        }
        if log {
            raw.call("Log.enable", json!({})).await;
        }
        raw.navigate(page).await;
        raw.eval("document.getElementById('name').focus()").await;
        tabs.push(raw);
    }
    let mut times = [Vec::new(), Vec::new(), Vec::new()];
    for run in 0..WARMUP + RUNS {
        // Which tab goes first rotates.
        for turn in 0..WAYS.len() {
            let way = (run + turn) % WAYS.len();
            let start = Instant::now();
            tabs[way].call("Input.insertText", json!({ "text": "a" })).await;
            if run >= WARMUP {
                times[way].push(start.elapsed());
            }
        }
    }
    let [both, network, neither] = times.map(median_ms);
    println!(
        "raw CDP typing: Network and Log on {both:.2} ms p50 ({:.3}x), Network alone {network:.2} ms ({:.3}x), neither {neither:.2} ms",
        both / neither,
        network / neither
    );
}

async fn open(worker: &RelayedWorker, url: &str) -> Value {
    let tab = worker.ok(SESSION, "session_start", json!({ "url": url })).await["tabId"].clone();
    worker
        .ok(SESSION, "browser_wait_for_loaded", json!({ "tabId": tab }))
        .await;
    tab
}

async fn timed(worker: &RelayedWorker, (action, params): (&str, Value)) -> Duration {
    let start = Instant::now();
    worker.ok(SESSION, action, params).await;
    start.elapsed()
}
