//! A page's requests as an agent reads them (docs/protocol.md §17): the listing, one request
//! in full with its secrets redacted, its response body as an artifact, and the failed ones an
//! action reports on its own. Both modes.

use serde_json::{json, Value};
use tether_protocol::ErrorCode;
use tether_tests::run;

fn find<'a>(listed: &'a Value, url_end: &str) -> &'a Value {
    listed["requests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["url"].as_str().unwrap().ends_with(url_end))
        .unwrap_or_else(|| panic!("{url_end} in {listed}"))
}

#[test]
fn the_network_lists_the_pages_requests_and_shows_one_in_full() {
    run(|h| async move {
        let s = "network-read";
        let tab = h.start(s, "/fixtures/network.html").await;
        h.ok(
            s,
            "browser_click",
            json!({ "tabId": tab, "xpath": "//button[@id='go']" }),
        )
        .await;
        h.ok(
            s,
            "browser_wait_for",
            json!({ "tabId": tab, "text": "done 200 404" }),
        )
        .await;
        let listed = h.ok(s, "browser_network", json!({ "tabId": tab })).await;
        let page = find(&listed, "/fixtures/network.html");
        assert_eq!(
            (
                page["type"].clone(),
                page["status"].clone(),
                page["method"].clone()
            ),
            (json!("document"), json!(200), json!("GET"))
        );
        let posted = find(&listed, "/counter/network-post");
        assert_eq!(
            (
                posted["type"].clone(),
                posted["method"].clone(),
                posted["status"].clone()
            ),
            (json!("fetch"), json!("POST"), json!(200))
        );
        assert_eq!(find(&listed, "/fixtures/no-such-data.json")["status"], 404);
        assert_eq!(listed["dropped"], 0);

        let failed = h
            .ok(s, "browser_network", json!({ "tabId": tab, "failedOnly": true }))
            .await;
        let failed = failed["requests"].as_array().unwrap();
        assert!(
            failed
                .iter()
                .all(|r| r["status"].as_u64().unwrap_or(0) >= 400 || r.get("failed").is_some()),
            "{failed:?}"
        );
        let missing = h.url("/fixtures/no-such-data.json");
        assert!(failed.iter().any(|r| r["url"] == missing.as_str()), "{failed:?}");
        let fetches = h
            .ok(
                s,
                "browser_network",
                json!({ "tabId": tab, "types": ["fetch"], "url": "*/counter/*" }),
            )
            .await;
        assert_eq!(fetches["requests"].as_array().unwrap().len(), 1, "{fetches}");

        let one = h
            .ok(
                s,
                "browser_network",
                json!({ "tabId": tab, "requestId": posted["requestId"] }),
            )
            .await;
        let sent = &one["requestHeaders"];
        assert_eq!(sent["Authorization"], "<redacted>", "{one}");
        assert_eq!(sent["X-Trace"], "trace-1");
        if let Some(cookie) = sent.get("Cookie").or_else(|| sent.get("cookie")) {
            assert_eq!(cookie, "<redacted>");
        }
        assert_eq!(one["postData"], "quantity=2");
        assert_eq!(one["url"], posted["url"]);

        let with_body = json!({ "tabId": tab, "requestId": page["requestId"], "body": true });
        let document = h.ok(s, "browser_network", with_body).await;
        let bytes = h.artifact(&json!({ "url": document["bodyUrl"] })).await;
        assert!(String::from_utf8_lossy(&bytes).contains("<title>Workbench | Network</title>"));

        let unknown = json!({ "tabId": tab, "requestId": "no-such-request" });
        let error = h
            .fails_with(ErrorCode::ElementNotFound, s, "browser_network", unknown)
            .await;
        assert!(error.message.contains("no-such-request"), "{}", error.message);
        let both = json!({ "tabId": tab, "requestId": "1", "failedOnly": true });
        h.fails_with(ErrorCode::InvalidParams, s, "browser_network", both)
            .await;
    });
}

#[test]
fn an_action_reports_the_requests_that_failed_while_it_ran() {
    run(|h| async move {
        let s = "network-observed";
        let tab = h.start(s, "/fixtures/form.html").await;
        // The page's missing image fails before its load event, which the navigation waits for.
        let url = h.url("/fixtures/console.html");
        let went = h
            .ok(s, "browser_navigate", json!({ "tabId": tab, "url": url }))
            .await;
        let failed = went["observed"]["failedRequests"]
            .as_array()
            .unwrap_or_else(|| panic!("{went}"));
        let image = h.url("/fixtures/no-such-image.png");
        let missing = failed
            .iter()
            .find(|r| r["url"] == image.as_str())
            .unwrap_or_else(|| panic!("{went}"));
        assert_eq!(missing["status"], 404);
        assert!(
            went["observed"]["console"]["errors"].as_u64().unwrap() >= 1,
            "the page's own errors too: {went}"
        );
    });
}
