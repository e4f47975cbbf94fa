//! Gestures of docs/protocol.md §16 through the host versus the same CDP work done raw, in the
//! same run, on the same tab: a drag of a slider, a form of ten fields filled in one action
//! (beside ten `browser_type` calls, which it replaces), and a click by ref on a checkbox
//! inside a cross-origin frame (against raw CDP doing the checks §15 and §16 ask of a press,
//! and against the bare click). Prints medians and the ratio.
//!
//!     cargo bench -p tether-tests --bench gestures
//!
//! Figures go to docs/performance.md. Machines here are noisy: read ratios, not absolutes.

use serde_json::{json, Value};
use tether_tests::bench::{compare, header, host, on_tab, open, report, Raw, SESSION};
use tether_tests::cdp::RawSession;
use tether_tests::Harness;

/// The fields of the bench's form: ten text inputs.
const FIELDS: usize = 10;

fn main() {
    tether_tests::block_on(async {
        let h = Harness::launch_worker().await;
        header();
        drag(&h).await;
        fill(&h).await;
        frame_click(&h).await;
    });
}

/// The slider's thumb dragged 60 px, as the host drags: to the thumb, press, 12 moves, release.
async fn drag(h: &Harness) {
    let (tab, raw) = open(h, "/fixtures/drag.html").await;
    let thumb = "//div[@id='thumb']";
    let (host_drag, raw_drag) = compare(
        || {
            host(
                h,
                "browser_drag",
                on_tab(tab, json!({ "xpath": thumb, "dx": 60, "dy": 0 })),
            )
        },
        || raw_drag(&raw, thumb),
    )
    .await;
    report("browser_drag (slider, 12 steps)", host_drag, raw_drag);
}

async fn raw_drag(raw: &Raw<'_>, thumb: &str) {
    let point = raw.lib("clickPoint", json!({ "xpath": thumb })).await;
    let (x, y) = (point["x"].as_f64().unwrap(), point["y"].as_f64().unwrap());
    let mouse = |kind: &str, x: f64, buttons: u32| json!({ "type": kind, "x": x, "y": y, "button": if buttons > 0 || kind != "mouseMoved" { "left" } else { "none" }, "buttons": buttons, "clickCount": u8::from(kind != "mouseMoved") });
    raw.call("Input.dispatchMouseEvent", mouse("mouseMoved", x, 0))
        .await;
    raw.call("Input.dispatchMouseEvent", mouse("mousePressed", x, 1))
        .await;
    for step in 1..=12 {
        let at = x + 60.0 * f64::from(step) / 12.0;
        raw.call("Input.dispatchMouseEvent", mouse("mouseMoved", at, 1))
            .await;
    }
    raw.call("Input.dispatchMouseEvent", mouse("mouseReleased", x + 60.0, 0))
        .await;
}

/// Ten text fields filled in one `browser_fill_form`, against the same ten fields typed raw
/// (focus, select, insert), and against ten `browser_type` calls (on the engine, then through
/// the relay).
async fn fill(h: &Harness) {
    let (tab, raw) = open(h, "/fixtures/drag.html").await;
    let make = format!(
        "(() => {{ document.body.innerHTML = Array.from({{ length: {FIELDS} }}, (_, i) => `<input id=\"f${{i}}\">`).join(''); return true; }})()"
    );
    raw.eval(&make).await;
    let xpath = |i: usize| format!("//input[@id='f{i}']");
    let fields: Vec<Value> = (0..FIELDS)
        .map(|i| json!({ "xpath": xpath(i), "value": format!("value {i}") }))
        .collect();
    let (host_fill, raw_fill) = compare(
        || host(h, "browser_fill_form", on_tab(tab, json!({ "fields": fields }))),
        || async {
            for i in 0..FIELDS {
                raw.lib("focusForTyping", json!({ "xpath": xpath(i), "clear": true }))
                    .await;
                raw.call("Input.insertText", json!({ "text": format!("value {i}") }))
                    .await;
            }
        },
    )
    .await;
    report("browser_fill_form (10 text fields)", host_fill, raw_fill);
    let (host_fill, host_types) = compare(
        || host(h, "browser_fill_form", on_tab(tab, json!({ "fields": fields }))),
        || async {
            for i in 0..FIELDS {
                let typed = json!({ "xpath": xpath(i), "text": format!("value {i}") });
                host(h, "browser_type", on_tab(tab, typed)).await;
            }
        },
    )
    .await;
    report("fill_form vs 10 browser_type calls", host_fill, host_types);

    // As an agent calls them: through the relay, each call its own HTTP round trip.
    let relay = tether_tests::bench::relayed_worker(h).await;
    let s = "fill-relayed";
    let page = json!({ "url": h.url("/fixtures/ten-fields.html") });
    let tab = relay.ok(s, "session_start", page).await["tabId"].clone();
    relay
        .ok(s, "browser_wait_for_loaded", json!({ "tabId": tab }))
        .await;
    let (relayed_fill, relayed_types) = compare(
        || async {
            let filled = json!({ "tabId": tab, "fields": fields });
            relay.ok(s, "browser_fill_form", filled).await;
        },
        || async {
            for i in 0..FIELDS {
                let typed = json!({ "tabId": tab, "xpath": xpath(i), "text": format!("value {i}") });
                relay.ok(s, "browser_type", typed).await;
            }
        },
    )
    .await;
    report("... the same through the relay", relayed_fill, relayed_types);
}

/// A click by ref on a checkbox inside a cross-origin frame (127.0.0.2 in a page of
/// 127.0.0.1), against raw CDP on its own session of the frame's target: the checkbox's point
/// in the frame, where the frame's viewport sits in the page, and the pointer moved, pressed
/// and released there.
async fn frame_click(h: &Harness) {
    let (tab, raw) = open(h, "/fixtures/embedded-login.html").await;
    let scan = h
        .ok(
            SESSION,
            "browser_xpath_scan",
            on_tab(tab, json!({ "scope": "document" })),
        )
        .await;
    let remember = scan["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["attributes"]["name"] == "remember")
        .expect("the frame's checkbox is scanned")["ref"]
        .clone();
    let targets = raw.cdp.call(None, "Target.getTargets", json!({})).await.unwrap();
    let frame = targets["targetInfos"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["type"] == "iframe" && t["url"].as_str().unwrap().contains("frame-login"))
        .expect("the frame is a target of its own")["targetId"]
        .clone();
    let inside = Raw::new(RawSession::attach(raw.cdp, &frame).await);
    let corner = "(() => { const f = document.getElementById('partner'); const r = f.getBoundingClientRect(); const s = getComputedStyle(f); \
        return [r.left + f.clientLeft + parseFloat(s.paddingLeft), r.top + f.clientTop + parseFloat(s.paddingTop)]; })()";
    let xpath = "//input[@name='remember']";
    // The bare click: the checkbox's point, the frame's place, the pointer moved and pressed.
    // With `checked`, what §15 and §16 ask of a press as well, as the host does it: the frame's
    // URL read (to refuse a blocked site), the point hit-tested again once the pointer rests
    // there (arming the press watch), and what the press reached read back.
    let raw_click = |checked: bool| {
        let (raw, inside) = (&raw, &inside);
        async move {
            if checked {
                inside.eval("location.href").await;
            }
            let point = inside.lib("clickPoint", json!({ "xpath": xpath })).await;
            let at = raw.eval(corner).await;
            let x = point["x"].as_f64().unwrap() + at[0].as_f64().unwrap();
            let y = point["y"].as_f64().unwrap() + at[1].as_f64().unwrap();
            let mouse = |kind: &str, buttons: u32| {
                let button = if kind == "mouseMoved" { "none" } else { "left" };
                json!({ "type": kind, "x": x, "y": y, "button": button, "buttons": buttons, "clickCount": u8::from(kind != "mouseMoved") })
            };
            raw.call("Input.dispatchMouseEvent", mouse("mouseMoved", 0)).await;
            if checked {
                let landing = json!({ "xpath": xpath, "x": point["x"], "y": point["y"], "arm": true });
                inside.lib("landing", landing).await;
            }
            raw.call("Input.dispatchMouseEvent", mouse("mousePressed", 1))
                .await;
            raw.call("Input.dispatchMouseEvent", mouse("mouseReleased", 0))
                .await;
            if checked {
                inside.lib("pressed", json!({})).await;
            }
        }
    };
    let click = || host(h, "browser_click", on_tab(tab, json!({ "ref": remember })));
    let (host_click, checked_click) = compare(click, || raw_click(true)).await;
    report(
        "browser_click by ref in a cross-origin frame",
        host_click,
        checked_click,
    );
    let (host_click, bare_click) = compare(click, || raw_click(false)).await;
    report(
        "... against the bare click (no URL check, landing, press read)",
        host_click,
        bare_click,
    );
}
