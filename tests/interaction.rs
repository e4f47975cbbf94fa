//! Clicking and typing as a person would: real input events, elements scrolled into view,
//! covers detected, and pages that only believe trusted input.

use serde_json::{json, Value};
use tether_protocol::ErrorCode;
use tether_tests::mcp::ref_named;
use tether_tests::{run, Harness};

/// The xpath of the first element of a document-wide scan whose `attributes.id` is `id`.
async fn scanned_xpath(h: &Harness, session: &str, tab: i64, id: &str) -> String {
    scanned(h, session, tab, id, "xpath").await
}

/// A field (`xpath`, `ref`) of the first scanned element whose `attributes.id` is `id`.
async fn scanned(h: &Harness, session: &str, tab: i64, id: &str, field: &str) -> String {
    let scan = h
        .ok(
            session,
            "browser_xpath_scan",
            json!({ "tabId": tab, "scope": "document" }),
        )
        .await;
    scan["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["attributes"]["id"] == id)
        .unwrap_or_else(|| panic!("no #{id} in {scan}"))[field]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn click_scrolls_a_far_element_into_view_and_presses_it() {
    run(|h| async move {
        let tab = h.start("click-far", "/fixtures/below-fold.html").await;
        assert_eq!(h.eval(tab, "scrollY").await, 0);
        let clicked = h
            .ok(
                "click-far",
                "browser_click",
                json!({ "tabId": tab, "xpath": "//button[@id='far']" }),
            )
            .await;
        assert_eq!(clicked["clicked"], true);
        assert_eq!(h.eval(tab, "window.farClicks").await, 1);
        assert!(h.eval(tab, "scrollY").await.as_f64().unwrap() > 2000.0);
    });
}

#[test]
fn click_reaches_into_an_open_shadow_root() {
    run(|h| async move {
        let tab = h.start("click-shadow", "/fixtures/shadow.html").await;
        let xpath = scanned_xpath(h, "click-shadow", tab, "inner").await;
        assert!(xpath.contains("/#shadow-root/"), "{xpath}");
        h.ok(
            "click-shadow",
            "browser_click",
            json!({ "tabId": tab, "xpath": xpath }),
        )
        .await;
        // A hand-written search below the shadow root works too.
        let search = "//fancy-widget/#shadow-root//button[@id='inner']";
        h.ok(
            "click-shadow",
            "browser_click",
            json!({ "tabId": tab, "xpath": search }),
        )
        .await;
        assert_eq!(
            h.eval(tab, "document.getElementById('clicks').textContent").await,
            "2"
        );
    });
}

#[test]
fn click_refuses_a_covered_element_and_names_the_cover() {
    run(|h| async move {
        let tab = h.start("click-covered", "/fixtures/overlay.html").await;
        let buy = json!({ "tabId": tab, "xpath": "//button[@id='buy']" });
        let e = h
            .fails_with(
                ErrorCode::ElementNotInteractable,
                "click-covered",
                "browser_click",
                buy.clone(),
            )
            .await;
        assert!(e.message.contains("cookie-banner"), "{}", e.message);
        let cover = &e.details.expect("details")["coveredBy"];
        assert_eq!(
            (cover["tag"].as_str(), cover["id"].as_str()),
            (Some("div"), Some("cookie-banner"))
        );
        assert_eq!(cover["xpath"], "/html/body/div");
        assert_eq!(
            h.eval(tab, "window.bought").await,
            Value::Null,
            "nothing was clicked"
        );

        // Dismiss the cover, as an agent would, and the same click goes through.
        h.ok(
            "click-covered",
            "browser_click",
            json!({ "tabId": tab, "xpath": "//button[@id='accept']" }),
        )
        .await;
        h.ok("click-covered", "browser_click", buy).await;
        assert_eq!(h.eval(tab, "window.bought").await, 1);
    });
}

#[test]
fn click_reports_missing_hidden_and_malformed_targets() {
    run(|h| async move {
        let tab = h.start("click-errors", "/fixtures/scan.html").await;
        let e = h
            .fails_with(
                ErrorCode::ElementNotFound,
                "click-errors",
                "browser_click",
                json!({ "tabId": tab, "xpath": "//button[@id='nope']" }),
            )
            .await;
        assert!(
            e.message.contains("browser_xpath_scan"),
            "suggests a rescan: {}",
            e.message
        );
        h.fails_with(
            ErrorCode::InvalidParams,
            "click-errors",
            "browser_click",
            json!({ "tabId": tab, "xpath": "//button[" }),
        )
        .await;
        let e = h
            .fails_with(
                ErrorCode::ElementNotInteractable,
                "click-errors",
                "browser_click",
                json!({ "tabId": tab, "xpath": "//button[@id='hidden-none']" }),
            )
            .await;
        assert!(e.message.contains("not rendered"), "{}", e.message);
    });
}

#[test]
fn refs_from_a_scan_address_elements_until_they_leave_the_page() {
    run(|h| async move {
        let s = "refs";
        let tab = h.start(s, "/fixtures/form.html").await;
        let name = scanned(h, s, tab, "name", "ref").await;
        let go = scanned(h, s, tab, "go", "ref").await;
        assert_ne!(name, go);
        assert_eq!(
            scanned(h, s, tab, "name", "ref").await,
            name,
            "a second scan keeps refs"
        );

        let typed = json!({ "tabId": tab, "ref": name, "text": "Grace" });
        h.ok(s, "browser_type", typed).await;
        h.ok(s, "browser_click", json!({ "tabId": tab, "ref": go })).await;
        assert_eq!(
            h.eval(tab, "document.getElementById('submitted').textContent")
                .await,
            "Grace"
        );

        h.eval(tab, "document.getElementById('go').remove()").await;
        let gone = h
            .fails_with(
                ErrorCode::ElementNotFound,
                s,
                "browser_click",
                json!({ "tabId": tab, "ref": go }),
            )
            .await;
        assert!(
            gone.message.contains("stale") && gone.message.contains("removed"),
            "{}",
            gone.message
        );

        h.ok(s, "browser_reload", json!({ "tabId": tab })).await;
        let reloaded = h
            .fails_with(
                ErrorCode::ElementNotFound,
                s,
                "browser_type",
                json!({ "tabId": tab, "ref": name, "text": "x" }),
            )
            .await;
        assert!(
            reloaded.message.contains("navigated or reloaded"),
            "{}",
            reloaded.message
        );

        let both = json!({ "tabId": tab, "ref": name, "xpath": "//input", "text": "x" });
        let error = h
            .fails_with(ErrorCode::InvalidParams, s, "browser_type", both)
            .await;
        assert!(error.message.contains("not both"), "{}", error.message);
    });
}

#[test]
fn type_reaches_a_controlled_input_through_trusted_events() {
    run(|h| async move {
        let tab = h.start("type-controlled", "/fixtures/form.html").await;
        // The fixture has teeth: setting the value from script does not reach its state.
        h.eval(tab, "const i = document.getElementById('name'); i.value = 'forged'; i.dispatchEvent(new Event('input', { bubbles: true }))").await;
        assert_eq!(
            h.eval(tab, "document.getElementById('state').textContent").await,
            ""
        );

        let name = json!({ "tabId": tab, "xpath": "//input[@id='name']", "text": "Ada Lovelace" });
        assert_eq!(
            h.ok("type-controlled", "browser_type", name).await,
            json!({ "typed": true })
        );
        assert_eq!(
            h.eval(tab, "document.getElementById('state').textContent").await,
            "Ada Lovelace"
        );
        assert_eq!(
            h.eval(tab, "document.getElementById('name').value").await,
            "Ada Lovelace"
        );
    });
}

#[test]
fn type_replaces_by_default_appends_when_asked_and_clears_with_empty_text() {
    run(|h| async move {
        let tab = h.start("type-modes", "/fixtures/form.html").await;
        let bio = "document.getElementById('bio').value";
        let typed = |text: &str, clear: bool| json!({ "tabId": tab, "xpath": "//textarea", "text": text, "clear": clear });
        h.ok("type-modes", "browser_type", typed("new bio", true)).await;
        assert_eq!(h.eval(tab, bio).await, "new bio");
        h.ok("type-modes", "browser_type", typed(", more", false)).await;
        assert_eq!(h.eval(tab, bio).await, "new bio, more");
        h.ok("type-modes", "browser_type", typed("", true)).await;
        assert_eq!(h.eval(tab, bio).await, "");
        // An email input has no selection API; appending still lands at the end.
        let email = |text: &str, clear: bool| json!({ "tabId": tab, "xpath": "//input[@id='email']", "text": text, "clear": clear });
        h.ok("type-modes", "browser_type", email("ada@", true)).await;
        h.ok("type-modes", "browser_type", email("example.org", false))
            .await;
        assert_eq!(
            h.eval(tab, "document.getElementById('email').value").await,
            "ada@example.org"
        );
    });
}

#[test]
fn type_with_submit_presses_enter() {
    run(|h| async move {
        let tab = h.start("type-submit", "/fixtures/form.html").await;
        let params = json!({ "tabId": tab, "xpath": "//input[@id='name']", "text": "Grace", "submit": true });
        h.ok("type-submit", "browser_type", params).await;
        assert_eq!(
            h.eval(tab, "document.getElementById('submitted').textContent")
                .await,
            "Grace"
        );
    });
}

#[test]
fn type_into_contenteditable_keeps_every_character() {
    run(|h| async move {
        let tab = h.start("type-editable", "/fixtures/editor.html").await;
        let editor = "document.getElementById('editor').textContent";
        h.ok(
            "type-editable",
            "browser_type",
            json!({ "tabId": tab, "xpath": "//div[@id='editor']", "text": "Hello world" }),
        )
        .await;
        assert_eq!(h.eval(tab, editor).await, "Hello world");
        h.ok(
            "type-editable",
            "browser_type",
            json!({ "tabId": tab, "xpath": "//div[@id='editor']", "text": "!", "clear": false }),
        )
        .await;
        assert_eq!(h.eval(tab, editor).await, "Hello world!");
        assert!(
            h.eval(tab, "Number(document.getElementById('inputs').textContent)")
                .await
                .as_u64()
                .unwrap()
                >= 2
        );
    });
}

#[test]
fn type_and_click_inside_a_same_origin_iframe() {
    run(|h| async move {
        let tab = h.start("frame", "/fixtures/frame-outer.html").await;
        let city = scanned_xpath(h, "frame", tab, "city").await;
        assert!(city.contains("/#document/"), "{city}");
        h.ok(
            "frame",
            "browser_type",
            json!({ "tabId": tab, "xpath": city, "text": "Lisbon" }),
        )
        .await;
        let save = scanned_xpath(h, "frame", tab, "save").await;
        h.ok("frame", "browser_click", json!({ "tabId": tab, "xpath": save }))
            .await;
        let saved =
            "document.getElementById('inner-frame').contentDocument.getElementById('saved').textContent";
        assert_eq!(h.eval(tab, saved).await, "Lisbon");
    });
}

#[test]
fn type_refuses_what_does_not_take_text() {
    run(|h| async move {
        let tab = h.start("type-refusals", "/fixtures/form.html").await;
        for (xpath, why) in [
            ("//button[@id='go']", "does not take text"),
            ("//input[@id='readonly']", "read-only"),
            ("//input[@id='disabled']", "disabled"),
        ] {
            let e = h
                .fails_with(
                    ErrorCode::ElementNotInteractable,
                    "type-refusals",
                    "browser_type",
                    json!({ "tabId": tab, "xpath": xpath, "text": "x" }),
                )
                .await;
            assert!(e.message.contains(why), "{xpath}: {}", e.message);
        }
        assert_eq!(
            h.eval(tab, "document.getElementById('readonly').value").await,
            "fixed"
        );
    });
}

#[test]
fn clicks_take_any_button_count_modifiers_or_a_point() {
    run(|h| async move {
        let s = "click-kinds";
        let tab = h.start(s, "/fixtures/clicks.html").await;
        let target = "//button[@id='target']";
        let click = |extra: Value| {
            let mut params = json!({ "tabId": tab });
            params
                .as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            h.ok(s, "browser_click", params)
        };
        let seen = || h.eval(tab, "window.seen.splice(0)");
        click(json!({ "xpath": target, "clickCount": 2 })).await;
        assert_eq!(seen().await, json!(["click 1", "click 2", "dblclick"]));
        click(json!({ "xpath": target, "button": "right" })).await;
        assert_eq!(
            seen().await,
            json!(["contextmenu", "auxclick 2"]),
            "as a real right button"
        );
        click(json!({ "xpath": target, "button": "middle" })).await;
        assert_eq!(seen().await, json!(["auxclick 1"]));
        click(json!({ "xpath": target, "modifiers": ["Shift", "Control"] })).await;
        assert_eq!(seen().await, json!(["click 1 ctrl+shift"]));
        // The button's centre, in the viewport: (100 + 80, 120 + 20) with the page unscrolled.
        h.eval(tab, "scrollTo(0, 0)").await;
        click(json!({ "x": 180, "y": 140 })).await;
        assert_eq!(seen().await, json!(["click 1"]));
        for bad in [
            json!({ "tabId": tab }),
            json!({ "tabId": tab, "xpath": target, "x": 1, "y": 1 }),
            json!({ "tabId": tab, "x": 1 }),
            json!({ "tabId": tab, "x": 100000, "y": 10 }),
            json!({ "tabId": tab, "xpath": target, "clickCount": 4 }),
            json!({ "tabId": tab, "xpath": target, "button": "back" }),
            json!({ "tabId": tab, "xpath": target, "modifiers": ["Hyper"] }),
        ] {
            h.fails_with(ErrorCode::InvalidParams, s, "browser_click", bad)
                .await;
        }
        assert_eq!(seen().await, json!([]), "a refused click clicks nothing");
    });
}

/// docs/protocol.md §15: a page that redefines the DOM functions a script would use to find,
/// measure and check its elements cannot move where a ref points or where a click lands: the
/// library runs in a JavaScript world of its own.
#[test]
fn a_page_that_lies_to_scripts_neither_hides_an_element_nor_moves_a_click() {
    run(|h| async move {
        let s = "liar";
        let tab = h.start(s, "/fixtures/liar.html").await;
        let snapshot = h.ok(s, "browser_snapshot", json!({ "tabId": tab })).await;
        let text = snapshot["markdown"].as_str().unwrap_or_default().to_owned();
        assert!(text.contains("button \"Pay\""), "{text}");
        assert!(text.contains("button \"Delete account\""), "{text}");
        let pay = ref_named(&text, "Pay");
        let clicked = h
            .ok(s, "browser_click", json!({ "tabId": tab, "ref": pay }))
            .await;
        assert_eq!(clicked["pressed"]["id"], "pay", "{clicked}");
        assert_eq!(
            h.eval(tab, "[window.paid === true, window.deleted === true]")
                .await,
            json!([true, false]),
            "the press reached Pay, and Pay only"
        );
    });
}
