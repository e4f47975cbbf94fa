//! A person's Back, Forward and Reload buttons: the tab goes where the browser's own buttons
//! would take it, waits for the page like a navigation, and says clearly when there is
//! nowhere to go.

use serde_json::json;
use tether_protocol::ErrorCode;
use tether_tests::run;

#[test]
fn back_and_forward_move_through_the_tabs_history() {
    run(|h| async move {
        let s = "history-steps";
        let tab = h.start(s, "/fixtures/form.html").await;
        let (form, article) = (h.url("/fixtures/form.html"), h.url("/fixtures/article.html"));
        h.ok(s, "browser_navigate", json!({ "tabId": tab, "url": article }))
            .await;

        let back = h.ok(s, "browser_go_back", json!({ "tabId": tab })).await;
        assert_eq!(
            (back["url"].as_str(), back["status"].as_str()),
            (Some(form.as_str()), Some("complete"))
        );
        assert_eq!(back["httpStatus"], 200);
        assert_eq!(h.eval(tab, "location.href").await, form.as_str());
        assert_eq!(h.eval(tab, "document.readyState").await, "complete");

        let forward = h.ok(s, "browser_go_forward", json!({ "tabId": tab })).await;
        assert_eq!(forward["url"], article.as_str());
        assert_eq!(forward["title"], "Harbour Lights | The Coastal Gazette");
        assert_eq!(h.eval(tab, "location.href").await, article.as_str());

        let error = h
            .fails_with(
                ErrorCode::NavigationFailed,
                s,
                "browser_go_forward",
                json!({ "tabId": tab }),
            )
            .await;
        assert!(
            error.message.contains("nothing to go forward to"),
            "{}",
            error.message
        );
        assert_eq!(
            h.eval(tab, "location.href").await,
            article.as_str(),
            "the tab stayed"
        );
    });
}

#[test]
fn going_back_past_the_first_entry_fails_clearly() {
    run(|h| async move {
        let s = "history-start";
        let tab = h.start(s, "/fixtures/form.html").await;
        // Back to where the tab began (about:blank, at most), then nowhere further.
        let mut steps = 0;
        let error = loop {
            let result = h.act(s, "browser_go_back", json!({ "tabId": tab })).await;
            if let Some(error) = result.error {
                break error;
            }
            steps += 1;
            assert!(steps <= 2, "a new tab has at most two entries: {result:?}");
        };
        assert_eq!(error.code, ErrorCode::NavigationFailed, "{}", error.message);
        assert!(
            error.message.contains("nothing to go back to"),
            "{}",
            error.message
        );
    });
}

#[test]
fn a_same_document_entry_counts_like_any_other() {
    run(|h| async move {
        let s = "history-fragment";
        let tab = h.start(s, "/fixtures/form.html").await;
        let form = h.url("/fixtures/form.html");
        h.eval(tab, "window.sameDocument = true").await;
        let part = format!("{form}#part");
        h.ok(s, "browser_navigate", json!({ "tabId": tab, "url": part }))
            .await;

        let back = h.ok(s, "browser_go_back", json!({ "tabId": tab })).await;
        assert_eq!(
            (back["url"].as_str(), back["status"].as_str()),
            (Some(form.as_str()), Some("complete"))
        );
        assert_eq!(h.eval(tab, "location.hash").await, "");
        assert_eq!(h.eval(tab, "window.sameDocument").await, true, "no new document");
    });
}

#[test]
fn reload_loads_the_page_again() {
    run(|h| async move {
        let s = "history-reload";
        let tab = h.start(s, "/fixtures/form.html").await;
        h.eval(tab, "window.beforeReload = true").await;
        let reloaded = h.ok(s, "browser_reload", json!({ "tabId": tab })).await;
        assert_eq!(reloaded["status"], "complete");
        assert_eq!(reloaded["url"], h.url("/fixtures/form.html").as_str());
        assert_eq!(
            h.eval(tab, "typeof window.beforeReload").await,
            "undefined",
            "a new document"
        );
        assert_eq!(h.eval(tab, "document.readyState").await, "complete");
    });
}
