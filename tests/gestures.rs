//! Gestures beyond a click (docs/protocol.md §16): drags that widgets and HTML5 drag and drop
//! both take for a person's, a pointer that draws on a canvas, the viewport a page sees, and
//! the page printed. Each test reads the page's own state afterwards, in both modes.

use serde_json::json;
use tether_protocol::ErrorCode;
use tether_tests::run;

#[test]
fn a_drag_moves_a_slider_that_follows_the_pointer() {
    run(|h| async move {
        let s = "drag-slider";
        let tab = h.start(s, "/fixtures/drag.html").await;
        let dragged = h
            .ok(
                s,
                "browser_drag",
                json!({ "tabId": tab, "xpath": "//div[@id='thumb']", "dx": 150, "dy": 0 }),
            )
            .await;
        assert_eq!(dragged["dragged"], true);
        let (from, to) = (&dragged["from"], &dragged["to"]);
        assert_eq!(to["x"].as_f64().unwrap() - from["x"].as_f64().unwrap(), 150.0);
        assert_eq!(
            h.eval(tab, "window.slider").await,
            50,
            "the thumb followed the pointer half way"
        );
    });
}

#[test]
fn a_drag_carries_a_card_into_a_drop_zone_through_html5_drag_and_drop() {
    run(|h| async move {
        let s = "drag-html5";
        let tab = h.start(s, "/fixtures/drag.html").await;
        let dragged = h
            .ok(
                s,
                "browser_drag",
                json!({ "tabId": tab, "xpath": "//div[@id='pear']", "toXpath": "//div[@id='zone']" }),
            )
            .await;
        assert_eq!(dragged["dropTarget"]["id"], "zone", "{dragged}");
        let events = h.eval(tab, "window.dnd.map(e => e.split(':')[0])").await;
        assert_eq!(
            h.eval(tab, "document.getElementById('pear').parentElement.id")
                .await,
            "zone",
            "the page's drop handler read the card from its DataTransfer: {events}"
        );
        assert_eq!(events, json!(["dragstart", "dragenter", "drop", "dragend"]));
    });
}

#[test]
fn the_mouse_draws_a_stroke_with_its_button_held_between_down_and_up() {
    run(|h| async move {
        let s = "mouse-stroke";
        let tab = h.start(s, "/fixtures/drag.html").await;
        let canvas = h
            .eval(tab, "(() => { const r = document.getElementById('canvas').getBoundingClientRect(); return [r.left, r.top]; })()")
            .await;
        let (left, top) = (canvas[0].as_f64().unwrap(), canvas[1].as_f64().unwrap());
        let step = |action: &str, x: f64, y: f64| json!({ "tabId": tab, "action": action, "x": left + x, "y": top + y });
        for params in [
            step("down", 10.0, 10.0),
            step("move", 60.0, 40.0),
            step("move", 110.0, 70.0),
            step("up", 110.0, 70.0),
            step("move", 150.0, 70.0),
            // Nothing is held: a person's up does nothing.
            step("up", 150.0, 70.0),
        ] {
            assert_eq!(h.ok(s, "browser_mouse", params).await["done"], true);
        }
        let strokes = h
            .eval(
                tab,
                "window.strokes.filter(e => e.type !== 'mousemove' || e.x !== 10)",
            )
            .await;
        let seen: Vec<(String, i64, i64, i64)> = strokes
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                (
                    e["type"].as_str().unwrap().to_owned(),
                    e["x"].as_i64().unwrap(),
                    e["y"].as_i64().unwrap(),
                    e["buttons"].as_i64().unwrap(),
                )
            })
            .collect();
        let expected = [
            ("mousedown", 10, 10, 1),
            ("mousemove", 60, 40, 1),
            ("mousemove", 110, 70, 1),
            ("mouseup", 110, 70, 0),
            ("mousemove", 150, 70, 0),
        ];
        let expected: Vec<(String, i64, i64, i64)> = expected
            .iter()
            .map(|(t, x, y, b)| ((*t).to_owned(), *x, *y, *b))
            .collect();
        assert_eq!(seen, expected);
        assert!(strokes.as_array().unwrap().iter().all(|e| e["trusted"] == true));
        let ink = "document.getElementById('canvas').getContext('2d').getImageData(60, 40, 1, 1).data[3]";
        assert!(
            h.eval(tab, ink).await.as_u64().unwrap() > 0,
            "the stroke is drawn on the canvas"
        );
        let wheel =
            json!({ "tabId": tab, "action": "wheel", "x": left + 20.0, "y": top + 20.0, "deltaY": 120 });
        h.ok(s, "browser_mouse", wheel).await;
        assert_eq!(
            h.eval(tab, "window.strokes.at(-1)").await,
            json!({ "type": "wheel", "deltaY": 120 })
        );
    });
}

#[test]
fn a_resized_viewport_is_what_the_page_sees_until_reset() {
    run(|h| async move {
        let s = "resize";
        let tab = h.start(s, "/fixtures/drag.html").await;
        let before = h.eval(tab, "[innerWidth, innerHeight]").await;
        h.eval(
            tab,
            "addEventListener('resize', () => { window.resizedTo = [innerWidth, innerHeight]; }); true",
        )
        .await;
        let resized = h
            .ok(
                s,
                "browser_resize",
                json!({ "tabId": tab, "width": 500, "height": 400, "deviceScaleFactor": 2, "colorScheme": "dark" }),
            )
            .await;
        assert_eq!(
            resized,
            json!({ "width": 500, "height": 400, "deviceScaleFactor": 2.0 })
        );
        assert_eq!(
            h.eval(tab, "[innerWidth, innerHeight, devicePixelRatio]").await,
            json!([500, 400, 2])
        );
        assert_eq!(
            h.eval(tab, "matchMedia('(prefers-color-scheme: dark)').matches")
                .await,
            true
        );
        let phone = h
            .ok(
                s,
                "browser_resize",
                json!({ "tabId": tab, "width": 390, "height": 800, "mobile": true }),
            )
            .await;
        assert_eq!(
            phone["width"], 980,
            "a page without a viewport meta tag lays out as on a phone: {phone}"
        );
        assert_eq!(
            h.eval(tab, "matchMedia('(pointer: coarse)').matches").await,
            true,
            "touch, as on a phone"
        );
        let reset = h
            .ok(s, "browser_resize", json!({ "tabId": tab, "reset": true }))
            .await;
        assert_eq!(
            json!([reset["width"], reset["height"]]),
            before,
            "reset answers the window's own size, as the page sees it: {reset}"
        );
        assert_eq!(h.eval(tab, "[innerWidth, innerHeight]").await, before);
        assert_eq!(
            h.eval(tab, "window.resizedTo").await,
            before,
            "the page had its resize event"
        );
        assert_eq!(
            h.eval(tab, "matchMedia('(prefers-color-scheme: dark)').matches")
                .await,
            false
        );
    });
}

#[test]
fn the_page_prints_to_a_pdf_artifact() {
    run(|h| async move {
        let s = "pdf";
        let tab = h.start(s, "/fixtures/article.html").await;
        let printed = h
            .ok(s, "browser_pdf", json!({ "tabId": tab, "paper": "Letter" }))
            .await;
        let bytes = h.artifact(&printed).await;
        assert!(bytes.starts_with(b"%PDF-"), "a PDF");
        assert_eq!(printed["bytes"], bytes.len());
        assert!(printed["pages"].as_u64().unwrap() >= 1, "{printed}");
    });
}

#[test]
fn gestures_with_incomplete_or_out_of_range_params_say_which() {
    run(|h| async move {
        let s = "gesture-params";
        let tab = h.start(s, "/fixtures/drag.html").await;
        for (action, params, names) in [
            (
                "browser_drag",
                json!({ "tabId": tab, "x": 5, "y": 5, "dx": 10 }),
                "dx needs dy",
            ),
            (
                "browser_drag",
                json!({ "tabId": tab, "x": 5, "y": 5, "dx": 1, "dy": 1, "steps": 0 }),
                "steps",
            ),
            (
                "browser_drag",
                json!({ "tabId": tab, "x": 5, "y": 5, "dx": 1, "dy": 1, "holdMs": 5000 }),
                "holdMs",
            ),
            (
                "browser_drag",
                json!({ "tabId": tab, "xpath": "//a", "x": 5, "y": 5, "dx": 1, "dy": 1 }),
                "start once",
            ),
            (
                "browser_drag",
                json!({ "tabId": tab, "x": 5, "y": 5, "toX": 1, "toY": 1, "dx": 1, "dy": 1 }),
                "end once",
            ),
            (
                "browser_mouse",
                json!({ "tabId": tab, "action": "wheel", "x": 5, "y": 5 }),
                "deltaX or deltaY",
            ),
            (
                "browser_resize",
                json!({ "tabId": tab, "width": 100, "height": 400 }),
                "width must be 200 to 4000",
            ),
            (
                "browser_resize",
                json!({ "tabId": tab, "reset": true, "width": 400 }),
                "reset",
            ),
        ] {
            let error = h.fails_with(ErrorCode::InvalidParams, s, action, params).await;
            assert!(error.message.contains(names), "{action}: {}", error.message);
        }
    });
}

#[test]
fn a_form_is_filled_in_one_action_as_a_person_fills_it() {
    run(|h| async move {
        let s = "fill-form";
        let tab = h.start(s, "/fixtures/checkout.html").await;
        let fields = json!([
            { "xpath": "//input[@id='name']", "value": "Ada Lovelace" },
            { "xpath": "//textarea[@id='notes']", "value": "Leave at the door" },
            { "xpath": "//select[@id='country']", "value": "New Zealand" },
            { "xpath": "//select[@id='extras']", "value": ["wrap", "Bag"] },
            { "xpath": "//input[@id='news']", "value": false },
            { "xpath": "//input[@id='fast']", "value": true },
        ]);
        let filled = h
            .ok(
                s,
                "browser_fill_form",
                json!({ "tabId": tab, "fields": fields, "submit": { "xpath": "//button[@id='pay']" } }),
            )
            .await;
        let filled = filled["filled"].as_array().unwrap();
        assert_eq!(filled.len(), 6);
        assert_eq!(filled[0], json!({ "xpath": "//input[@id='name']", "ok": true }));
        assert_eq!(
            h.eval(tab, "window.state").await,
            json!({ "name": "Ada Lovelace", "notes": "Leave at the door", "country": "nz",
                    "extras": ["wrap", "bag"], "news": false, "ship": "express", "paid": 1 }),
            "the page's own state saw each field's input, then the submit"
        );
    });
}

#[test]
fn a_field_that_fails_ends_the_fill_saying_which_and_what_was_set() {
    run(|h| async move {
        let s = "fill-form-fails";
        let tab = h.start(s, "/fixtures/checkout.html").await;
        let fields = json!([
            { "xpath": "//input[@id='name']", "value": "Ada" },
            { "xpath": "//input[@id='news']", "value": "yes" },
            { "xpath": "//textarea[@id='notes']", "value": "never typed" },
        ]);
        let error = h
            .fails_with(
                ErrorCode::InvalidParams,
                s,
                "browser_fill_form",
                json!({ "tabId": tab, "fields": fields }),
            )
            .await;
        assert!(error.message.contains("takes true or false"), "{}", error.message);
        let details = error.details.expect("details");
        assert_eq!(details["field"], 1);
        assert_eq!(
            details["filled"],
            json!([{ "xpath": "//input[@id='name']", "ok": true }])
        );
        assert_eq!(
            h.eval(tab, "[window.state.name, window.state.notes]").await,
            json!(["Ada", ""])
        );
        let none = h
            .fails_with(
                ErrorCode::InvalidParams,
                s,
                "browser_fill_form",
                json!({ "tabId": tab, "fields": [] }),
            )
            .await;
        assert!(none.message.contains("1 to 100"), "{}", none.message);
    });
}

#[test]
fn a_link_wrapped_over_two_lines_is_pressed_on_its_text() {
    run(|h| async move {
        let s = "land-wrapped";
        let tab = h.start(s, "/fixtures/landing.html").await;
        let lines = h
            .eval(tab, "document.getElementById('wrapped').getClientRects().length")
            .await;
        assert_eq!(lines, 2, "the fixture's link wraps");
        let clicked = h
            .ok(
                s,
                "browser_click",
                json!({ "tabId": tab, "xpath": "//a[@id='wrapped']" }),
            )
            .await;
        assert_eq!(clicked["pressed"]["id"], "wrapped", "{clicked}");
        assert_eq!(h.eval(tab, "location.hash").await, "#read");
    });
}

#[test]
fn a_press_that_would_land_elsewhere_once_the_pointer_arrives_is_refused() {
    run(|h| async move {
        let s = "land-swapped";
        let tab = h.start(s, "/fixtures/landing.html").await;
        let error = h
            .fails_with(
                ErrorCode::ElementNotInteractable,
                s,
                "browser_click",
                json!({ "tabId": tab, "xpath": "//span[@id='icon']" }),
            )
            .await;
        assert!(
            error.message.contains("stopped being rendered"),
            "{}",
            error.message
        );
        assert_eq!(
            h.eval(tab, "[window.shared, window.pressedOn]").await,
            json!([0, []]),
            "nothing was pressed"
        );
    });
}

#[test]
fn a_click_on_an_icon_whose_hover_image_comes_late_reaches_the_icon() {
    run(|h| async move {
        let s = "land-hover-swap";
        let tab = h.start(s, "/fixtures/hover-swap.html").await;
        h.ok(
            s,
            "browser_wait_for",
            json!({ "tabId": tab, "text": "icons ready" }),
        )
        .await;
        for icon in ["like", "reply"] {
            let clicked = h
                .ok(
                    s,
                    "browser_click",
                    json!({ "tabId": tab, "xpath": format!("//span[@id='{icon}']") }),
                )
                .await;
            let said = h.eval(tab, "document.getElementById('said').textContent").await;
            assert_eq!(clicked["pressed"]["id"], icon, "{clicked}; the page says {said}");
            assert_eq!(said, format!("{icon} clicked"), "{clicked}");
        }
    });
}

#[test]
fn fields_under_a_banner_are_neither_typed_into_nor_chosen() {
    run(|h| async move {
        let s = "land-banner";
        let tab = h.start(s, "/fixtures/landing.html").await;
        h.eval(tab, "document.getElementById('banner').hidden = false; document.getElementById('below').style.top = (innerHeight - 40) + 'px'; true").await;
        let select = json!({ "tabId": tab, "xpath": "//select[@id='size']", "values": ["m"] });
        let covered = h
            .fails_with(
                ErrorCode::ElementNotInteractable,
                s,
                "browser_select_option",
                select,
            )
            .await;
        assert_eq!(covered.details.unwrap()["coveredBy"]["id"], "banner");
        let typing = json!({ "tabId": tab, "xpath": "//input[@id='name']", "text": "Ada" });
        let covered = h
            .fails_with(ErrorCode::ElementNotInteractable, s, "browser_type", typing)
            .await;
        assert!(covered.message.contains("banner"), "{}", covered.message);
        let state = "[document.getElementById('size').value, document.getElementById('name').value]";
        assert_eq!(h.eval(tab, state).await, json!(["s", ""]), "nothing changed");
    });
}

#[test]
fn a_drag_on_its_corner_resizes_a_textarea() {
    run(|h| async move {
        let s = "drag-resize";
        let tab = h.start(s, "/fixtures/drag.html").await;
        let measure = "(() => { const r = document.getElementById('notes').getBoundingClientRect(); return [r.right, r.bottom, r.width, r.height]; })()";
        let before = h.eval(tab, measure).await;
        let at = |i: usize, v: &serde_json::Value| v[i].as_f64().unwrap();
        let corner = json!({ "tabId": tab, "x": at(0, &before) - 3.0, "y": at(1, &before) - 3.0, "dx": 100, "dy": 50 });
        h.ok(s, "browser_drag", corner).await;
        let after = h.eval(tab, measure).await;
        let grown = (at(2, &after) - at(2, &before), at(3, &after) - at(3, &before));
        assert!(
            (grown.0 - 100.0).abs() <= 4.0 && (grown.1 - 50.0).abs() <= 4.0,
            "the textarea grew by the drag: {grown:?}"
        );
    });
}
