//! Acting and seeing in one call (docs/protocol.md §17), through the relay as an agent calls
//! it: an action with `observe: "recent"` (its result carries the lines the action changed)
//! against the same action followed by a separate `browser_snapshot {detail: "recent"}`, the
//! two alternating on one page in one run, for a click, a field typed into and an option
//! chosen. Target: <= 0.7x.
//!
//!     cargo bench -p tether-tests --bench act_and_see
//!
//! Figures go to docs/performance.md.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tether_tests::bench::RelayedWorker;
use tether_tests::timing::median_ms;
use tether_tests::Harness;

const RUNS: usize = 30;
const WARMUP: usize = 5;
const SESSION: &str = "act-and-see";

fn main() {
    tether_tests::block_on(async {
        let h = Harness::launch_worker().await;
        let relay = tether_tests::bench::relayed_worker(&h).await;
        let page = json!({ "url": h.url("/fixtures/tally.html") });
        let tab = relay.ok(SESSION, "session_start", page).await["tabId"].clone();
        relay
            .ok(SESSION, "browser_wait_for_loaded", json!({ "tabId": tab }))
            .await;
        relay
            .ok(SESSION, "browser_snapshot", json!({ "tabId": tab }))
            .await;
        let click = |_: usize| {
            (
                "browser_click",
                json!({ "tabId": tab, "xpath": "//button[@id='add']" }),
            )
        };
        let typing = |run: usize| {
            let text = format!("Ada {run}");
            (
                "browser_type",
                json!({ "tabId": tab, "xpath": "//input[@id='name']", "text": text }),
            )
        };
        let sizes = ["Small", "Medium", "Large"];
        let select = |run: usize| {
            let size = sizes[run % sizes.len()];
            (
                "browser_select_option",
                json!({ "tabId": tab, "xpath": "//select[@id='size']", "values": [size] }),
            )
        };
        compare(&relay, &tab, "click", click).await;
        compare(&relay, &tab, "type", typing).await;
        compare(&relay, &tab, "select", select).await;
    });
}

/// One action with `observe: "recent"` against the same action then a snapshot, alternating;
/// `action(run)` gives a different change each run, so each has lines to show.
async fn compare(
    relay: &RelayedWorker,
    tab: &Value,
    name: &str,
    action: impl Fn(usize) -> (&'static str, Value),
) {
    let (mut one_call, mut two_calls) = (Vec::new(), Vec::new());
    for run in 0..WARMUP + RUNS {
        // Which way goes first alternates: each way's snapshot diffs against the other's.
        let (one, two) = if run % 2 == 0 {
            let one = in_one_call(relay, &action, 2 * run).await;
            (one, in_two_calls(relay, tab, &action, 2 * run + 1).await)
        } else {
            let two = in_two_calls(relay, tab, &action, 2 * run).await;
            (in_one_call(relay, &action, 2 * run + 1).await, two)
        };
        if run >= WARMUP {
            one_call.push(one);
            two_calls.push(two);
        }
    }
    let (one, two) = (median_ms(one_call), median_ms(two_calls));
    println!(
        "{name} with observe \"recent\": {one:.2} ms p50; {name}, then snapshot \"recent\": {two:.2} ms p50; ratio {:.2}x (target <= 0.7x)",
        one / two
    );
}

async fn in_one_call(
    relay: &RelayedWorker,
    action: &impl Fn(usize) -> (&'static str, Value),
    run: usize,
) -> Duration {
    let (act, mut params) = action(run);
    params["observe"] = json!("recent");
    let start = Instant::now();
    let seen = relay.ok(SESSION, act, params).await;
    let took = start.elapsed();
    assert!(seen["screen"].as_str().unwrap().contains("added"), "{seen}");
    took
}

async fn in_two_calls(
    relay: &RelayedWorker,
    tab: &Value,
    action: &impl Fn(usize) -> (&'static str, Value),
    run: usize,
) -> Duration {
    let (act, mut params) = action(run);
    params["observe"] = json!("none");
    let start = Instant::now();
    relay.ok(SESSION, act, params).await;
    let looked = relay
        .ok(
            SESSION,
            "browser_snapshot",
            json!({ "tabId": tab, "detail": "recent" }),
        )
        .await;
    let took = start.elapsed();
    assert!(looked["markdown"].as_str().unwrap().contains("added"), "{looked}");
    took
}
