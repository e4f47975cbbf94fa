//! What the browser keeps for an agent (docs/protocol.md §17): the files a page downloaded,
//! handed over as artifacts, and the logins (cookies, localStorage) saved to an artifact and
//! put back, never shown in a result. Both modes.

use serde_json::json;
use tether_protocol::ErrorCode;
use tether_tests::fixtures::{download_body, hold};
use tether_tests::run;

#[test]
fn a_file_the_page_downloads_is_handed_over_as_an_artifact() {
    run(|h| async move {
        let s = "downloads-report";
        let tab = h.start(s, "/fixtures/downloads.html").await;
        h.ok(
            s,
            "browser_click",
            json!({ "tabId": tab, "xpath": "//a[@id='report']" }),
        )
        .await;
        let listed = h
            .ok(
                s,
                "browser_downloads",
                json!({ "wait": true, "timeoutMs": 20000 }),
            )
            .await;
        let downloads = listed["downloads"].as_array().unwrap();
        assert_eq!(downloads.len(), 1, "{listed}");
        let report = &downloads[0];
        let body = download_body("report.csv");
        assert_eq!(
            (
                &report["name"],
                &report["state"],
                &report["bytes"],
                &report["mimeType"]
            ),
            (
                &json!("report.csv"),
                &json!("complete"),
                &json!(body.len()),
                &json!("text/csv")
            ),
            "{report}"
        );
        assert!(report["url"].as_str().unwrap().ends_with("/download/report.csv"));
        let stored = h.artifact(&json!({ "url": report["artifactUrl"] })).await;
        assert_eq!(String::from_utf8(stored).unwrap(), body);
        assert_eq!(
            h.ok(s, "browser_downloads", json!({ "tabId": tab })).await,
            listed,
            "listed again, and by its tab"
        );
        h.ok(s, "session_stop", json!({})).await;
    });
}

#[test]
fn files_a_page_makes_or_a_form_posts_for_are_handed_over_too() {
    run(|h| async move {
        let s = "downloads-made";
        let tab = h.start(s, "/fixtures/downloads.html").await;
        let wait = json!({ "wait": true, "timeoutMs": 20000 });
        h.ok(
            s,
            "browser_click",
            json!({ "tabId": tab, "xpath": "//button[@id='notes']" }),
        )
        .await;
        let made = h.ok(s, "browser_downloads", wait.clone()).await;
        let notes = &made["downloads"][0];
        assert_eq!(
            (&notes["name"], &notes["state"]),
            (&json!("notes.txt"), &json!("complete")),
            "{made}"
        );
        assert!(notes["url"].as_str().unwrap().starts_with("blob:"), "{notes}");
        let stored = h.artifact(&json!({ "url": notes["artifactUrl"] })).await;
        assert_eq!(stored, b"notes written in the page\n");

        // The form's answer comes after the click: a click asked to show the page waits for
        // the navigation it began, which here turns out a download, not a failed request.
        let clicked = h
            .ok(
                s,
                "browser_click",
                json!({ "tabId": tab, "xpath": "//button[@id='export']", "observe": "recent" }),
            )
            .await;
        let observed = &clicked["observed"];
        assert_eq!(observed["downloads"][0]["name"], "slow-export.csv", "{clicked}");
        assert!(observed.get("failedRequests").is_none(), "{clicked}");
        assert!(
            clicked["screen"]
                .as_str()
                .is_some_and(|screen| !screen.is_empty()),
            "{clicked}"
        );
        let posted = h.ok(s, "browser_downloads", wait).await;
        let export = &posted["downloads"][1];
        assert_eq!(
            (&export["name"], &export["state"]),
            (&json!("slow-export.csv"), &json!("complete")),
            "{posted}"
        );
        let stored = h.artifact(&json!({ "url": export["artifactUrl"] })).await;
        assert_eq!(
            String::from_utf8(stored).unwrap(),
            download_body("slow-export.csv")
        );
        h.ok(s, "session_stop", json!({})).await;
    });
}

#[test]
fn waiting_for_a_download_ends_when_it_does_or_says_it_did_not() {
    run(|h| async move {
        let s = "downloads-held";
        let tab = h.start(s, "/fixtures/downloads.html").await;
        let held = hold("held-archive.bin");
        h.ok(
            s,
            "browser_click",
            json!({ "tabId": tab, "xpath": "//a[@id='held']" }),
        )
        .await;
        let waited = h
            .fails_with(
                ErrorCode::ActionTimeout,
                s,
                "browser_downloads",
                json!({ "wait": true, "timeoutMs": 1500 }),
            )
            .await;
        assert!(waited.message.contains("1500 ms"), "{}", waited.message);
        let running = h.ok(s, "browser_downloads", json!({})).await;
        assert_eq!(running["downloads"][0]["state"], "in_progress", "{running}");
        assert!(running["downloads"][0].get("artifactId").is_none());
        held.release();
        let done = h
            .ok(
                s,
                "browser_downloads",
                json!({ "wait": true, "timeoutMs": 20000 }),
            )
            .await;
        assert_eq!(done["downloads"][0]["state"], "complete", "{done}");
        assert_eq!(
            done["downloads"][0]["bytes"],
            download_body("held-archive.bin").len()
        );
        h.fails_with(
            ErrorCode::InvalidParams,
            s,
            "browser_downloads",
            json!({ "wait": true, "timeoutMs": 0 }),
        )
        .await;
        h.ok(s, "session_stop", json!({})).await;
    });
}

#[test]
fn a_login_saved_to_an_artifact_comes_back_when_loaded() {
    run(|h| async move {
        let s = "storage-state";
        let tab = h.start(s, "/fixtures/logins.html?login=1").await;
        let state = "document.getElementById('state').textContent";
        assert_eq!(
            h.eval(tab, state).await,
            "cookie: login=alice-token; theme: dark-by-alice"
        );
        let origin = h.url("");

        h.allow_storage_state(false).await;
        let refused = h
            .fails_with(
                ErrorCode::Forbidden,
                s,
                "browser_storage_state",
                json!({ "action": "save" }),
            )
            .await;
        assert!(refused.message.contains("popup"), "{}", refused.message);
        h.allow_storage_state(true).await;

        let saved = h
            .ok(s, "browser_storage_state", json!({ "action": "save" }))
            .await;
        assert_eq!(saved["origins"], json!([origin]), "{saved}");
        assert!(saved["cookies"].as_u64().unwrap() >= 1, "{saved}");
        let shown = saved.to_string();
        assert!(
            !shown.contains("alice-token") && !shown.contains("dark-by-alice"),
            "no value in the result: {shown}"
        );
        let stored = String::from_utf8(h.artifact(&saved).await).unwrap();
        assert!(
            stored.contains("alice-token") && stored.contains("dark-by-alice"),
            "the artifact holds them: {stored}"
        );

        h.eval(
            tab,
            "localStorage.clear(); document.cookie = 'login=; max-age=0; path=/'; 0",
        )
        .await;
        let plain = h.url("/fixtures/logins.html");
        h.ok(s, "browser_navigate", json!({ "tabId": tab, "url": plain }))
            .await;
        assert_eq!(h.eval(tab, state).await, "cookie: none; theme: none");

        let loaded = h
            .ok(
                s,
                "browser_storage_state",
                json!({ "action": "load", "artifactId": saved["artifactId"] }),
            )
            .await;
        assert_eq!(
            (loaded["origins"].as_u64(), loaded["cookies"].as_u64() >= Some(1)),
            (Some(1), true),
            "{loaded}"
        );
        h.ok(s, "browser_reload", json!({ "tabId": tab })).await;
        assert_eq!(
            h.eval(tab, state).await,
            "cookie: login=alice-token; theme: dark-by-alice"
        );

        let not_a_state = h
            .store_file("notes.json", "application/json", b"{\"notes\": []}")
            .await;
        let wrong = h
            .fails_with(
                ErrorCode::InvalidParams,
                s,
                "browser_storage_state",
                json!({ "action": "load", "artifactId": not_a_state }),
            )
            .await;
        assert!(wrong.message.contains("not a storage state"), "{}", wrong.message);
        h.fails_with(
            ErrorCode::InvalidParams,
            s,
            "browser_storage_state",
            json!({ "action": "load" }),
        )
        .await;
        h.fails_with(
            ErrorCode::InvalidParams,
            s,
            "browser_storage_state",
            json!({ "action": "save", "origins": ["https://example.com/path"] }),
        )
        .await;
        h.ok(s, "session_stop", json!({})).await;
    });
}
