//! What MCP adds to an action: the same actions on the same tab through the
//! relay's `/mcp` (the official MCP SDK's client) and as `POST /api/browser/action`, in
//! alternation from one Node process (`tests/mcp-client/bench.mjs`), so both pay the same
//! client costs; and the same tools/call as a bare POST on the SDK's session, which leaves out
//! the SDK client's own work. Prints medians and the ratios.
//!
//!     cargo bench -p tether-tests --bench mcp
//!
//! Figures go to docs/performance.md.

use serde_json::{json, Value};
use tether_tests::bench::median_ms;
use tether_tests::relay::ORCHESTRATOR;
use tether_tests::Harness;

const RUNS: usize = 100;

fn main() {
    tether_tests::block_on(async {
        let h = Harness::launch_worker().await;
        let relay = tether_tests::bench::relayed_worker(&h).await;
        let session = "mcp-bench";
        let started = relay
            .ok(
                session,
                "session_start",
                json!({ "url": h.url("/fixtures/snapshot.html") }),
            )
            .await;
        let tab = started["tabId"].as_i64().unwrap().to_string();
        let base = format!("http://{}", relay.addr);
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/mcp-client/bench.mjs");
        let output = tokio::process::Command::new("node")
            .args([script, &base, ORCHESTRATOR, session, &tab, &RUNS.to_string()])
            .output()
            .await
            .expect("node runs the MCP bench client (npm ci in tests/mcp-client first)");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let figures: Value = serde_json::from_slice(&output.stdout).unwrap();
        println!("{RUNS} calls each, alternating, one tab of the snapshot fixture page:");
        for (action, samples) in figures.as_object().unwrap() {
            let (http, mcp) = (median_ms(&samples["http"]), median_ms(&samples["mcp"]));
            let bare = median_ms(&samples["bare"]);
            println!(
                "{action:<20} POST /api/browser/action p50 {http:.2} ms; /mcp with the SDK's client p50 {mcp:.2} ms: {:.2}x; \
                 /mcp as a bare POST p50 {bare:.2} ms: {:.2}x",
                mcp / http,
                bare / http
            );
        }
    });
}
