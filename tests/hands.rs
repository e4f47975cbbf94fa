//! The rest of a person's hands (docs/protocol.md §9): resting the pointer on a menu, pressing
//! keys. Each test checks the page's own state afterwards, in both modes.

use serde_json::json;
use tether_protocol::ErrorCode;
use tether_tests::run;

#[test]
fn hover_opens_a_css_menu_that_a_click_can_then_use() {
    run(|h| async move {
        let s = "hover-menu";
        let tab = h.start(s, "/fixtures/menu.html").await;
        let sub = "getComputedStyle(document.getElementById('sub')).display";
        assert_eq!(h.eval(tab, sub).await, "none");
        let hovered = h
            .ok(
                s,
                "browser_hover",
                json!({ "tabId": tab, "xpath": "//button[@id='products']" }),
            )
            .await;
        assert_eq!(hovered["hovered"], true);
        assert_eq!(h.eval(tab, sub).await, "block", "the menu opened on hover");
        assert_eq!(h.eval(tab, "window.entered").await, 1, "one trusted mouseenter");
        h.ok(
            s,
            "browser_click",
            json!({ "tabId": tab, "xpath": "//a[@id='shoes']" }),
        )
        .await;
        assert_eq!(h.eval(tab, "location.hash").await, "#shoes");
    });
}

#[test]
fn hover_on_a_hidden_element_says_so() {
    run(|h| async move {
        let s = "hover-hidden";
        let tab = h.start(s, "/fixtures/menu.html").await;
        let error = h
            .fails_with(
                ErrorCode::ElementNotInteractable,
                s,
                "browser_hover",
                json!({ "tabId": tab, "xpath": "//a[@id='coats']" }),
            )
            .await;
        assert!(error.message.contains("not rendered"), "{}", error.message);
    });
}

#[test]
fn escape_closes_a_modal_with_a_trusted_key_event() {
    run(|h| async move {
        let s = "keys-escape";
        let tab = h.start(s, "/fixtures/modal.html").await;
        assert_eq!(
            h.eval(tab, "document.getElementById('modal').hidden").await,
            false
        );
        let pressed = h
            .ok(s, "browser_press_key", json!({ "tabId": tab, "key": "Escape" }))
            .await;
        assert_eq!(pressed["pressed"], true);
        assert_eq!(h.eval(tab, "document.getElementById('modal').hidden").await, true);
        assert_eq!(h.eval(tab, "window.keys").await, json!(["Escape"]));
    });
}

#[test]
fn keys_edit_a_field_as_a_keyboard_would() {
    run(|h| async move {
        let s = "keys-edit";
        let tab = h.start(s, "/fixtures/modal.html").await;
        let field = "//input[@id='field']";
        let press = |key: &str, extra: serde_json::Value| {
            let mut params = json!({ "tabId": tab, "key": key });
            params
                .as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            h.ok(s, "browser_press_key", params)
        };
        press("End", json!({ "xpath": field })).await;
        assert_eq!(h.eval(tab, "document.activeElement.id").await, "field");
        press("x", json!({ "repeat": 3 })).await;
        assert_eq!(
            h.eval(tab, "document.getElementById('field').value").await,
            "hello worldxxx"
        );
        press("Shift+y", json!({})).await;
        assert_eq!(
            h.eval(tab, "document.getElementById('field').value").await,
            "hello worldxxxY"
        );
        press("Control+a", json!({})).await;
        press("Backspace", json!({})).await;
        assert_eq!(h.eval(tab, "document.getElementById('field').value").await, "");
    });
}

#[test]
fn an_unknown_key_is_invalid_params_and_presses_nothing() {
    run(|h| async move {
        let s = "keys-unknown";
        let tab = h.start(s, "/fixtures/modal.html").await;
        for key in ["Escpae", "Hyper+a", "Control+"] {
            let error = h
                .fails_with(
                    ErrorCode::InvalidParams,
                    s,
                    "browser_press_key",
                    json!({ "tabId": tab, "key": key }),
                )
                .await;
            assert!(
                error.message.contains("key") || error.message.contains("modifier"),
                "{}",
                error.message
            );
        }
        h.fails_with(
            ErrorCode::InvalidParams,
            s,
            "browser_press_key",
            json!({ "tabId": tab, "key": "a", "repeat": 0 }),
        )
        .await;
        assert_eq!(h.eval(tab, "window.keys").await, json!([]));
    });
}

#[test]
fn select_option_picks_by_value_or_label_and_the_page_hears_it() {
    run(|h| async move {
        let s = "select-pick";
        let tab = h.start(s, "/fixtures/select.html").await;
        let size = "//select[@id='size']";
        let picked = h
            .ok(
                s,
                "browser_select_option",
                json!({ "tabId": tab, "xpath": size, "values": ["Medium"] }),
            )
            .await;
        assert_eq!(picked["selected"], json!(["m"]));
        assert_eq!(
            h.eval(tab, "document.getElementById('summary').textContent")
                .await,
            "size=m colours=red"
        );
        assert_eq!(h.eval(tab, "window.state.inputs").await, 1, "input fired too");

        let colours = "//select[@id='colours']";
        let picked = h
            .ok(
                s,
                "browser_select_option",
                json!({ "tabId": tab, "xpath": colours, "values": ["blue", "green"] }),
            )
            .await;
        assert_eq!(
            picked["selected"],
            json!(["blue", "green"]),
            "the whole new selection"
        );
        assert_eq!(
            h.eval(tab, "document.getElementById('summary').textContent")
                .await,
            "size=m colours=blue,green"
        );
    });
}

#[test]
fn select_option_refuses_what_is_not_there() {
    run(|h| async move {
        let s = "select-refuse";
        let tab = h.start(s, "/fixtures/select.html").await;
        let size = "//select[@id='size']";
        let missing = h
            .fails_with(
                ErrorCode::InvalidParams,
                s,
                "browser_select_option",
                json!({ "tabId": tab, "xpath": size, "values": ["XL"] }),
            )
            .await;
        assert!(
            missing.message.contains("\"m\" (Medium)"),
            "lists the options: {}",
            missing.message
        );
        h.fails_with(
            ErrorCode::ElementNotInteractable,
            s,
            "browser_select_option",
            json!({ "tabId": tab, "xpath": size, "values": ["l"] }),
        )
        .await;
        h.fails_with(
            ErrorCode::ElementNotInteractable,
            s,
            "browser_select_option",
            json!({ "tabId": tab, "xpath": "//p[@id='summary']", "values": ["m"] }),
        )
        .await;
        assert_eq!(
            h.eval(tab, "document.getElementById('size').value").await,
            "",
            "nothing changed"
        );
    });
}

#[test]
fn wheel_scrolling_loads_more_of_an_infinite_list() {
    run(|h| async move {
        let s = "scroll-feed";
        let tab = h.start(s, "/fixtures/feed.html").await;
        let posts = "document.querySelectorAll('.post').length";
        assert_eq!(h.eval(tab, posts).await, 10);
        let mut last = h.ok(s, "browser_scroll", json!({ "tabId": tab })).await;
        assert!(last["scrollY"].as_f64().unwrap() > 0.0, "{last}");
        let mut steps = 0;
        while !last["atEnd"].as_bool().unwrap() {
            steps += 1;
            assert!(steps < 60, "the feed never ended: {last}");
            last = h
                .ok(s, "browser_scroll", json!({ "tabId": tab, "amount": 2000 }))
                .await;
        }
        assert_eq!(h.eval(tab, posts).await, 50, "every page loaded on the way down");
        assert!(
            h.eval(tab, "window.wheels").await.as_u64().unwrap() >= 2,
            "trusted wheel events"
        );
        assert_eq!(
            h.eval(tab, "Math.round(scrollY)").await.as_f64(),
            last["scrollY"].as_f64().map(f64::round)
        );
        let up = h
            .ok(
                s,
                "browser_scroll",
                json!({ "tabId": tab, "direction": "up", "amount": 100000 }),
            )
            .await;
        assert_eq!(
            (up["scrollY"].as_f64(), up["atEnd"].as_bool()),
            (Some(0.0), Some(true))
        );
    });
}

#[test]
fn scroll_moves_an_element_or_brings_it_into_view() {
    run(|h| async move {
        let s = "scroll-element";
        let tab = h.start(s, "/fixtures/feed.html").await;
        let side = "//aside[@id='side']";
        let moved = h
            .ok(
                s,
                "browser_scroll",
                json!({ "tabId": tab, "xpath": side, "amount": 240 }),
            )
            .await;
        assert_eq!(moved["scrollY"], 240.0, "{moved}");
        assert_eq!(
            h.eval(tab, "document.getElementById('side').scrollTop").await,
            240
        );
        assert_eq!(h.eval(tab, "scrollY").await, 0, "the page stayed");
        let into = h
            .ok(
                s,
                "browser_scroll",
                json!({ "tabId": tab, "xpath": "//article[10]", "intoView": true }),
            )
            .await;
        assert!(into["scrollY"].as_f64().unwrap() > 0.0, "{into}");
        let r = "(() => { const r = document.querySelectorAll('.post')[9].getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()";
        assert_eq!(h.eval(tab, r).await, true);
        h.fails_with(
            ErrorCode::InvalidParams,
            s,
            "browser_scroll",
            json!({ "tabId": tab, "intoView": true }),
        )
        .await;
        h.fails_with(
            ErrorCode::InvalidParams,
            s,
            "browser_scroll",
            json!({ "tabId": tab, "amount": -5 }),
        )
        .await;
    });
}

#[test]
fn upload_hands_the_page_files_it_reads_as_a_persons_pick() {
    run(|h| async move {
        let s = "upload-read";
        let tab = h.start(s, "/fixtures/upload.html").await;
        let note = h.store_file("note.txt", "text/plain", b"hello from tether").await;
        let uploaded = h
            .ok(
                s,
                "browser_upload_file",
                json!({ "tabId": tab, "xpath": "//input[@id='avatar']", "artifactIds": [note] }),
            )
            .await;
        assert_eq!(uploaded["files"], json!([{ "name": "note.txt", "bytes": 17 }]));
        // The page reads the file when it likes: wait for what its FileReader shows.
        let read = json!({ "tabId": tab, "text": "hello from tether", "timeoutMs": 5000 });
        h.ok(s, "browser_wait_for", read).await;
        assert_eq!(
            h.eval(tab, "document.getElementById('events').textContent").await,
            "avatar:input:true avatar:change:true"
        );

        let a = h.store_file("a.txt", "text/plain", b"a").await;
        let b = h.store_file("b.csv", "text/csv", b"1,2").await;
        let both = json!({ "tabId": tab, "xpath": "//input[@id='docs']", "artifactIds": [a, b] });
        h.ok(s, "browser_upload_file", both).await;
        assert_eq!(
            h.eval(tab, "document.getElementById('docs-list').textContent")
                .await,
            "a.txt=1,b.csv=3"
        );
    });
}

#[test]
fn upload_through_a_button_that_opens_the_file_chooser() {
    run(|h| async move {
        let s = "upload-chooser";
        let tab = h.start(s, "/fixtures/upload.html").await;
        let report = h.store_file("report.pdf", "application/pdf", b"%PDF-1.4").await;
        let picked = json!({ "tabId": tab, "xpath": "//button[@id='pick']", "artifactIds": [report] });
        h.ok(s, "browser_upload_file", picked).await;
        assert_eq!(
            h.eval(tab, "document.getElementById('picked').textContent").await,
            "report.pdf"
        );
        // The chooser is the page's own again afterwards: a click opens no interception.
        let heading = json!({ "tabId": tab, "xpath": "//h1", "artifactIds": [report] });
        let error = h
            .fails_with(
                ErrorCode::ElementNotInteractable,
                s,
                "browser_upload_file",
                heading,
            )
            .await;
        assert!(error.message.contains("no file chooser"), "{}", error.message);
    });
}

#[test]
fn upload_refuses_unknown_files_and_too_many_for_a_single_field() {
    run(|h| async move {
        let s = "upload-refusals";
        let tab = h.start(s, "/fixtures/upload.html").await;
        let avatar = "//input[@id='avatar']";
        let missing =
            json!({ "tabId": tab, "xpath": avatar, "artifactIds": ["0123456789abcdef0123456789abcdef"] });
        let error = h
            .fails_with(ErrorCode::InvalidParams, s, "browser_upload_file", missing)
            .await;
        assert!(
            error.message.contains("no artifact \"0123456789abcdef"),
            "{}",
            error.message
        );
        let none = json!({ "tabId": tab, "xpath": avatar, "artifactIds": [] });
        h.fails_with(ErrorCode::InvalidParams, s, "browser_upload_file", none)
            .await;

        let one = h.store_file("one.txt", "text/plain", b"1").await;
        let two = h.store_file("two.txt", "text/plain", b"2").await;
        let both = json!({ "tabId": tab, "xpath": avatar, "artifactIds": [one, two] });
        let error = h
            .fails_with(ErrorCode::InvalidParams, s, "browser_upload_file", both)
            .await;
        assert!(error.message.contains("takes one file"), "{}", error.message);
        assert_eq!(
            h.eval(tab, "document.getElementById('events').textContent").await,
            "",
            "nothing was set"
        );
    });
}
