//! Settling (docs/protocol.md §20), in both modes: an action that can change the page returns
//! the page after what it set going finished (a fetch and its rendering, an XHR, a chain, a
//! timer, a transition, a form's navigation, a debounced search), never waits for what runs on
//! its own (a clock, polling from load), stops at `settleMs` saying what still ran, and with
//! `settle: "none"` returns at once, as before.

use serde_json::{json, Value};
use tether_protocol::actions::TabId;
use tether_protocol::ErrorCode;
use tether_tests::{run, Harness};

const PAGE: &str = "/fixtures/settle.html";

async fn status(h: &Harness, tab: TabId) -> Value {
    h.eval(tab, "document.getElementById('status').textContent").await
}

/// A click's params on the element with `id`, with `extra` beside them.
fn on(tab: TabId, id: &str, extra: Value) -> Value {
    let mut params = json!({ "tabId": tab, "xpath": format!("//*[@id='{id}']") });
    params
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    params
}

async fn click(h: &Harness, s: &str, tab: TabId, id: &str, extra: Value) -> Value {
    h.ok(s, "browser_click", on(tab, id, extra)).await
}

#[test]
fn a_click_returns_the_page_its_requests_and_timers_left() {
    run(|h| async move {
        let s = "settle-kinds";
        let tab = h.start(s, PAGE).await;
        let saved = click(h, s, tab, "fetch", json!({ "observe": "recent" })).await;
        assert_eq!(status(h, tab).await, "Saved OK", "{saved}");
        assert!(saved["screen"].as_str().unwrap().contains("Saved OK"), "{saved}");
        assert!(
            saved["settled"]["waited"]["requests"].as_u64().unwrap() >= 1,
            "{saved}"
        );

        let loaded = click(h, s, tab, "xhr", json!({})).await;
        assert_eq!(status(h, tab).await, "Loaded by XHR", "{loaded}");

        let chained = click(h, s, tab, "chain", json!({})).await;
        assert_eq!(status(h, tab).await, "Both steps done", "{chained}");
        assert!(
            chained["settled"]["waited"]["requests"].as_u64().unwrap() >= 2,
            "{chained}"
        );

        let later = click(h, s, tab, "timer", json!({})).await;
        assert_eq!(status(h, tab).await, "Later came", "{later}");
        assert!(
            later["settled"]["waited"]["timers"].as_u64().unwrap() >= 1,
            "{later}"
        );

        let turned = click(h, s, tab, "transition", json!({})).await;
        let colour = h
            .eval(
                tab,
                "getComputedStyle(document.getElementById('swatch')).backgroundColor",
            )
            .await;
        assert_eq!(colour, "rgb(0, 0, 200)", "the transition ended: {turned}");
        assert!(
            turned["settled"]["waited"]["animations"].as_u64().unwrap() >= 1,
            "{turned}"
        );
        // And the screen shows it: a shot taken right after the click has the end colour.
        let shot = h
            .ok(
                s,
                "browser_screenshot",
                json!({ "tabId": tab, "xpath": "//*[@id='swatch']" }),
            )
            .await;
        let png = image::load_from_memory(&h.artifact(&shot).await)
            .unwrap()
            .to_rgb8();
        let middle = png.get_pixel(png.width() / 2, png.height() / 2).0;
        assert_eq!(middle, [0, 0, 200], "the swatch as the screen shows it");
    });
}

#[test]
fn a_form_and_a_debounced_search_are_waited_for() {
    run(|h| async move {
        let s = "settle-form";
        let tab = h.start(s, PAGE).await;
        let typed = h
            .ok(
                s,
                "browser_type",
                json!({ "tabId": tab, "xpath": "//input[@id='search']", "text": "lamp" }),
            )
            .await;
        let results = h
            .eval(tab, "document.getElementById('results').textContent")
            .await;
        assert!(
            results.as_str().unwrap().starts_with("Results for lamp"),
            "{results}; {typed}"
        );

        let ordered = click(h, s, tab, "submit", json!({})).await;
        assert_eq!(ordered["settled"]["waited"]["navigation"], true, "{ordered}");
        let at = h.eval(tab, "location.pathname").await;
        assert_eq!(at, "/fixtures/article.html", "{ordered}");
    });
}

#[test]
fn what_runs_on_its_own_is_never_waited_for() {
    run(|h| async move {
        let s = "settle-own";
        let tab = h.start(s, PAGE).await;
        // The clock ticks and the page polls all along; a click that sets nothing going waits
        // for none of it.
        let said = click(h, s, tab, "static", json!({})).await;
        assert_eq!(status(h, tab).await, "Hi");
        assert!(said.get("settled").is_none(), "{said}");

        // A request that never answers: the action ends at settleMs, saying what still ran.
        let waiting = click(h, s, tab, "longpoll", json!({ "settleMs": 300 })).await;
        let pending = &waiting["settled"]["pending"];
        assert_eq!(pending[0]["kind"], "request", "{waiting}");
        assert!(
            pending[0]["url"].as_str().unwrap().ends_with("/stall"),
            "{waiting}"
        );
    });
}

#[test]
fn settle_none_returns_at_once_and_bad_settle_params_are_refused() {
    run(|h| async move {
        let s = "settle-none";
        let tab = h.start(s, PAGE).await;
        // A request that never answers is not waited for: the click returns with nothing
        // settled (with "auto" it would wait out settleMs and name the request).
        let quick = click(h, s, tab, "longpoll", json!({ "settle": "none" })).await;
        assert!(quick.get("settled").is_none(), "{quick}");
        for bad in [
            json!({ "settle": "later" }),
            json!({ "settleMs": 50 }),
            json!({ "settleMs": 30_001 }),
        ] {
            h.fails_with(
                ErrorCode::InvalidParams,
                s,
                "browser_click",
                on(tab, "static", bad),
            )
            .await;
        }
    });
}

#[test]
fn a_handlers_failed_requests_are_in_its_clicks_observed() {
    run(|h| async move {
        let s = "settle-observed";
        let tab = h.start(s, PAGE).await;
        let broke = click(h, s, tab, "fail", json!({})).await;
        let failed = broke["observed"]["failedRequests"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let urls: Vec<&str> = failed.iter().filter_map(|r| r["url"].as_str()).collect();
        assert!(urls.iter().any(|u| u.ends_with("/status/404")), "{broke}");
        assert!(urls.iter().any(|u| u.contains("127.0.0.1:1/")), "{broke}");
    });
}

/// A submit the form's own validation stopped says which fields and the browser's message,
/// rather than a page that did not change; once the fields are filled the form is sent.
#[test]
fn a_submit_the_forms_validation_stopped_names_the_fields() {
    run(|h| async move {
        let s = "settle-invalid";
        let tab = h.start(s, "/fixtures/task.html").await;
        let send = json!({ "tabId": tab, "xpath": "//button[text()='Send']" });
        let stopped = h.ok(s, "browser_click", send.clone()).await;
        let invalid = stopped["settled"]["invalid"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert!(!invalid.is_empty(), "{stopped}");
        assert_eq!(invalid[0]["field"], "Name", "{stopped}");
        assert!(!invalid[0]["message"].as_str().unwrap().is_empty(), "{stopped}");

        let fields = json!([
            { "xpath": "//*[@id='name']", "value": "Ada" },
            { "xpath": "//*[@id='email']", "value": "ada@example.com" },
            { "xpath": "//*[@id='country']", "value": "France" },
        ]);
        h.ok(s, "browser_fill_form", json!({ "tabId": tab, "fields": fields }))
            .await;
        let sent = h.ok(s, "browser_click", send).await;
        assert!(sent["settled"].get("invalid").is_none(), "{sent}");
        let answer = h.eval(tab, "document.getElementById('answer').textContent").await;
        assert_eq!(answer, "Thank you, Ada: your catalogue goes to France.", "{sent}");
    });
}

/// The ref of the scanned button named `name`.
async fn button(h: &Harness, s: &str, tab: TabId, name: &str) -> Value {
    let scan = h
        .ok(
            s,
            "browser_xpath_scan",
            json!({ "tabId": tab, "scope": "document" }),
        )
        .await;
    let found = scan["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["text"] == name || e["name"] == name)
        .unwrap_or_else(|| panic!("no button {name:?} in {scan}"));
    found["ref"].clone()
}

/// What a click sets going in a frame, same-origin or cross-origin, is waited for as the
/// page's own is; so are a script and a frame document the click asked for.
#[test]
fn work_in_frames_and_what_a_click_loads_are_waited_for() {
    run(|h| async move {
        let s = "settle-frames";
        let tab = h.start(s, "/fixtures/settle-frames.html").await;

        let ran = click(h, s, tab, "script", json!({})).await;
        assert_eq!(status(h, tab).await, "Script ran", "{ran}");
        assert!(
            ran["settled"]["waited"]["requests"].as_u64().unwrap() >= 1,
            "{ran}"
        );

        let added = click(h, s, tab, "frame", json!({})).await;
        let inside = h
            .eval(
                tab,
                "(() => { const d = document.getElementById('added').contentDocument; \
                 return d && d.readyState === 'complete' && !!d.getElementById('save'); })()",
            )
            .await;
        assert_eq!(inside, true, "the added frame's document loaded: {added}");

        let same = "document.getElementById('same').contentDocument.getElementById('status').textContent";
        let save = json!({ "tabId": tab, "ref": button(h, s, tab, "Save on 127.0.0.1").await });
        let saved = h.ok(s, "browser_click", save).await;
        assert_eq!(h.eval(tab, same).await, "Saved on 127.0.0.1", "{saved}");

        // A cross-origin frame is not the page's to read: what the click shows is.
        for (name, done) in [
            ("Save on 127.0.0.2", "Saved on 127.0.0.2"),
            ("Later on 127.0.0.2", "Later on 127.0.0.2"),
        ] {
            let at = json!({ "tabId": tab, "ref": button(h, s, tab, name).await, "observe": "recent" });
            let clicked = h.ok(s, "browser_click", at).await;
            let screen = clicked["screen"].as_str().unwrap_or_default();
            assert!(screen.contains(done), "{name}: {clicked}");
        }
    });
}
