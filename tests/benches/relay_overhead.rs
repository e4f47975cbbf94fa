//! What the relay adds to a real action: the same actions on the same page, called on a host's
//! engine directly and sent through the relay (`POST /api/browser/action` -> relay -> worker
//! link -> the worker's engine), alternating, in one run. Prints medians and the difference.
//!
//!     cargo bench -p tether-tests --bench relay_overhead
//!
//! Figures go to docs/performance.md.

use std::time::Instant;

use serde_json::{json, Value};
use tether_tests::timing::median_ms;
use tether_tests::Harness;

const RUNS: usize = 50;
const WARMUP: usize = 5;

fn main() {
    tether_tests::block_on(async {
        let h = Harness::launch_worker().await;
        let relay = tether_tests::bench::relayed_worker(&h).await;
        let page = json!({ "url": h.url("/fixtures/article.html") });
        let direct_tab = h.ok("direct", "session_start", page.clone()).await["tabId"].clone();
        let relayed_tab = relay.ok("relayed", "session_start", page).await["tabId"].clone();
        println!(
            "{:<40} {:>11} {:>12} {:>10}",
            "action (ms)", "direct p50", "relayed p50", "added p50"
        );
        for (action, params) in [
            ("browser_wait_for_loaded", json!({})),
            ("browser_xpath_scan", json!({})),
            ("browser_get_html", json!({})),
            ("browser_screenshot", json!({})),
        ] {
            let with_tab = |tab: &Value| {
                let mut p = params.clone();
                p["tabId"] = tab.clone();
                p
            };
            let (mut direct, mut through) = (Vec::new(), Vec::new());
            for run in 0..WARMUP + RUNS {
                let start = Instant::now();
                h.ok("direct", action, with_tab(&direct_tab)).await;
                let d = start.elapsed();
                let start = Instant::now();
                relay.ok("relayed", action, with_tab(&relayed_tab)).await;
                let r = start.elapsed();
                if run >= WARMUP {
                    direct.push(d);
                    through.push(r);
                }
            }
            let (d, r) = (median_ms(direct), median_ms(through));
            println!("{action:<40} {d:>11.2} {r:>12.2} {:>10.2}", r - d);
        }
    });
}
