//! Acting and seeing in one call (docs/protocol.md §17), through the relay as an agent calls
//! it: a click with `observe: "recent"` (its result carries the lines the click changed)
//! against the same click followed by a separate `browser_snapshot {detail: "recent"}`, the
//! two alternating on one page in one run. Target: <= 0.7x.
//!
//!     cargo bench -p tether-tests --bench act_and_see
//!
//! Figures go to docs/performance.md.

use std::time::Instant;

use serde_json::json;
use tether_tests::timing::median_ms;
use tether_tests::Harness;

const RUNS: usize = 30;
const WARMUP: usize = 5;

fn main() {
    tether_tests::block_on(async {
        let h = Harness::launch_worker().await;
        let relay = tether_tests::bench::relayed_worker(&h).await;
        let page = json!({ "url": h.url("/fixtures/tally.html") });
        let s = "act-and-see";
        let tab = relay.ok(s, "session_start", page).await["tabId"].clone();
        relay
            .ok(s, "browser_wait_for_loaded", json!({ "tabId": tab }))
            .await;
        relay.ok(s, "browser_snapshot", json!({ "tabId": tab })).await;
        let add = |observe: &str| json!({ "tabId": tab, "xpath": "//button[@id='add']", "observe": observe });
        let (mut one_call, mut two_calls) = (Vec::new(), Vec::new());
        for run in 0..WARMUP + RUNS {
            let start = Instant::now();
            let seen = relay.ok(s, "browser_click", add("recent")).await;
            let one = start.elapsed();
            assert!(seen["screen"].as_str().unwrap().contains("added"), "{seen}");
            let start = Instant::now();
            relay.ok(s, "browser_click", add("none")).await;
            let looked = relay
                .ok(s, "browser_snapshot", json!({ "tabId": tab, "detail": "recent" }))
                .await;
            let two = start.elapsed();
            assert!(looked["markdown"].as_str().unwrap().contains("added"), "{looked}");
            if run >= WARMUP {
                one_call.push(one);
                two_calls.push(two);
            }
        }
        let (one, two) = (median_ms(one_call), median_ms(two_calls));
        println!("click with observe \"recent\": {one:.2} ms p50; click, then snapshot \"recent\": {two:.2} ms p50; ratio {:.2}x (target <= 0.7x)", one / two);
    });
}
