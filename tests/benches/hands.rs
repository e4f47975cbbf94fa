//! The rest of a person's hands (docs/protocol.md §9) through the host versus the same CDP work
//! done raw, in the same run, on the same tab. Prints medians and the ratio.
//!
//!     cargo bench -p tether-tests --bench hands
//!
//! Figures go to docs/performance.md. Machines here are noisy: read ratios, not absolutes.

use serde_json::{json, Value};
use tether_tests::bench::{compare, header, host, on_tab, open, report, Raw};
use tether_tests::Harness;

fn main() {
    tether_tests::block_on(async {
        let h = Harness::launch_worker().await;
        header();
        bench(&h).await;
    });
}

/// A key pressed as the host presses it: down with its text, then up.
async fn raw_key(raw: &Raw<'_>, key: &str, code: &str, key_code: u32) {
    for (kind, text) in [("keyDown", Some(key)), ("keyUp", None)] {
        let mut event = json!({ "type": kind, "key": key, "code": code, "windowsVirtualKeyCode": key_code, "modifiers": 0 });
        if let Some(text) = text {
            event["text"] = json!(text);
            event["unmodifiedText"] = json!(text);
        }
        raw.call("Input.dispatchKeyEvent", event).await;
    }
}

/// Runs a CDP command that loads a page, waits for it as the host does (the load event, or
/// the back/forward cache restoring the page, which fires none), and reads what the result
/// reports: URL, title and HTTP status.
async fn raw_load(raw: &Raw<'_>, method: &str, params: Value) {
    let mut events = raw.cdp.subscribe();
    raw.call(method, params).await;
    loop {
        let e = events.recv().await.unwrap();
        if e.session_id.as_deref() != Some(&raw.session) {
            continue;
        }
        let loaded = e.method == "Page.lifecycleEvent" && e.params["name"] == "load";
        let restored = e.method == "Page.frameNavigated"
            && e.params["type"] == "BackForwardCacheRestore"
            && e.params["frame"]["parentId"].is_null();
        if loaded || restored {
            break;
        }
    }
    raw.eval("[location.href, document.title, performance.getEntriesByType('navigation')[0].responseStatus]")
        .await;
}

/// One step through history, as the host takes it.
async fn raw_history(raw: &Raw<'_>, offset: i64) {
    let history = raw.call("Page.getNavigationHistory", json!({})).await;
    let index = history["currentIndex"].as_i64().unwrap() + offset;
    let entry = history["entries"][index as usize]["id"].clone();
    raw_load(raw, "Page.navigateToHistoryEntry", json!({ "entryId": entry })).await;
}

async fn bench(h: &Harness) {
    let (tab, raw) = open(h, "/fixtures/menu.html").await;
    let t = json!({ "tabId": tab });
    let with = |extra: Value| on_tab(tab, extra);
    let go = |path: &str| host(h, "browser_navigate", with(json!({ "url": h.url(path) })));

    let products = "//button[@id='products']";
    let (host_hover, raw_hover) = compare(
        || host(h, "browser_hover", with(json!({ "xpath": products }))),
        || async {
            let point = raw.lib("clickPoint", json!({ "xpath": products })).await;
            let moved = json!({ "type": "mouseMoved", "x": point["x"], "y": point["y"], "buttons": 0 });
            raw.call("Input.dispatchMouseEvent", moved).await;
        },
    )
    .await;
    report("browser_hover (CSS menu)", host_hover, raw_hover);

    go("/fixtures/form.html").await;
    let (host_key, raw_key_stats) = compare(
        || {
            host(
                h,
                "browser_press_key",
                with(json!({ "key": "a", "xpath": "//textarea" })),
            )
        },
        || async {
            raw.lib("focus", json!({ "xpath": "//textarea" })).await;
            raw_key(&raw, "a", "KeyA", 65).await;
        },
    )
    .await;
    report("browser_press_key (focus + a)", host_key, raw_key_stats);

    let (host_wait, raw_wait) = compare(
        || host(h, "browser_wait_for", with(json!({ "text": "Sign up" }))),
        || async {
            let condition = json!({ "tabId": tab, "text": "Sign up" });
            raw.lib("waitFor", json!({ "condition": condition, "timeoutMs": 10000 }))
                .await;
        },
    )
    .await;
    report("browser_wait_for (text shown)", host_wait, raw_wait);

    let (host_reload, raw_reload) = compare(
        || host(h, "browser_reload", t.clone()),
        || raw_load(&raw, "Page.reload", json!({})),
    )
    .await;
    report("browser_reload (form)", host_reload, raw_reload);

    go("/fixtures/menu.html").await;
    let (host_history, raw_history_stats) = compare(
        || async {
            host(h, "browser_go_back", t.clone()).await;
            host(h, "browser_go_forward", t.clone()).await;
        },
        || async {
            raw_history(&raw, -1).await;
            raw_history(&raw, 1).await;
        },
    )
    .await;
    report("browser_go_back + go_forward", host_history, raw_history_stats);

    go("/fixtures/select.html").await;
    let size = "//select[@id='size']";
    let (host_select, raw_select) = compare(
        || {
            host(
                h,
                "browser_select_option",
                with(json!({ "xpath": size, "values": ["m"] })),
            )
        },
        || async {
            raw.lib("selectOption", json!({ "xpath": size, "values": ["m"] }))
                .await;
        },
    )
    .await;
    report("browser_select_option", host_select, raw_select);

    go("/long-article").await;
    let (host_scroll, raw_scroll) = compare(
        || host(h, "browser_scroll", with(json!({ "amount": 100 }))),
        || async {
            let at = raw.lib("wheelAt", json!({ "direction": "down" })).await;
            let wheel =
                json!({ "type": "mouseWheel", "x": at["x"], "y": at["y"], "deltaX": 0, "deltaY": 100 });
            raw.call("Input.dispatchMouseEvent", wheel).await;
            raw.lib("scrolled", json!({ "direction": "down" })).await;
        },
    )
    .await;
    report("browser_scroll (100 px, wheel)", host_scroll, raw_scroll);

    let (host_tabs, raw_tabs) = compare(
        || host(h, "browser_tabs", json!({})),
        || async {
            raw.cdp.call(None, "Target.getTargets", json!({})).await.unwrap();
            raw.eval("document.readyState").await;
        },
    )
    .await;
    report("browser_tabs (list)", host_tabs, raw_tabs);

    go("/fixtures/upload.html").await;
    let note = h.store_file("bench-note.txt", "text/plain", b"hello").await;
    let file = h.worker().artifact_dir.join(&note).display().to_string();
    let avatar = "//input[@id='avatar']";
    let (host_upload, raw_upload) = compare(
        || {
            host(
                h,
                "browser_upload_file",
                with(json!({ "xpath": avatar, "artifactIds": [note] })),
            )
        },
        || async {
            let field = raw
                .call(
                    "Runtime.evaluate",
                    json!({ "expression": "document.getElementById('avatar')" }),
                )
                .await;
            let object = field["result"]["objectId"].clone();
            raw.call(
                "DOM.setFileInputFiles",
                json!({ "files": [file], "objectId": object }),
            )
            .await;
            raw.call("Runtime.releaseObject", json!({ "objectId": object }))
                .await;
        },
    )
    .await;
    report("browser_upload_file (1 file)", host_upload, raw_upload);

    h.allow_evaluate(true).await;
    let (host_eval, raw_eval) = compare(
        || {
            host(
                h,
                "browser_evaluate",
                with(json!({ "expression": "document.title" })),
            )
        },
        || async {
            raw.call(
                "Runtime.evaluate",
                json!({ "expression": "document.title", "awaitPromise": true }),
            )
            .await;
        },
    )
    .await;
    report("browser_evaluate (a string)", host_eval, raw_eval);
    let object = "({ title: document.title, fields: document.querySelectorAll('input').length })";
    let (host_object, raw_object) = compare(
        || host(h, "browser_evaluate", with(json!({ "expression": object }))),
        || async {
            raw.call(
                "Runtime.evaluate",
                json!({ "expression": object, "awaitPromise": true, "returnByValue": true }),
            )
            .await;
        },
    )
    .await;
    report("browser_evaluate (an object)", host_object, raw_object);
}
