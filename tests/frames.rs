//! Cross-origin frames (docs/protocol.md §16): a frame from another site (127.0.0.2 in a page
//! of 127.0.0.1, so out of the page's process) is read and driven like the page around it, in
//! both modes; a frame at a site the session may not touch stays one line, and nothing
//! reaches into it.

use serde_json::{json, Value};
use tether_protocol::ErrorCode;
use tether_tests::{fixtures, run, Harness};

const PAGE: &str = "/fixtures/embedded-login.html";

/// The scanned element whose `name` (or `id`) attribute is `name`.
fn named<'a>(scan: &'a Value, name: &str) -> &'a Value {
    scan["elements"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["attributes"]["name"] == name || e["attributes"]["id"] == name)
        .unwrap_or_else(|| panic!("no {name} in {scan}"))
}

async fn scan(h: &Harness, session: &str, tab: i64) -> Value {
    h.ok(
        session,
        "browser_xpath_scan",
        json!({ "tabId": tab, "scope": "document" }),
    )
    .await
}

/// Waits until the fixture server's `/login` was posted `user`'s form, and answers it.
async fn posted_login(user: &str) -> String {
    let wanted = format!("user={user}&");
    let mut seen = 0;
    loop {
        if let Some(form) = fixtures::logins().into_iter().find(|l| l.starts_with(&wanted)) {
            return form;
        }
        seen += 1;
        fixtures::hit_times("login", seen).await;
    }
}

#[test]
fn a_login_form_inside_a_cross_origin_frame_is_read_and_filled() {
    run(|h| async move {
        let _alone = BLOCKING.lock().await;
        let s = "frame-login";
        let tab = h.start(s, PAGE).await;
        let inner = h
            .url("/fixtures/frame-login.html")
            .replace("127.0.0.1", "127.0.0.2");

        let snap = h.ok(s, "browser_snapshot", json!({ "tabId": tab })).await;
        let md = snap["markdown"].as_str().unwrap();
        assert!(md.contains(&format!("[frame {inner:?}]")), "{md}");
        assert!(md.contains("Sign in with Partner"), "the frame's own text: {md}");

        let scan = scan(h, s, tab).await;
        let user = named(&scan, "user");
        let xpath = user["xpath"].as_str().unwrap();
        assert!(
            xpath.starts_with("/html/body/iframe") && xpath.contains("/#document/html/body/form"),
            "{user}"
        );
        // The page's margin (20), the frame's border (6) and padding (14) are left of it.
        assert!(
            user["bbox"]["x"].as_f64().unwrap() >= 40.0,
            "a box in the tab's viewport: {user}"
        );

        let reference = |name: &str| named(&scan, name)["ref"].clone();
        let who = format!("ada-{:?}", h.mode).to_lowercase();
        h.ok(
            s,
            "browser_type",
            json!({ "tabId": tab, "ref": reference("user"), "text": who }),
        )
        .await;
        h.ok(
            s,
            "browser_select_option",
            json!({ "tabId": tab, "ref": reference("region"), "values": ["eu"] }),
        )
        .await;
        let fields = json!([
            { "ref": reference("password"), "value": "s3cret" },
            { "ref": reference("remember"), "value": true },
        ]);
        h.ok(s, "browser_fill_form", json!({ "tabId": tab, "fields": fields }))
            .await;
        let sign_in = named(&scan, "partner-sign-in")["xpath"].clone();
        let clicked = h
            .ok(s, "browser_click", json!({ "tabId": tab, "xpath": sign_in }))
            .await;
        assert_eq!(clicked["clicked"], true, "{clicked}");
        assert_eq!(
            posted_login(&who).await,
            format!("user={who}&password=s3cret&region=eu&remember=yes")
        );
    });
}

/// The owner's blocked sites are the browser's: tests that block one run one at a time.
static BLOCKING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[test]
fn a_frame_of_a_blocked_site_stays_one_line_and_out_of_reach() {
    run(|h| async move {
        let _alone = BLOCKING.lock().await;
        let s = "frame-blocked";
        let tab = h.start(s, PAGE).await;
        let user = named(&scan(h, s, tab).await, "user")["ref"].clone();

        h.block_sites(&["*://127.0.0.2/*"]).await;
        let snap = h.ok(s, "browser_snapshot", json!({ "tabId": tab })).await;
        let refused = h
            .err(
                s,
                "browser_type",
                json!({ "tabId": tab, "ref": user, "text": "x" }),
            )
            .await;
        let blind = scan(h, s, tab).await;
        h.block_sites(&[]).await;

        let md = snap["markdown"].as_str().unwrap();
        assert!(md.contains("[frame: not shown:"), "{md}");
        assert!(!md.contains("Sign in with Partner"), "{md}");
        assert_eq!(refused.code, ErrorCode::ForbiddenTarget, "{refused:?}");
        assert!(refused.message.contains("127.0.0.2"), "{refused:?}");
        assert!(
            blind["elements"]
                .as_array()
                .unwrap()
                .iter()
                .all(|e| e["attributes"]["name"] != "user"),
            "{blind}"
        );
    });
}

#[test]
fn what_a_cross_origin_frame_logs_and_requests_is_the_tabs() {
    run(|h| async move {
        let _alone = BLOCKING.lock().await;
        let s = "frame-log";
        let tab = h.start(s, "/fixtures/frame-app.html").await;
        h.ok(s, "browser_wait_for_loaded", json!({ "tabId": tab })).await;
        let refresh = named(&scan(h, s, tab).await, "refresh")["xpath"].clone();
        let refreshed = fixtures::hits("widget-refreshed");
        let clicked = h
            .ok(s, "browser_click", json!({ "tabId": tab, "xpath": refresh }))
            .await;
        assert_eq!(
            clicked["observed"]["console"]["first"], "widget: prices unavailable",
            "the click's result tells the frame's error: {clicked}"
        );
        fixtures::hit_times("widget-refreshed", refreshed + 1).await;

        let console = h
            .ok(s, "browser_console", json!({ "tabId": tab, "text": "widget:" }))
            .await;
        let lines: Vec<(&str, &str)> = console["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| (e["level"].as_str().unwrap(), e["text"].as_str().unwrap()))
            .collect();
        assert_eq!(
            lines,
            [
                ("warning", "widget: prices are a day old"),
                ("error", "widget: prices unavailable")
            ],
            "{console}"
        );
        let failed = h
            .ok(
                s,
                "browser_network",
                json!({ "tabId": tab, "failedOnly": true, "url": "*/status/404*" }),
            )
            .await;
        let requests = failed["requests"].as_array().unwrap();
        assert_eq!(requests.len(), 1, "{failed}");
        assert_eq!(requests[0]["status"], 404, "{failed}");
        assert!(
            requests[0]["url"]
                .as_str()
                .unwrap()
                .starts_with("http://127.0.0.2:"),
            "{failed}"
        );
        h.ok(s, "session_stop", json!({})).await;
    });
}
