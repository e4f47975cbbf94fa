//! Each action through the host versus the same CDP work done raw, in the same run, on the
//! same tab (the raw side attaches a CDP session of its own). Prints medians and the ratio.
//!
//!     cargo bench -p tether-tests --bench actions
//!
//! Figures go to docs/performance.md. Machines here are noisy: read ratios, not absolutes.

use std::future::Future;
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};
use tether_host::actions::browser_readability_extract::extract;
use tether_tests::cdp::RawSession;
use tether_tests::Harness;

const LIB_JS: &str = include_str!("../../host/src/js/tether.js");
const LOADED: &str = "document.readyState === 'complete' || \
    new Promise((resolve) => addEventListener('load', () => resolve(true), { once: true }))";
const RUNS: usize = 30;
const SESSION: &str = "bench";

/// A raw CDP session on the tab, next to the host's own.
/// The baseline: the same CDP work, on a session of its own.
struct Raw<'a>(RawSession<'a>);

impl<'a> std::ops::Deref for Raw<'a> {
    type Target = RawSession<'a>;

    fn deref(&self) -> &RawSession<'a> {
        &self.0
    }
}

impl Raw<'_> {
    /// The in-page library, returned as one JSON string as the host does.
    async fn lib(&self, function: &str, args: Value) -> Value {
        let text = self
            .eval(&format!("JSON.stringify(({LIB_JS})().{function}({args}))"))
            .await;
        serde_json::from_str(text.as_str().unwrap()).unwrap()
    }

    /// Navigates, waits for the load event, then reads what a navigate result must report (the
    /// URL, title and HTTP status), as the host does.
    async fn navigate(&self, url: &str) {
        self.navigate_only(url).await;
        self.eval(
            "[location.href, document.title, performance.getEntriesByType('navigation')[0].responseStatus]",
        )
        .await;
    }

    async fn navigate_only(&self, url: &str) {
        let mut events = self.cdp.subscribe();
        let nav = self.call("Page.navigate", json!({ "url": url })).await;
        let loader = nav["loaderId"].as_str().unwrap().to_owned();
        loop {
            let e = events.recv().await.unwrap();
            if e.session_id.as_deref() == Some(&self.session)
                && e.method == "Page.lifecycleEvent"
                && e.params["name"] == "load"
                && e.params["loaderId"] == loader.as_str()
            {
                return;
            }
        }
    }

    /// The page's live HTML over CDP, then readability, as the host does.
    async fn readability(&self) {
        let page = self
            .eval("({ html: document.documentElement.outerHTML, url: location.href, title: document.title })")
            .await;
        let text = |key: &str| page[key].as_str().unwrap().to_owned();
        let (html, url, title) = (text("html"), text("url"), text("title"));
        tokio::task::spawn_blocking(move || extract(html, &url, title))
            .await
            .unwrap();
    }

    /// The same CDP work as the host: the layout metrics, then a capture clipped to the content.
    async fn screenshot(&self, format: &str, dir: &std::path::Path) {
        let metrics = self.call("Page.getLayoutMetrics", json!({})).await;
        let viewport = &metrics["cssVisualViewport"];
        let clip = json!({
            "x": viewport["pageX"], "y": viewport["pageY"],
            "width": viewport["clientWidth"], "height": viewport["clientHeight"], "scale": 1,
        });
        self.capture(json!({ "format": format, "clip": clip }), dir).await;
    }

    async fn capture(&self, params: Value, dir: &std::path::Path) {
        let format = params["format"].as_str().unwrap().to_owned();
        let shot = self.call("Page.captureScreenshot", params).await;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap())
            .unwrap();
        tokio::fs::write(dir.join(format!("raw.{format}")), bytes)
            .await
            .unwrap();
    }
}

#[derive(Clone, Copy)]
struct Stats {
    median: Duration,
    p90: Duration,
}

async fn measure<F, Fut>(mut op: F) -> Stats
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    for _ in 0..3 {
        op().await; // warm-up
    }
    let mut times = Vec::with_capacity(RUNS);
    for _ in 0..RUNS {
        let start = Instant::now();
        op().await;
        times.push(start.elapsed());
    }
    stats(times)
}

/// Measures two operations in alternation, so that the machine's drift (other processes, CPU
/// frequency) falls on both alike.
async fn compare<A, FA, B, FB>(mut a: A, mut b: B) -> (Stats, Stats)
where
    A: FnMut() -> FA,
    FA: Future<Output = ()>,
    B: FnMut() -> FB,
    FB: Future<Output = ()>,
{
    for _ in 0..3 {
        a().await; // warm-up
        b().await;
    }
    let (mut times_a, mut times_b) = (Vec::with_capacity(RUNS), Vec::with_capacity(RUNS));
    for _ in 0..RUNS {
        let start = Instant::now();
        a().await;
        times_a.push(start.elapsed());
        let start = Instant::now();
        b().await;
        times_b.push(start.elapsed());
    }
    (stats(times_a), stats(times_b))
}

fn stats(mut times: Vec<Duration>) -> Stats {
    times.sort();
    Stats {
        median: times[times.len() / 2],
        p90: times[times.len() * 9 / 10],
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn report(name: &str, host: Stats, raw: Stats) {
    println!(
        "{name:<34} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>7.2}x",
        ms(host.median),
        ms(host.p90),
        ms(raw.median),
        ms(raw.p90),
        ms(host.median) / ms(raw.median)
    );
}

async fn host(h: &Harness, action: &str, params: Value) {
    let result = h.act(SESSION, action, params.clone()).await;
    assert!(result.is_success(), "{action} {params}: {:?}", result.error);
}

fn main() {
    tether_tests::block_on(async {
        let h = Harness::launch_worker().await;
        println!(
            "{:<34} {:>9} {:>9} {:>9} {:>9} {:>8}",
            "action (ms)", "host p50", "host p90", "raw p50", "raw p90", "ratio"
        );
        bench(&h).await;
    });
}

async fn bench(h: &Harness) {
    let started = h
        .ok(
            SESSION,
            "session_start",
            json!({ "url": h.url("/fixtures/article.html") }),
        )
        .await;
    let tab = started["tabId"].as_i64().unwrap();
    h.ok(SESSION, "browser_wait_for_loaded", json!({ "tabId": tab }))
        .await;
    let cdp = h.worker().transport.connection();
    let target = h.worker().transport.target_id(tab).unwrap();
    let raw = Raw(RawSession::attach(cdp, &json!(target)).await);
    raw.call("Page.enable", json!({})).await;
    raw.call("Page.setLifecycleEventsEnabled", json!({ "enabled": true }))
        .await;
    let dir = tempfile::tempdir().unwrap();
    let t = json!({ "tabId": tab });
    let with = |extra: Value| {
        let mut p = t.clone();
        p.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        p
    };

    let article = h.url("/fixtures/article.html");
    let (host_nav, raw_nav) = compare(
        || host(h, "browser_navigate", with(json!({ "url": article }))),
        || raw.navigate(&article),
    )
    .await;
    report("browser_navigate (article)", host_nav, raw_nav);

    let (host_wait, raw_wait) = compare(
        || host(h, "browser_wait_for_loaded", t.clone()),
        || async {
            raw.eval(LOADED).await;
        },
    )
    .await;
    report("browser_wait_for_loaded", host_wait, raw_wait);

    for format in ["png", "jpeg"] {
        let (host_shot, raw_shot) = compare(
            || host(h, "browser_screenshot", with(json!({ "format": format }))),
            || raw.screenshot(format, dir.path()),
        )
        .await;
        report(&format!("browser_screenshot ({format})"), host_shot, raw_shot);
    }
    // What clipping to the content (no scrollbar strip) costs over CDP's plain capture.
    let (clipped, plain) = compare(
        || raw.screenshot("png", dir.path()),
        || raw.capture(json!({ "format": "png" }), dir.path()),
    )
    .await;
    report("  raw png: clipped vs plain capture", clipped, plain);

    let (host_read, raw_read) = compare(
        || host(h, "browser_readability_extract", t.clone()),
        || raw.readability(),
    )
    .await;
    report("browser_readability_extract", host_read, raw_read);

    let (host_html, raw_html) = compare(
        || host(h, "browser_get_html", t.clone()),
        || async {
            let page = raw.lib("html", json!({})).await;
            tokio::fs::write(dir.path().join("raw.html"), page["html"].as_str().unwrap())
                .await
                .unwrap();
        },
    )
    .await;
    report("browser_get_html", host_html, raw_html);

    host(
        h,
        "browser_navigate",
        with(json!({ "url": h.url("/fixtures/scan.html") })),
    )
    .await;
    let (host_scan, raw_scan) = compare(
        || host(h, "browser_xpath_scan", t.clone()),
        || async {
            raw.lib("scan", json!({ "scope": "viewport" })).await;
        },
    )
    .await;
    report("browser_xpath_scan (fixture page)", host_scan, raw_scan);

    host(
        h,
        "browser_navigate",
        with(json!({ "url": h.url("/fixtures/shadow.html") })),
    )
    .await;
    let button = "//fancy-widget/#shadow-root//button";
    let (host_click, raw_click) = compare(
        || host(h, "browser_click", with(json!({ "xpath": button }))),
        || async {
            let point = raw.lib("clickPoint", json!({ "xpath": button })).await;
            for (kind, buttons) in [("mouseMoved", 0), ("mousePressed", 1), ("mouseReleased", 0)] {
                let mut e = json!({ "type": kind, "x": point["x"], "y": point["y"], "buttons": buttons });
                if kind != "mouseMoved" {
                    e["button"] = json!("left");
                    e["clickCount"] = json!(1);
                }
                raw.call("Input.dispatchMouseEvent", e).await;
            }
        },
    )
    .await;
    report("browser_click (shadow root)", host_click, raw_click);

    host(
        h,
        "browser_navigate",
        with(json!({ "url": h.url("/fixtures/form.html") })),
    )
    .await;
    let (host_type, raw_type) = compare(
        || {
            host(
                h,
                "browser_type",
                with(json!({ "xpath": "//textarea", "text": "hello there" })),
            )
        },
        || async {
            raw.lib("focusForTyping", json!({ "xpath": "//textarea", "clear": true }))
                .await;
            raw.call("Input.insertText", json!({ "text": "hello there" }))
                .await;
        },
    )
    .await;
    report("browser_type (textarea)", host_type, raw_type);

    println!();
    host(h, "browser_navigate", with(json!({ "url": h.url("/big") }))).await;
    let (host_big, raw_big) = compare(
        || host(h, "browser_xpath_scan", with(json!({ "scope": "document" }))),
        || async {
            raw.lib("scan", json!({ "scope": "document" })).await;
        },
    )
    .await;
    report("browser_xpath_scan (20k elements)", host_big, raw_big);

    // An agent scans right after a page loaded: the first scan of a fresh page pays for what
    // Chromium computes lazily (layout of a 2,000-row table among it).
    let big = h.url("/big");
    let first = |host_side: bool| {
        let big = big.clone();
        let with = &with;
        let raw = &raw;
        async move {
            let mut times = Vec::new();
            for _ in 0..7 {
                host(h, "browser_navigate", with(json!({ "url": big }))).await;
                let start = Instant::now();
                if host_side {
                    host(h, "browser_xpath_scan", with(json!({ "scope": "document" }))).await;
                } else {
                    raw.lib("scan", json!({ "scope": "document" })).await;
                }
                times.push(start.elapsed());
            }
            times.sort();
            Stats {
                median: times[3],
                p90: times[6],
            }
        }
    };
    let host_first = first(true).await;
    let raw_first = first(false).await;
    report("  first scan after load (20k)", host_first, raw_first);

    host(
        h,
        "browser_navigate",
        with(json!({ "url": h.url("/long-article") })),
    )
    .await;
    let (host_long, raw_long) = compare(
        || host(h, "browser_readability_extract", t.clone()),
        || raw.readability(),
    )
    .await;
    report("readability (500 KB page)", host_long, raw_long);
    let html = raw
        .eval("document.documentElement.outerHTML")
        .await
        .as_str()
        .unwrap()
        .to_owned();
    let url = h.url("/long-article");
    let parse_only = measure(|| {
        let (html, url) = (html.clone(), url.clone());
        async move {
            tokio::task::spawn_blocking(move || extract(html, &url, String::new()))
                .await
                .unwrap();
        }
    })
    .await;
    let transfer = measure(|| async {
        raw.eval("document.documentElement.outerHTML").await;
    })
    .await;
    report("  raw: readability parse vs HTML transfer", parse_only, transfer);
    let length_only = measure(|| async {
        raw.eval("document.documentElement.outerHTML.length").await;
    })
    .await;
    report("  raw: HTML transfer vs HTML length only", transfer, length_only);
    println!("(500 KB page: {} bytes of HTML)", html.len());
}
