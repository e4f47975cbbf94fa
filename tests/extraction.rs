//! Reading the page: the interactive-element scan, readability, HTML and screenshots, each
//! checked against what the page really holds.

use std::io::Cursor;

use image::{ImageFormat, ImageReader};
use serde_json::{json, Value};
use tether_protocol::actions::TabId;
use tether_protocol::ErrorCode;
use tether_tests::{run, Harness};

fn ids(scan: &Value) -> Vec<String> {
    scan["elements"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["attributes"]["id"].as_str().map(str::to_owned))
        .collect()
}

fn element<'a>(scan: &'a Value, id: &str) -> &'a Value {
    scan["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["attributes"]["id"] == id)
        .unwrap_or_else(|| panic!("no #{id} in {scan}"))
}

#[test]
fn scan_lists_rendered_interactive_elements_in_document_order() {
    run(|h| async move {
        let tab = h.start("scan", "/fixtures/scan.html").await;
        let scan = h.ok("scan", "browser_xpath_scan", json!({ "tabId": tab })).await;
        let found = ids(&scan);
        let expected = [
            "visible-link",
            "listener-div",
            "aria-button",
            "choice",
            "agree",
            "secret",
            "covered",
        ];
        let positions: Vec<usize> = expected
            .iter()
            .map(|id| {
                found
                    .iter()
                    .position(|f| f == id)
                    .unwrap_or_else(|| panic!("#{id} missing from {found:?}"))
            })
            .collect();
        assert!(
            positions.windows(2).all(|w| w[0] < w[1]),
            "document order: {found:?}"
        );
        for hidden in [
            "hidden-none",
            "hidden-visibility",
            "zero",
            "inside-hidden",
            "plain-div",
            "far-below",
            "cover",
        ] {
            assert!(
                !found.iter().any(|f| f == hidden),
                "#{hidden} should not be listed: {found:?}"
            );
        }
        assert!(
            scan["elements"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["attributes"]["href"] == "/svg-link"),
            "a link inside SVG is listed"
        );

        let link = element(&scan, "visible-link");
        assert_eq!(
            (link["tag"].as_str(), link["role"].as_str()),
            (Some("a"), Some("link"))
        );
        assert_eq!(link["text"], "Visible link");
        let bbox = &link["bbox"];
        assert!(
            bbox["x"].as_f64().unwrap() >= 0.0 && bbox["w"].as_f64().unwrap() > 0.0,
            "{bbox}"
        );
        assert_eq!(element(&scan, "covered")["occluded"], true);
        assert!(element(&scan, "visible-link").get("occluded").is_none());
        assert_eq!(element(&scan, "agree")["attributes"]["checked"], "true");
        assert!(
            element(&scan, "agree").get("text").is_none(),
            "a checkbox's form value (\"on\") is not its text"
        );
        assert_eq!(element(&scan, "agree")["name"], "I agree");
        assert_eq!(element(&scan, "choice")["text"], "Two");
        assert!(
            !scan.to_string().contains("hunter2"),
            "password values never leave the page"
        );

        let whole = h
            .ok(
                "scan",
                "browser_xpath_scan",
                json!({ "tabId": tab, "scope": "document" }),
            )
            .await;
        assert!(ids(&whole).contains(&"far-below".to_owned()));
    });
}

#[test]
fn every_scanned_xpath_names_the_element_its_ref_names() {
    run(|h| async move {
        for page in [
            "/fixtures/shadow.html",
            "/fixtures/frame-outer.html",
            "/fixtures/scan.html",
        ] {
            let tab = h.start("scan-roundtrip", page).await;
            let scan = h
                .ok(
                    "scan-roundtrip",
                    "browser_xpath_scan",
                    json!({ "tabId": tab, "scope": "document" }),
                )
                .await;
            for item in scan["elements"].as_array().unwrap() {
                let (xpath, element_ref) = (item["xpath"].as_str().unwrap(), &item["ref"]);
                // The path and the ref name the same element (the fixtures' elements differ
                // in id or text, so equal HTML is the same element).
                let html = |at: serde_json::Value| async move {
                    let mut params = json!({ "tabId": tab });
                    params
                        .as_object_mut()
                        .unwrap()
                        .extend(at.as_object().unwrap().clone());
                    h.ok("scan-roundtrip", "browser_get_html", params).await["html"].clone()
                };
                let by_path = html(json!({ "xpath": xpath })).await;
                let by_ref = html(json!({ "ref": element_ref })).await;
                assert!(
                    by_path.is_string() && by_path == by_ref,
                    "{xpath} on {page} does not resolve to {element_ref}"
                );
            }
            h.ok("scan-roundtrip", "session_stop", json!({})).await;
        }
    });
}

#[test]
fn scan_handles_a_twenty_thousand_element_page() {
    run(|h| async move {
        let tab = h.start("scan-big", "/big").await;
        let elements = h.eval(tab, "document.getElementsByTagName('*').length").await;
        assert!(elements.as_u64().unwrap() >= 20_000, "{elements}");
        let scan = h
            .ok(
                "scan-big",
                "browser_xpath_scan",
                json!({ "tabId": tab, "scope": "document" }),
            )
            .await;
        // 2,000 rows of a link, a button and an input.
        assert_eq!(scan["elements"].as_array().unwrap().len(), 6_000);
        let last = scan["elements"].as_array().unwrap().last().unwrap();
        assert_eq!(last["tag"], "input");
        assert_eq!(last["attributes"]["name"], "f1999");
        let visible = h
            .ok("scan-big", "browser_xpath_scan", json!({ "tabId": tab }))
            .await;
        assert!(
            visible["elements"].as_array().unwrap().len() < 200,
            "viewport scope keeps what is on screen"
        );
    });
}

#[test]
fn readability_finds_the_article_and_drops_the_furniture() {
    run(|h| async move {
        let tab = h.start("readability", "/fixtures/article.html").await;
        let article = h
            .ok(
                "readability",
                "browser_readability_extract",
                json!({ "tabId": tab }),
            )
            .await;
        // Mozilla's rule: a site suffix is cut only when what remains has four words or more.
        assert_eq!(article["title"], "Harbour Lights | The Coastal Gazette");
        assert!(
            article["byline"].as_str().unwrap().contains("Mira Okafor"),
            "{article}"
        );
        let text = article["text"].as_str().unwrap();
        assert!(
            text.contains("Kestrel Point") && text.contains("lifeboat station"),
            "{text}"
        );
        assert!(
            text.contains("\n\n"),
            "paragraphs are separated by blank lines: {text}"
        );
        for sentinel in [
            "NAVSENTINEL",
            "SIDEBARSENTINEL",
            "ADSENTINEL",
            "COMMENTSENTINEL",
            "FOOTERSENTINEL",
        ] {
            assert!(!text.contains(sentinel), "{sentinel} leaked into {text}");
        }
        assert!(article["markdown"].as_str().unwrap().contains("Kestrel Point"));
        assert!(article.get("artifactId").is_none());
    });
}

#[test]
fn readability_sends_text_over_256_kib_to_an_artifact() {
    run(|h| async move {
        let tab = h.start("readability-huge", "/huge-article").await;
        let article = h
            .ok(
                "readability-huge",
                "browser_readability_extract",
                json!({ "tabId": tab }),
            )
            .await;
        let inline = article["text"].as_str().unwrap();
        assert!(
            inline.len() <= 256 * 1024 && inline.len() > 250 * 1024,
            "{}",
            inline.len()
        );
        let whole = String::from_utf8(h.artifact(&article).await).unwrap();
        assert!(whole.len() > 256 * 1024);
        assert!(whole.starts_with(inline));
    });
}

#[test]
fn get_html_stores_the_live_dom() {
    run(|h| async move {
        let tab = h.start("html", "/fixtures/article.html").await;
        h.eval(
            tab,
            "document.querySelector('article h1').textContent = 'Changed by script'",
        )
        .await;
        let whole = h.ok("html", "browser_get_html", json!({ "tabId": tab })).await;
        let html = String::from_utf8(h.artifact(&whole).await).unwrap();
        assert_eq!(whole["bytes"].as_u64().unwrap(), html.len() as u64);
        assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..40]);
        assert!(
            html.contains("Changed by script"),
            "the live DOM, not the served file"
        );
        assert_eq!(
            whole["html"],
            html.as_str(),
            "a small page's HTML is in the result too"
        );

        let part = h
            .ok(
                "html",
                "browser_get_html",
                json!({ "tabId": tab, "xpath": "//footer" }),
            )
            .await;
        let footer = String::from_utf8(h.artifact(&part).await).unwrap();
        assert!(
            footer.starts_with("<footer") && footer.ends_with("</footer>"),
            "{footer}"
        );
        h.fails_with(
            ErrorCode::ElementNotFound,
            "html",
            "browser_get_html",
            json!({ "tabId": tab, "xpath": "//marquee" }),
        )
        .await;

        h.ok(
            "html",
            "browser_navigate",
            json!({ "tabId": tab, "url": h.url("/long-article") }),
        )
        .await;
        let long = h.ok("html", "browser_get_html", json!({ "tabId": tab })).await;
        assert!(long["bytes"].as_u64().unwrap() > 8 * 1024, "{long}");
        assert!(
            long.get("html").is_none(),
            "a large page's HTML is the artifact's alone"
        );
    });
}

fn decode(bytes: &[u8]) -> (ImageFormat, u32, u32) {
    let reader = ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .unwrap();
    let format = reader.format().expect("a known image format");
    let image = reader.decode().expect("the screenshot decodes");
    (format, image.width(), image.height())
}

/// The page's visible content in device pixels (the viewport without its scrollbars), once the
/// browser drew a frame (a new tab's viewport can still change size until then).
async fn content_size(h: &Harness, tab: TabId) -> (u32, u32) {
    let size = h
        .eval(tab, "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r([document.documentElement.clientWidth, document.documentElement.clientHeight].map(n => n * devicePixelRatio)))))")
        .await;
    (size[0].as_u64().unwrap() as u32, size[1].as_u64().unwrap() as u32)
}

#[test]
fn viewport_shots_hold_the_content_alone_with_or_without_a_scrollbar() {
    run(|h| async move {
        // A page that fits (a plain capture is the content) and one that scrolls (the browser
        // draws a scrollbar beside the content): both shots are the content, every time.
        for path in ["/fixtures/form.html", "/fixtures/below-fold.html"] {
            let tab = h.start("viewport-shots", path).await;
            for _ in 0..2 {
                let shot = h
                    .ok("viewport-shots", "browser_screenshot", json!({ "tabId": tab }))
                    .await;
                let (_, w, hgt) = decode(&h.artifact(&shot).await);
                assert_eq!((w, hgt), content_size(h, tab).await, "{path}");
            }
        }
    });
}

#[test]
fn screenshots_decode_to_the_size_asked() {
    run(|h| async move {
        let tab = h.start("screenshot", "/fixtures/below-fold.html").await;
        // What the page looks like once the browser drew a frame: a capture must not change it.
        let layout = "new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => \
                      r([document.documentElement.clientWidth, innerHeight, scrollY]))))";
        let shoot = |params: Value| async move {
            let mut params = params;
            params["tabId"] = json!(tab);
            let result = h.ok("screenshot", "browser_screenshot", params).await;
            let bytes = h.artifact(&result).await;
            (result, bytes)
        };
        let png = shoot(json!({})).await;
        let jpeg = shoot(json!({ "format": "jpeg", "quality": 40, "maxWidth": 400 })).await;
        let before = h.eval(tab, layout).await;
        let full = shoot(json!({ "fullPage": true })).await;
        // Scaled full-page captures once stalled for good on a tab hidden behind another.
        let scaled = shoot(json!({ "fullPage": true, "maxWidth": 1001 })).await;
        let after = h.eval(tab, layout).await;
        let (vw, vh) = content_size(h, tab).await;

        let (png, bytes) = png;
        assert_eq!(png["bytes"].as_u64().unwrap(), bytes.len() as u64);
        assert_eq!(decode(&bytes), (ImageFormat::Png, vw, vh));
        assert_eq!(
            (png["width"].as_u64(), png["height"].as_u64()),
            (Some(vw as u64), Some(vh as u64))
        );

        let (jpeg, bytes) = jpeg;
        let (format, w, hgt) = decode(&bytes);
        assert_eq!(format, ImageFormat::Jpeg);
        assert_eq!(jpeg["format"], "jpeg");
        assert_eq!(
            (w as u64, hgt as u64),
            (jpeg["width"].as_u64().unwrap(), jpeg["height"].as_u64().unwrap())
        );
        assert!((399..=400).contains(&w), "{w}");
        let expected_h = vh as f64 * w as f64 / vw as f64;
        assert!(
            (hgt as f64 - expected_h).abs() <= 2.0,
            "aspect kept: {hgt} vs {expected_h}"
        );

        let (_, fw, fh) = decode(&full.1);
        assert_eq!(fw, vw);
        assert!(fh >= 3500, "the whole 3,500 px page: {fh}");
        let (_, sw, sh) = decode(&scaled.1);
        assert_eq!(sw, 1001.min(vw));
        assert!(
            (sh as f64 - fh as f64 * sw as f64 / fw as f64).abs() <= 2.0,
            "{sw}x{sh} vs {fw}x{fh}"
        );
        assert_eq!(after, before, "full-page captures leave the page as it was");
    });
}

#[test]
fn a_screenshot_of_one_element_is_its_box() {
    run(|h| async move {
        let s = "screenshot-element";
        let tab = h.start(s, "/fixtures/below-fold.html").await;
        let size = "(() => { const r = document.getElementById('far').getBoundingClientRect(); \
                    return [Math.round(r.width * devicePixelRatio), Math.round(r.height * devicePixelRatio)]; })()";
        let shot = h
            .ok(
                s,
                "browser_screenshot",
                json!({ "tabId": tab, "xpath": "//button[@id='far']" }),
            )
            .await;
        let (_, w, hgt) = decode(&h.artifact(&shot).await);
        let want = h.eval(tab, size).await;
        let (ww, wh) = (want[0].as_u64().unwrap() as u32, want[1].as_u64().unwrap() as u32);
        assert!(
            w.abs_diff(ww) <= 1 && hgt.abs_diff(wh) <= 1,
            "{w}x{hgt}, the button is {ww}x{wh}"
        );
        assert_eq!(
            (shot["width"].as_u64(), shot["height"].as_u64()),
            (Some(w as u64), Some(hgt as u64))
        );
        h.fails_with(
            ErrorCode::InvalidParams,
            s,
            "browser_screenshot",
            json!({ "tabId": tab, "xpath": "//button", "fullPage": true }),
        )
        .await;
    });
}

#[test]
fn evaluate_runs_only_once_the_owner_allows_it_and_answers_json() {
    run(|h| async move {
        let s = "evaluate";
        let tab = h.start(s, "/fixtures/form.html").await;
        let eval = |expression: &str| json!({ "tabId": tab, "expression": expression, "timeoutMs": 2000 });
        let refused = h
            .fails_with(
                ErrorCode::Forbidden,
                s,
                "browser_evaluate",
                eval("document.title"),
            )
            .await;
        assert!(
            refused.message.contains("--allow-evaluate"),
            "{}",
            refused.message
        );

        h.allow_evaluate(true).await;
        let title = h.ok(s, "browser_evaluate", eval("document.title")).await;
        assert_eq!(title, json!({ "value": "Form", "type": "string" }));
        let awaited = h
            .ok(
                s,
                "browser_evaluate",
                eval("Promise.resolve({ a: [1, 2], n: document.querySelectorAll('input').length })"),
            )
            .await;
        assert_eq!(
            awaited,
            json!({ "value": { "a": [1, 2], "n": 4 }, "type": "object" })
        );
        let nothing = h.ok(s, "browser_evaluate", eval("undefined")).await;
        assert_eq!(nothing, json!({ "value": null, "type": "undefined" }));
        let big = h.ok(s, "browser_evaluate", eval("'x'.repeat(300000)")).await;
        assert!(big.get("value").is_none(), "over 256 KiB is an artifact");
        assert_eq!(h.artifact(&big).await.len(), 300_002, "a JSON string");

        let thrown = h
            .fails_with(
                ErrorCode::CdpError,
                s,
                "browser_evaluate",
                eval("throw new Error('boom')"),
            )
            .await;
        assert!(thrown.message.contains("boom"), "{}", thrown.message);
        let rejected = h
            .fails_with(
                ErrorCode::CdpError,
                s,
                "browser_evaluate",
                eval("Promise.reject(new Error('nope'))"),
            )
            .await;
        assert!(rejected.message.contains("nope"), "{}", rejected.message);
        let cycle = "(() => { const a = {}; a.self = a; return a; })()";
        let error = h
            .fails_with(ErrorCode::CdpError, s, "browser_evaluate", eval(cycle))
            .await;
        assert!(
            error.message.contains("cannot be returned as JSON"),
            "{}",
            error.message
        );
        let never = json!({ "tabId": tab, "expression": "new Promise(() => {})", "timeoutMs": 300 });
        h.fails_with(ErrorCode::ActionTimeout, s, "browser_evaluate", never)
            .await;
        let spins = json!({ "tabId": tab, "expression": "while (true) {}", "timeoutMs": 300 });
        h.fails_with(ErrorCode::ActionTimeout, s, "browser_evaluate", spins)
            .await;
        // The page is still the page's: the loop was ended, not left running.
        assert_eq!(h.eval(tab, "document.title").await, "Form");

        h.allow_evaluate(false).await;
        h.fails_with(ErrorCode::Forbidden, s, "browser_evaluate", eval("1"))
            .await;
    });
}
