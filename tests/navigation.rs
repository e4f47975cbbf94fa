//! Navigation and page-load waits: what counts as loaded, as failed, as still loading; and
//! JavaScript dialogs, which must never block an action.

use serde_json::json;
use tether_host::cdp::{BrowserEvent, Transport};
use tether_protocol::{ActionResult, ErrorCode};
use tether_tests::{run, run_worker, Harness};

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
        // The error page is Chromium's, but the result names the page the navigation asked for.
        assert_eq!(empty["url"], h.url("/status/500-empty").as_str());
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
    run_worker(|h| async move {
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

/// Starts a wait that cannot end by itself on a fresh tab, and returns once it is in flight.
async fn stuck_wait(
    h: &'static Harness,
    session: &'static str,
) -> (i64, tokio::task::JoinHandle<ActionResult>) {
    let started = h
        .ok(
            session,
            "session_start",
            json!({ "url": h.url("/fixtures/stuck.html") }),
        )
        .await;
    let tab = started["tabId"].as_i64().unwrap();
    // session_start returns at commit: let the page's own script (which raises the alert) run
    // first. The stalled image does not hold DOMContentLoaded back.
    h.eval(
        tab,
        "new Promise(r => document.readyState === 'loading' \
           ? document.addEventListener('DOMContentLoaded', r) : r())",
    )
    .await;
    let mut events = h.worker().transport.events();
    let params = json!({ "tabId": tab, "timeoutMs": 60000 });
    let waiting = tokio::spawn(h.act(session, "browser_wait_for_loaded", params));
    // The page raises an alert once the wait registered its load listener; Tether answers it.
    // (Only the debugging session that saw a dialog open can answer it, so the tests act after
    // the answer, not between the opening and the answer.)
    let answered = async {
        loop {
            match events.recv().await.expect("browser events") {
                BrowserEvent::Cdp { tab: t, method, .. }
                    if t == tab && method == "Page.javascriptDialogClosed" =>
                {
                    break
                }
                _ => {}
            }
        }
    };
    // A bound, so that a broken fixture fails the test instead of hanging the suite.
    tokio::time::timeout(std::time::Duration::from_secs(30), answered)
        .await
        .expect("the page never raised its alert: the wait did not register a load listener");
    (tab, waiting)
}

#[test]
fn closing_the_tab_mid_action_ends_the_action_at_once() {
    run_worker(|h| async move {
        let (tab, waiting) = stuck_wait(h, "closed-mid").await;
        h.worker().transport.close_tab(tab).await.unwrap(); // as the user would
        let error = waiting.await.unwrap().error.expect("an error result");
        assert_eq!(error.code, ErrorCode::TabNotFound, "{}", error.message);
        assert!(error.message.contains("closed"), "{}", error.message);
    });
}

#[test]
fn losing_the_debugger_mid_action_ends_the_action_at_once() {
    run_worker(|h| async move {
        let (tab, waiting) = stuck_wait(h, "detached-mid").await;
        h.worker().transport.detach(tab).await.unwrap(); // as a user cancelling the debugging bar would
        let error = waiting.await.unwrap().error.expect("an error result");
        assert_eq!(error.code, ErrorCode::CdpError, "{}", error.message);
        // The next action attaches again.
        h.ok("detached-mid", "browser_xpath_scan", json!({ "tabId": tab }))
            .await;
    });
}

#[test]
fn wait_for_sees_late_text_elements_and_urls() {
    run(|h| async move {
        let s = "wait-for-late";
        let tab = h.start(s, "/fixtures/late.html").await;
        h.ok(
            s,
            "browser_click",
            json!({ "tabId": tab, "xpath": "//button[@id='search']" }),
        )
        .await;
        let found = h
            .ok(
                s,
                "browser_wait_for",
                json!({ "tabId": tab, "text": "Found 3 results" }),
            )
            .await;
        assert_eq!(found["matched"], true);
        assert!(found["elapsedMs"].as_u64().is_some());
        assert_eq!(
            h.eval(tab, "document.getElementById('status').textContent").await,
            "Found 3 results"
        );
        for condition in [
            json!({ "textGone": "Loading results" }),
            json!({ "xpath": "//ul[@id='results']" }),
            json!({ "xpath": "//div[@id='spinner']", "state": "hidden" }),
            json!({ "xpath": "//div[@id='spinner']", "state": "attached" }),
            json!({ "xpath": "//div[@id='gone']", "state": "detached" }),
            json!({ "url": "*/late.html?page=2" }),
        ] {
            let mut params = condition.clone();
            params["tabId"] = json!(tab);
            let waited = h.ok(s, "browser_wait_for", params).await;
            assert_eq!(waited["matched"], true, "{condition}");
        }
    });
}

#[test]
fn wait_for_follows_the_tab_to_the_next_page() {
    run(|h| async move {
        let s = "wait-for-next";
        let tab = h.start(s, "/fixtures/late.html").await;
        h.ok(
            s,
            "browser_click",
            json!({ "tabId": tab, "xpath": "//a[@id='next']" }),
        )
        .await;
        h.ok(
            s,
            "browser_wait_for",
            json!({ "tabId": tab, "url": "*/fixtures/article.html" }),
        )
        .await;
        h.ok(s, "browser_wait_for", json!({ "tabId": tab, "text": "Harbour" }))
            .await;
        assert_eq!(h.eval(tab, "location.pathname").await, "/fixtures/article.html");
    });
}

#[test]
fn wait_for_says_what_it_last_saw_when_time_runs_out() {
    run(|h| async move {
        let s = "wait-for-timeout";
        let tab = h.start(s, "/fixtures/late.html").await;
        let error = h
            .fails_with(
                ErrorCode::ActionTimeout,
                s,
                "browser_wait_for",
                json!({ "tabId": tab, "text": "Found 3 results", "timeoutMs": 300 }),
            )
            .await;
        assert!(
            error.message.contains("does not show \"Found 3 results\""),
            "{}",
            error.message
        );
        for bad in [
            json!({ "tabId": tab }),
            json!({ "tabId": tab, "text": "a", "url": "*" }),
            json!({ "tabId": tab, "text": "a", "state": "hidden" }),
            json!({ "tabId": tab, "xpath": "//p", "state": "gone" }),
        ] {
            h.fails_with(ErrorCode::InvalidParams, s, "browser_wait_for", bad)
                .await;
        }
    });
}

#[test]
fn an_action_answers_its_own_dialogs_as_asked() {
    run(|h| async move {
        let s = "dialogs-asked";
        let tab = h.start(s, "/fixtures/dialogs.html").await;
        let confirmed = h
            .ok(
                s,
                "browser_click",
                json!({ "tabId": tab, "xpath": "//button[@id='confirm']", "dialog": { "accept": true } }),
            )
            .await;
        assert_eq!(confirmed["dialogs"][0]["message"], "Delete everything?");
        assert_eq!(h.eval(tab, "window.confirmed").await, true, "accepted, as asked");
        h.ok(
            s,
            "browser_click",
            json!({ "tabId": tab, "xpath": "//button[@id='prompt']",
                    "dialog": { "accept": true, "promptText": "Ada" } }),
        )
        .await;
        assert_eq!(h.eval(tab, "window.prompted").await, "Ada");
        // The next action without a dialog param gets the defaults again.
        h.ok(
            s,
            "browser_click",
            json!({ "tabId": tab, "xpath": "//button[@id='confirm']" }),
        )
        .await;
        assert_eq!(h.eval(tab, "window.confirmed").await, false);
        h.fails_with(
            ErrorCode::InvalidParams,
            s,
            "browser_click",
            json!({ "tabId": tab, "xpath": "//button[@id='confirm']", "dialog": { "accept": "yes" } }),
        )
        .await;
    });
}

#[test]
fn javascript_urls_run_nothing_and_local_files_are_refused() {
    run(|h| async move {
        let s = "nav-no-script";
        let tab = h.start(s, "/fixtures/form.html").await;
        // A prompt-injected agent, with browser_evaluate off, tries script by URL, and tries to
        // read the machine's files.
        let script = "javascript:window.__pwned = document.cookie || 'ran'";
        let disguised = [
            script,
            " \u{1}JavaScript:window.__pwned = 'ran'",
            "java\tscript:window.__pwned = 1",
        ];
        let files = [
            "file:///etc/passwd",
            "FILE:///etc/hostname",
            "filesystem:http://127.0.0.1/temporary/a",
        ];
        let tries = disguised
            .iter()
            .map(|url| (*url, "browser_evaluate"))
            .chain(files.iter().map(|url| (*url, "--allow-file-urls")));
        for (url, says) in tries {
            for (action, params) in [
                ("browser_navigate", json!({ "tabId": tab, "url": url })),
                ("browser_tabs", json!({ "action": "open", "url": url })),
                ("session_start", json!({ "url": url })),
            ] {
                let e = h.fails_with(ErrorCode::ForbiddenTarget, s, action, params).await;
                assert!(e.message.contains(says), "{action} {url:?}: {}", e.message);
            }
        }
        assert_eq!(h.eval(tab, "String(window.__pwned)").await, "undefined");
        assert!(h
            .eval(tab, "location.href")
            .await
            .as_str()
            .unwrap()
            .ends_with("/fixtures/form.html"));
    });
}
