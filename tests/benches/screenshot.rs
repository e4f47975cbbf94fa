//! One screenshot as an orchestrator asks for it, the action alone (`POST /api/browser/action`
//! on a relay, its artifact not fetched), against raw CDP's `Page.captureScreenshot` on a tab
//! of its own with the same page. A capture is served by the compositor's next frame (16.7 ms
//! apart), so a caller taking shot after shot is paced by where in the frame its next request
//! lands: the bench runs each side back to back, then in turns, and adds two sides that tell
//! where the time goes: the host's action in this process (no relay), and raw CDP with 2 ms of
//! the caller's own work between shots.
//!
//!     cargo bench -p tether-tests --bench screenshot
//!
//! Figures go to docs/performance.md.

use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};
use tether_tests::bench::{ms, new_window, stats, Raw, RUNS};
use tether_tests::Harness;

async fn raw_shot(raw: &Raw<'_>, params: &Value) {
    let shot = raw.call("Page.captureScreenshot", params.clone()).await;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(shot["data"].as_str().unwrap())
        .unwrap();
    assert!(!bytes.is_empty());
}

/// The median of `RUNS` runs of `side`, back to back.
async fn back_to_back<F: std::future::Future<Output = ()>>(mut side: impl FnMut() -> F) -> f64 {
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        side().await;
        times.push(start.elapsed());
    }
    ms(stats(times).median)
}

fn main() {
    tether_tests::block_on(async {
        let h = Harness::launch_worker().await;
        let relay = tether_tests::bench::relayed_worker(&h).await;
        let url = h.url("/fixtures/article.html");
        let relayed_tab = relay.ok("shots", "session_start", json!({ "url": url })).await["tabId"].clone();
        let host_tab = h.ok("shots", "session_start", json!({ "url": url })).await["tabId"].clone();
        for (session, tab) in [("shots", &relayed_tab), ("shots", &host_tab)] {
            let loaded = json!({ "tabId": tab });
            match tab == &relayed_tab {
                true => relay.ok(session, "browser_wait_for_loaded", loaded).await,
                false => h.ok(session, "browser_wait_for_loaded", loaded).await,
            };
        }
        let (session, _) = new_window(h.worker().transport.connection()).await;
        let raw = Raw::new(session);
        raw.call("Page.enable", json!({})).await;
        raw.call("Page.setLifecycleEventsEnabled", json!({ "enabled": true }))
            .await;
        raw.navigate(&url).await;

        println!("p50 in ms of {RUNS} shots");
        println!("| format | Tether, back to back | host in process | raw CDP | raw CDP + 2 ms between | Tether / raw | Tether, in turns | raw, in turns | Tether / raw in turns |");
        println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        for format in ["jpeg", "png"] {
            let mut shot = json!({ "format": format });
            if format == "jpeg" {
                shot["quality"] = json!(80);
            }
            let on = |tab: &Value| {
                let mut params = shot.clone();
                params["tabId"] = tab.clone();
                params
            };
            let (relayed, in_process) = (on(&relayed_tab), on(&host_tab));
            let tether = || async {
                relay.ok("shots", "browser_screenshot", relayed.clone()).await;
            };
            let raw_side = || raw_shot(&raw, &shot);
            for _ in 0..3 {
                tether().await;
                raw_side().await;
            }
            let tether_alone = back_to_back(tether).await;
            let host_alone = back_to_back(|| async {
                h.ok("shots", "browser_screenshot", in_process.clone()).await;
            })
            .await;
            let raw_alone = back_to_back(raw_side).await;
            // The caller's own work between shots, as any caller has some.
            let raw_paced = back_to_back(|| async {
                tokio::time::sleep(Duration::from_millis(2)).await;
                raw_side().await;
            })
            .await;
            let (turns_tether, turns_raw) = in_turns(tether, raw_side).await;
            println!(
                "| {format} | {tether_alone:.2} | {host_alone:.2} | {raw_alone:.2} | {raw_paced:.2} | {:.2}x | {turns_tether:.2} | {turns_raw:.2} | {:.2}x |",
                tether_alone / raw_alone,
                turns_tether / turns_raw
            );
        }
    });
}

/// Both sides in turns, who goes first rotating; each side's median.
async fn in_turns<A, FA, B, FB>(mut a: A, mut b: B) -> (f64, f64)
where
    A: FnMut() -> FA,
    FA: std::future::Future<Output = ()>,
    B: FnMut() -> FB,
    FB: std::future::Future<Output = ()>,
{
    let (mut times_a, mut times_b) = (Vec::new(), Vec::new());
    for run in 0..RUNS {
        for a_now in [run % 2 == 0, run % 2 == 1] {
            let start = Instant::now();
            if a_now {
                a().await;
                times_a.push(start.elapsed());
            } else {
                b().await;
                times_b.push(start.elapsed());
            }
        }
    }
    (ms(stats(times_a).median), ms(stats(times_b).median))
}
