//! The same actions in extension mode, in worker mode and as raw CDP, in one run on one
//! browser: the extension-mode host (started by Chromium, CDP through chrome.debugger) and an
//! in-process worker (CDP over the browser's WebSocket) both serve the same relay and are
//! called the same way (`POST /api/browser/action`), alternating; raw CDP does the
//! comparable work on a tab of its own. Prints medians and the ratios.
//!
//!     cargo bench -p tether-host --bench modes
//!
//! Figures go to docs/performance.md.

use std::time::Duration;

use base64::Engine as _;
use serde_json::{json, Value};
use tether_host::cdp::connection::CdpConnection;
use tether_tests::bench::{open_loaded_tab, tether_open};
use tether_tests::cdp::RawSession;
use tether_tests::extension::ExtensionBrowser;
use tether_tests::timing::{median_ms, timed};

const RUNS: usize = 30;
const WARMUP: usize = 3;

/// The baseline: the same CDP work on a tab of its own.
struct Raw<'a>(RawSession<'a>);

impl<'a> std::ops::Deref for Raw<'a> {
    type Target = RawSession<'a>;

    fn deref(&self) -> &RawSession<'a> {
        &self.0
    }
}

impl Raw<'_> {
    /// What each action does, minus Tether: the same CDP work on its own tab.
    async fn act(&self, action: &str) {
        match action {
            "browser_wait_for_loaded" => {
                self.eval("document.readyState").await;
            }
            "browser_get_html" => {
                self.eval("document.documentElement.outerHTML").await;
            }
            "browser_xpath_scan" => {
                let lib = tether_host::page::library::SOURCE;
                self.eval(&format!("JSON.stringify(({lib})().scan({{}}))")).await;
            }
            "browser_screenshot" => {
                let shot = self
                    .call("Page.captureScreenshot", json!({ "format": "png" }))
                    .await;
                let png = base64::engine::general_purpose::STANDARD
                    .decode(shot["data"].as_str().unwrap())
                    .unwrap();
                std::hint::black_box(png);
            }
            other => panic!("no raw form of {other}"),
        }
    }
}

fn main() {
    tether_tests::block_on(async {
        let b: &'static ExtensionBrowser = Box::leak(Box::new(ExtensionBrowser::launch().await));
        b.serve_worker("bench-worker").await;
        let page = b.url("/fixtures/article.html");
        let act = |session: &'static str, client: String, action: &'static str, params: Value| async move {
            b.ok_on(session, &client, action, params).await
        };
        let worker_id = "bench-worker".to_owned();
        let worker_tab =
            act("wrk", worker_id.clone(), "session_start", json!({ "url": page })).await["tabId"].clone();
        let ext_tab = act(
            "ext",
            b.client_id.clone(),
            "session_start",
            json!({ "url": page }),
        )
        .await["tabId"]
            .clone();

        let cdp = CdpConnection::connect(b.ws_url()).await.unwrap();
        let target = cdp
            .call(
                None,
                "Target.createTarget",
                json!({ "url": page, "newWindow": true, "background": true }),
            )
            .await
            .unwrap()["targetId"]
            .clone();
        let raw = Raw(RawSession::attach(&cdp, &target).await);

        // Where extension mode's time goes: chrome.debugger.sendCommand alone, timed inside the
        // service worker (no native messaging), for a trivial command.
        let (sw, sw_session) = b.service_worker().await;
        let probe = format!(
            "(async () => {{ const t0 = performance.now(); \
             for (let i = 0; i < 50; i++) await chrome.debugger.sendCommand({{ tabId: {ext_tab} }}, 'Runtime.evaluate', {{ expression: '1' }}); \
             return (performance.now() - t0) / 50; }})()"
        );
        let per_call = RawSession {
            cdp: &sw,
            session: sw_session,
        }
        .eval(&probe)
        .await;
        println!(
            "chrome.debugger.sendCommand inside the service worker: {:.2} ms a call",
            per_call.as_f64().unwrap_or(f64::NAN)
        );
        println!(
            "{:<26} {:>9} {:>10} {:>9} {:>11} {:>11}",
            "action (ms, p50)", "raw CDP", "worker", "extension", "ext/worker", "ext/raw"
        );
        for action in [
            "browser_wait_for_loaded",
            "browser_xpath_scan",
            "browser_get_html",
            "browser_screenshot",
        ] {
            let (mut raw_t, mut worker_t, mut ext_t) = (Vec::new(), Vec::new(), Vec::new());
            for run in 0..WARMUP + RUNS {
                let r = timed(raw.act(action)).await;
                let w = timed(act(
                    "wrk",
                    worker_id.clone(),
                    action,
                    json!({ "tabId": worker_tab }),
                ))
                .await;
                let e = timed(act(
                    "ext",
                    b.client_id.clone(),
                    action,
                    json!({ "tabId": ext_tab }),
                ))
                .await;
                if run >= WARMUP {
                    raw_t.push(r);
                    worker_t.push(w);
                    ext_t.push(e);
                }
            }
            print_row(action, raw_t, worker_t, ext_t);
        }

        // Opening a session's tab on a loaded page: session_start + browser_wait_for_loaded,
        // then session_stop (closing the tab) after the timing; raw CDP opens a tab likewise.
        let page = &page;
        let open = |session: &'static str, client: String| async move {
            tether_open(|action, params| b.ok_on(session, &client, action, params), page).await
        };
        let (mut raw_t, mut worker_t, mut ext_t) = (Vec::new(), Vec::new(), Vec::new());
        for run in 0..WARMUP + RUNS {
            let r = open_loaded_tab(&cdp, page).await;
            let w = open("wrk-open", worker_id.clone()).await;
            let e = open("ext-open", b.client_id.clone()).await;
            if run >= WARMUP {
                raw_t.push(r);
                worker_t.push(w);
                ext_t.push(e);
            }
        }
        print_row("session_start to loaded", raw_t, worker_t, ext_t);
    });
}

fn print_row(action: &str, raw: Vec<Duration>, worker: Vec<Duration>, extension: Vec<Duration>) {
    let (r, w, e) = (median_ms(raw), median_ms(worker), median_ms(extension));
    println!(
        "{action:<26} {r:>9.2} {w:>10.2} {e:>9.2} {:>10.2}x {:>10.2}x",
        e / w,
        e / r
    );
}
