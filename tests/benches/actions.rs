//! Each action through the host versus the same CDP work done raw, in the same run, on the
//! same tab (the raw side attaches a CDP session of its own). Prints medians and the ratio.
//!
//!     cargo bench -p tether-tests --bench actions
//!
//! Figures go to docs/performance.md. Machines here are noisy: read ratios, not absolutes.

use std::time::Instant;

use base64::Engine as _;
use serde_json::{json, Value};
use tether_host::actions::browser_readability_extract::extract;
use tether_tests::bench::{compare, header, host, measure, on_tab, open, report, Raw, Stats, LIB_JS};
use tether_tests::Harness;

const LOADED: &str = "document.readyState === 'complete' || \
    new Promise((resolve) => addEventListener('load', () => resolve(true), { once: true }))";

/// The page's live HTML over CDP, then readability, as the host does.
async fn readability(raw: &Raw<'_>) {
    let page = raw
        .eval("({ html: document.documentElement.outerHTML, url: location.href, title: document.title })")
        .await;
    let text = |key: &str| page[key].as_str().unwrap().to_owned();
    let (html, url, title) = (text("html"), text("url"), text("title"));
    tokio::task::spawn_blocking(move || extract(html, &url, title))
        .await
        .unwrap();
}

/// The same CDP work as the host: the layout metrics, then a capture clipped to the content.
async fn screenshot(raw: &Raw<'_>, format: &str, dir: &std::path::Path) {
    let metrics = raw.call("Page.getLayoutMetrics", json!({})).await;
    let viewport = &metrics["cssVisualViewport"];
    let clip = json!({
        "x": viewport["pageX"], "y": viewport["pageY"],
        "width": viewport["clientWidth"], "height": viewport["clientHeight"], "scale": 1,
    });
    capture(raw, json!({ "format": format, "clip": clip }), dir).await;
}

async fn capture(raw: &Raw<'_>, params: Value, dir: &std::path::Path) {
    let format = params["format"].as_str().unwrap().to_owned();
    let shot = raw.call("Page.captureScreenshot", params).await;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(shot["data"].as_str().unwrap())
        .unwrap();
    tokio::fs::write(dir.join(format!("raw.{format}")), bytes)
        .await
        .unwrap();
}

fn main() {
    tether_tests::block_on(async {
        let h = Harness::launch_worker().await;
        header();
        bench(&h).await;
    });
}

async fn bench(h: &Harness) {
    let (tab, raw) = open(h, "/fixtures/article.html").await;
    let dir = tempfile::tempdir().unwrap();
    let t = json!({ "tabId": tab });
    let with = |extra: Value| on_tab(tab, extra);

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
            || screenshot(&raw, format, dir.path()),
        )
        .await;
        report(&format!("browser_screenshot ({format})"), host_shot, raw_shot);
    }
    // What clipping to the content (no scrollbar strip) costs over CDP's plain capture.
    let (clipped, plain) = compare(
        || screenshot(&raw, "png", dir.path()),
        || capture(&raw, json!({ "format": "png" }), dir.path()),
    )
    .await;
    report("  raw png: clipped vs plain capture", clipped, plain);

    let (host_read, raw_read) = compare(
        || host(h, "browser_readability_extract", t.clone()),
        || readability(&raw),
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
    browser_part_of_big_page(&raw, raw_big).await;

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
        || readability(&raw),
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

/// The browser's part of a document-scope scan and snapshot of the 20k-element page: what no
/// implementation of them can go under. For the scan, each interactive element's box and
/// visibility and a hit test for each in view; for the snapshot, also every element's
/// computed display and visibility; for both, moving a reply as long as theirs over CDP (their
/// own replies, made once and kept in the page). A querySelectorAll stands for the walk,
/// which this page (no shadow roots, no frames) does not need.
async fn browser_part_of_big_page(raw: &Raw<'_>, raw_scan: Stats) {
    const DOM_READS: &str = "for (const el of document.querySelectorAll('a[href], button, input')) {
        const r = el.getBoundingClientRect();
        if (r.width > 0 && r.height > 0 && el.checkVisibility({ visibilityProperty: true, checkVisibilityCSS: true })
            && r.top < innerHeight && r.bottom > 0 && r.left < innerWidth && r.right > 0)
          document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
      }";
    let keep = |function: &str| {
        format!(
            "window.tetherReply = JSON.stringify(({LIB_JS})().{function}({{ scope: 'document' }})); \
             window.tetherReply.length"
        )
    };
    let scan_part = format!("(() => {{ {DOM_READS}; return window.tetherReply; }})()");
    raw.eval(&keep("scan")).await;
    let scan_floor = measure(|| async {
        raw.eval(&scan_part).await;
    })
    .await;
    report("  raw: scan vs the browser's part of it", raw_scan, scan_floor);

    let raw_snapshot = measure(|| async {
        raw.lib("snapshot", json!({ "scope": "document" })).await;
    })
    .await;
    let snapshot_part = format!(
        "(() => {{ for (const el of document.querySelectorAll('*')) {{ const s = getComputedStyle(el); s.display; s.visibility; }}
            {DOM_READS}; return window.tetherReply; }})()"
    );
    raw.eval(&keep("snapshot")).await;
    let snapshot_floor = measure(|| async {
        raw.eval(&snapshot_part).await;
    })
    .await;
    report(
        "  raw: snapshot vs the browser's part of it",
        raw_snapshot,
        snapshot_floor,
    );
}
