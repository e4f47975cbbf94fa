//! Where the time of opening a session's tab on a loaded page goes, in a Chromium with the
//! extension loaded (docs/performance.md's `session_start` target). Alternating, on one browser:
//! raw CDP as the baseline; raw CDP doing the host's preparation (hooks, lifecycle events,
//! focus emulation) on the blank tab before it navigates, as the host does (the floor of
//! any client that needs its hooks in the first page); Tether's worker and extension mode; and
//! the extension's own tab calls, timed in its service worker.
//!
//!     cargo bench -p tether-host --bench open_tab
//!
//! Figures go to docs/performance.md.

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tether_host::browser::tabs::preparation;
use tether_host::cdp::connection::CdpConnection;
use tether_tests::bench::{new_window, open_loaded_tab, tether_open};
use tether_tests::cdp::RawSession;
use tether_tests::extension::ExtensionBrowser;
use tether_tests::timing::median_ms;

const RUNS: usize = 15;
const WARMUP: usize = 3;

/// Raw CDP, the host's way: a blank tab, prepared, then navigated; until the load event.
async fn prepared_then_navigated(cdp: &CdpConnection, url: &str) -> Duration {
    let start = Instant::now();
    let (raw, target) = new_window(cdp).await;
    let mut events = cdp.subscribe();
    let raw_ref = &raw;
    futures::future::join_all(
        preparation(true)
            .into_iter()
            .map(|(method, params)| async move { raw_ref.call(&method, params).await }),
    )
    .await;
    raw.call("Page.navigate", json!({ "url": url })).await;
    while let Ok(e) = events.recv().await {
        if e.session_id.as_deref() == Some(&raw.session) && e.method == "Page.loadEventFired" {
            break;
        }
    }
    let took = start.elapsed();
    close(cdp, target).await;
    took
}

async fn close(cdp: &CdpConnection, target: Value) {
    cdp.call(None, "Target.closeTarget", json!({ "targetId": target }))
        .await
        .unwrap();
}

/// The extension's calls for a session tab (`tab_ops.js`, `createTab`), timed in its
/// service worker: a window of its own, then the tab group, then closing it.
const EXTENSION_CALLS: &str = "(async () => { const t0 = performance.now(); \
    const w = await chrome.windows.create({ url: 'about:blank', focused: false }); const t1 = performance.now(); \
    const g = await chrome.tabs.group({ tabIds: [w.tabs[0].id], createProperties: { windowId: w.id } }); \
    await chrome.tabGroups.update(g, { title: 'bench' }); const t2 = performance.now(); \
    await chrome.windows.remove(w.id); return [t1 - t0, t2 - t1]; })()";

fn main() {
    tether_tests::block_on(async {
        let b: &'static ExtensionBrowser = Box::leak(Box::new(ExtensionBrowser::launch().await));
        b.serve_worker("bench-worker").await;
        let page = b.url("/fixtures/article.html");
        let cdp = CdpConnection::connect(b.ws_url()).await.unwrap();
        let (sw, session) = b.service_worker().await;
        let service_worker = RawSession { cdp: &sw, session };
        let tether = |session: &'static str, client: String| {
            let page = &page;
            async move { tether_open(|action, params| b.ok_on(session, &client, action, params), page).await }
        };

        let names = [
            "raw CDP: new window, navigate, load",
            "raw CDP, preparing first (the host's way)",
            "Tether, worker mode (via the relay)",
            "Tether, extension mode (via the relay)",
            "extension: chrome.windows.create",
            "extension: tab group calls",
        ];
        let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); names.len()];
        for run in 0..WARMUP + RUNS {
            // A service worker that stops answering must not hang the bench (one run stalled here).
            let sw_calls =
                tokio::time::timeout(Duration::from_secs(30), service_worker.eval(EXTENSION_CALLS))
                    .await
                    .expect(
                        "the extension's service worker answered the timing of its tab calls within 30 s",
                    );
            let ms = |i: usize| Duration::from_secs_f64(sw_calls[i].as_f64().unwrap() / 1e3);
            let row = [
                open_loaded_tab(&cdp, &page).await,
                prepared_then_navigated(&cdp, &page).await,
                tether("wrk-open", "bench-worker".into()).await,
                tether("ext-open", b.client_id.clone()).await,
                ms(0),
                ms(1),
            ];
            if run >= WARMUP {
                for (kept, took) in samples.iter_mut().zip(row) {
                    kept.push(took);
                }
            }
        }
        let baseline = median_ms(samples[0].clone());
        println!(
            "{:<48} {:>8} {:>8}",
            "p50 of opening a tab on a loaded page", "ms", "/ raw"
        );
        for (name, kept) in names.iter().zip(samples) {
            let p50 = median_ms(kept);
            println!("{name:<48} {p50:>8.1} {:>7.2}x", p50 / baseline);
        }
    });
}
