//! Navigation and page-load waits: what counts as loaded, as failed, as still loading; and
//! JavaScript dialogs, which must never block an action.

use serde_json::json;
use tether_protocol::ErrorCode;
use tether_tests::run;

#[test]
fn navigate_waits_for_the_load_event() {
    run(|h| async move {
        let tab = h.start("nav-load", "/fixtures/form.html").await;
        let url = h.url("/fixtures/article.html");
        let done = h
            .ok(
                "nav-load",
                "browser_navigate",
                json!({ "tabId": tab, "url": url }),
            )
            .await;
        assert_eq!(done["status"], "complete");
        assert_eq!(done["url"], url.as_str());
        assert_eq!(done["title"], "Harbour Lights | The Coastal Gazette");
        assert_eq!(done["httpStatus"], 200);
        assert_eq!(h.eval(tab, "document.readyState").await, "complete");
    });
}

#[test]
fn http_error_pages_are_successful_navigations_with_their_status() {
    run(|h| async move {
        let tab = h.start("nav-http-error", "/fixtures/form.html").await;
        let not_found = h
            .ok(
                "nav-http-error",
                "browser_navigate",
                json!({ "tabId": tab, "url": h.url("/status/404") }),
            )
            .await;
        assert_eq!(
            (not_found["httpStatus"].as_u64(), not_found["status"].as_str()),
            (Some(404), Some("complete"))
        );
        assert_eq!(not_found["title"], "Status 404");
        // An error without a body: Chromium shows its own error page, still not a failure.
        let empty = h
            .ok(
                "nav-http-error",
                "browser_navigate",
                json!({ "tabId": tab, "url": h.url("/status/500-empty") }),
            )
            .await;
        assert_eq!(empty["httpStatus"], 500);
    });
}

#[test]
fn a_refused_connection_is_navigation_failed() {
    run(|h| async move {
        let tab = h.start("nav-refused", "/fixtures/form.html").await;
        let e = h
            .fails_with(
                ErrorCode::NavigationFailed,
                "nav-refused",
                "browser_navigate",
                json!({ "tabId": tab, "url": h.refused_url() }),
            )
            .await;
        assert!(e.message.contains("ERR_CONNECTION_REFUSED"), "{}", e.message);
        assert_eq!(e.details.unwrap()["errorText"], "net::ERR_CONNECTION_REFUSED");
    });
}

#[test]
fn a_page_that_never_finishes_loading_reports_loading_then_times_out() {
    run(|h| async move {
        let tab = h.start("nav-slow", "/fixtures/form.html").await;
        let url = h.url("/never-loads");
        let slow = h
            .ok(
                "nav-slow",
                "browser_navigate",
                json!({ "tabId": tab, "url": url, "timeoutMs": 400 }),
            )
            .await;
        assert_eq!(slow["status"], "loading");
        assert_eq!(
            slow["url"],
            url.as_str(),
            "the navigation committed even though the load did not end"
        );
        let e = h
            .fails_with(
                ErrorCode::ActionTimeout,
                "nav-slow",
                "browser_wait_for_loaded",
                json!({ "tabId": tab, "timeoutMs": 300 }),
            )
            .await;
        assert!(e.message.contains("300 ms"), "{}", e.message);
        assert_eq!(h.eval(tab, "document.readyState").await, "interactive");
    });
}

#[test]
fn wait_for_loaded_returns_at_once_on_a_loaded_page() {
    run(|h| async move {
        let tab = h.start("nav-loaded", "/fixtures/article.html").await;
        let done = h
            .ok("nav-loaded", "browser_wait_for_loaded", json!({ "tabId": tab }))
            .await;
        assert_eq!(done, json!({ "status": "complete" }));
    });
}

#[test]
fn a_same_document_navigation_completes_without_a_load() {
    run(|h| async move {
        let tab = h.start("nav-hash", "/fixtures/article.html").await;
        let url = h.url("/fixtures/article.html#comments");
        let done = h
            .ok(
                "nav-hash",
                "browser_navigate",
                json!({ "tabId": tab, "url": url }),
            )
            .await;
        assert_eq!(done["status"], "complete");
        assert_eq!(h.eval(tab, "location.hash").await, "#comments");
    });
}

#[test]
fn dialogs_are_answered_and_listed_in_the_action_that_opened_them() {
    run(|h| async move {
        let tab = h.start("dialogs", "/fixtures/dialogs.html").await;
        let alerted = h
            .ok(
                "dialogs",
                "browser_click",
                json!({ "tabId": tab, "xpath": "//button[@id='alert']" }),
            )
            .await;
        assert_eq!(
            alerted["dialogs"],
            json!([{ "type": "alert", "message": "Saved!" }])
        );
        assert_eq!(
            h.eval(tab, "window.afterAlert").await,
            true,
            "the alert was accepted and the script went on"
        );

        let confirmed = h
            .ok(
                "dialogs",
                "browser_click",
                json!({ "tabId": tab, "xpath": "//button[@id='confirm']" }),
            )
            .await;
        assert_eq!(confirmed["dialogs"][0]["type"], "confirm");
        assert_eq!(
            h.eval(tab, "window.confirmed").await,
            false,
            "confirm is dismissed"
        );

        h.ok(
            "dialogs",
            "browser_click",
            json!({ "tabId": tab, "xpath": "//button[@id='prompt']" }),
        )
        .await;
        assert_eq!(
            h.eval(tab, "window.prompted").await,
            serde_json::Value::Null,
            "prompt is dismissed"
        );

        let quiet = h
            .ok("dialogs", "browser_xpath_scan", json!({ "tabId": tab }))
            .await;
        assert!(quiet.get("dialogs").is_none(), "a dialog is listed once: {quiet}");
    });
}
