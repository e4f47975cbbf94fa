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

#[test]
fn an_action_asked_to_observe_answers_with_the_page_it_left() {
    run(|h| async move {
        let s = "observe-screen";
        let tab = h.start(s, "/fixtures/form.html").await;
        h.ok(s, "browser_snapshot", json!({ "tabId": tab })).await;
        let typed = json!({ "tabId": tab, "xpath": "//input[@id='name']", "text": "Ada Lovelace", "observe": "recent" });
        let typed = h.ok(s, "browser_type", typed).await;
        let screen = typed["screen"].as_str().unwrap_or_else(|| panic!("{typed}"));
        assert!(screen.contains("Ada Lovelace"), "what changed: {screen}");
        // What changed, marked as added; or, on a page this small, the page itself, which is
        // shorter than its changes would be.
        let marked = screen.lines().any(|line| line.starts_with("+ "));
        let whole = !screen.contains("Changes since") && screen.contains("button \"Create account\"");
        assert!(marked || whole, "what changed: {screen}");

        let article = h.url("/fixtures/article.html");
        let went = json!({ "tabId": tab, "url": article, "observe": "gist" });
        let went = h.ok(s, "browser_navigate", went).await;
        let gist = went["screen"].as_str().unwrap_or_else(|| panic!("{went}"));
        assert!(
            gist.contains("Harbour Lights"),
            "the new page, in a few lines: {gist}"
        );

        let quiet = h
            .ok(s, "browser_scroll", json!({ "tabId": tab, "direction": "down" }))
            .await;
        assert!(
            quiet.get("screen").is_none(),
            "observe is off unless asked over HTTP: {quiet}"
        );
        let small = json!({ "tabId": tab, "direction": "down", "observe": "recent", "observeMaxChars": 10 });
        let error = h
            .fails_with(ErrorCode::InvalidParams, s, "browser_scroll", small)
            .await;
        assert!(
            error.message.contains("observeMaxChars must be 200 or more"),
            "{}",
            error.message
        );
    });
}
