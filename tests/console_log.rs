//! A page's console as an agent reads it (docs/protocol.md §17): what the page wrote, its
//! uncaught errors and the browser's messages, kept from the moment the tab joined the
//! session, listed by level, text and from where the last listing ended. Both modes.

use serde_json::{json, Value};
use tether_protocol::ErrorCode;
use tether_tests::run;

fn texts(listed: &Value) -> Vec<String> {
    listed["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["text"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn the_console_lists_what_the_page_wrote_and_what_went_wrong() {
    run(|h| async move {
        let s = "console-read";
        let tab = h.start(s, "/fixtures/console.html").await;
        h.ok(s, "browser_wait_for", json!({ "tabId": tab, "text": "ready" }))
            .await;
        let all = h
            .ok(s, "browser_console", json!({ "tabId": tab, "level": "debug" }))
            .await;
        let listed = texts(&all);
        let at = |text: &str| {
            listed
                .iter()
                .position(|t| t.contains(text))
                .unwrap_or_else(|| panic!("{text} in {listed:?}"))
        };
        assert!(
            at("quiet detail") < at("hello 42") && at("hello 42") < at("careful now"),
            "in order: {listed:?}"
        );
        let entry = |text: &str| all["entries"][at(text)].clone();
        assert_eq!(
            (
                entry("quiet detail")["level"].clone(),
                entry("quiet detail")["source"].clone()
            ),
            (json!("debug"), json!("console"))
        );
        assert_eq!(entry("careful now")["level"], "warning");
        assert_eq!(entry("broken thing")["level"], "error");
        assert!(entry("broken thing")["url"]
            .as_str()
            .unwrap()
            .ends_with("/fixtures/console.html"));
        assert_eq!(entry("boom at load")["source"], "exception");
        assert_eq!(entry("nobody caught me")["source"], "exception");
        assert_eq!(
            entry("404")["source"],
            "network",
            "the browser's own message about the missing image"
        );
        assert!(entry("hello 42")["time"].as_str().unwrap().ends_with('Z'));
        assert_eq!(all["dropped"], 0);

        let errors = h
            .ok(s, "browser_console", json!({ "tabId": tab, "level": "error" }))
            .await;
        assert!(
            errors["entries"]
                .as_array()
                .unwrap()
                .iter()
                .all(|e| e["level"] == "error"),
            "{errors}"
        );
        assert_eq!(
            texts(
                &h.ok(s, "browser_console", json!({ "tabId": tab, "text": "careful" }))
                    .await
            ),
            ["careful now"]
        );

        // Going on from where the last listing ended: only what came since.
        let next = all["next"].clone();
        h.ok(
            s,
            "browser_click",
            json!({ "tabId": tab, "xpath": "//button[@id='more']" }),
        )
        .await;
        let since = h
            .ok(s, "browser_console", json!({ "tabId": tab, "since": next }))
            .await;
        assert_eq!(texts(&since), ["clicked 1"]);
        let nothing = h
            .ok(
                s,
                "browser_console",
                json!({ "tabId": tab, "since": since["next"] }),
            )
            .await;
        assert_eq!(
            (texts(&nothing).len(), nothing["next"].clone()),
            (0, since["next"].clone())
        );

        let bad = h
            .fails_with(
                ErrorCode::InvalidParams,
                s,
                "browser_console",
                json!({ "tabId": tab, "limit": 0 }),
            )
            .await;
        assert!(bad.message.contains("limit must be 1 to 500"), "{}", bad.message);
    });
}

#[test]
fn an_action_says_what_happened_in_its_tab_while_it_ran() {
    run(|h| async move {
        let s = "console-observed";
        let tab = h.start(s, "/fixtures/console.html").await;
        h.ok(s, "browser_wait_for", json!({ "tabId": tab, "text": "ready" }))
            .await;
        let quiet = h
            .ok(
                s,
                "browser_click",
                json!({ "tabId": tab, "xpath": "//button[@id='more']" }),
            )
            .await;
        assert!(
            quiet.get("observed").is_none(),
            "a console.log is nothing to report: {quiet}"
        );
        let saved = h
            .ok(
                s,
                "browser_click",
                json!({ "tabId": tab, "xpath": "//button[@id='save']" }),
            )
            .await;
        assert_eq!(
            saved["observed"],
            json!({ "console": { "errors": 2, "warnings": 1, "first": "save failed" } })
        );
        // A navigation the action waited for (a click's may commit after the click is done).
        let article = h.url("/fixtures/article.html");
        let away = h
            .ok(s, "browser_navigate", json!({ "tabId": tab, "url": article }))
            .await;
        assert_eq!(away["observed"]["navigated"]["url"], article.as_str(), "{away}");
    });
}
