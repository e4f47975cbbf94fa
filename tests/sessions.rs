//! Sessions own their tabs: opening in the background, stopping, reuse, and the refusals that
//! keep a session off tabs and pages that are not its own.

use serde_json::json;
use tether_host::cdp::{BrowserEvent, Transport};
use tether_protocol::ErrorCode;

use tether_tests::cdp::RawSession;
use tether_tests::relay::{RelayApi, TestRelay};
use tether_tests::{run, run_extension, run_worker, Mode, CONTROL_UI_PATH};

#[test]
fn session_start_opens_a_background_tab_and_returns_once_committed() {
    run_worker(|h| async move {
        assert_eq!(
            h.eval(h.worker().user_tab, "document.visibilityState").await,
            "visible"
        );
        let url = h.url("/fixtures/article.html");
        let started = h
            .ok(
                "start-commit",
                "session_start",
                json!({ "url": url, "groupTitle": "Research" }),
            )
            .await;
        let tab = started["tabId"].as_i64().expect("integer tabId");
        assert!(started["windowId"].is_i64(), "{started}");
        assert_eq!(started["url"], url.as_str());
        // Committed: the tab already shows the new document, not about:blank.
        assert_eq!(h.eval(tab, "location.href").await, url.as_str());
        // Opened in the background: the user's foreground tab is still the one on screen.
        assert_eq!(
            h.eval(h.worker().user_tab, "document.visibilityState").await,
            "visible"
        );
        assert_eq!(h.worker().engine.session_tabs("start-commit"), vec![tab]);
    });
}

#[test]
fn in_the_users_browser_a_session_tab_opens_in_the_group_its_session_names() {
    run_extension(|h| async move {
        let started = h
            .ok(
                "start-grouped",
                "session_start",
                json!({ "url": h.url("/fixtures/article.html"), "groupTitle": "Research" }),
            )
            .await;
        let (tab, group) = (started["tabId"].as_i64().unwrap(), started["groupId"].as_i64());
        let group = group.unwrap_or_else(|| panic!("no groupId in {started}"));
        // As the browser shows it to its owner: the tab in a group of that title.
        let (cdp, worker) = h.extension().service_worker().await;
        let worker = RawSession {
            cdp: &cdp,
            session: worker,
        };
        let seen = worker
            .eval_checked(&format!(
                "Promise.all([chrome.tabs.get({tab}).then(t => t.groupId), chrome.tabGroups.get({group}).then(g => g.title)])"
            ))
            .await;
        assert_eq!(seen, json!([group, "Research"]));
        h.ok("start-grouped", "session_stop", json!({})).await;
    });
}

#[test]
fn a_tab_of_another_session_is_refused() {
    run(|h| async move {
        let theirs = h.start("owner-a", "/fixtures/form.html").await;
        let e = h
            .fails_with(
                ErrorCode::TabNotInSession,
                "owner-b",
                "browser_xpath_scan",
                json!({ "tabId": theirs }),
            )
            .await;
        assert!(e.message.contains("owner-b"), "{}", e.message);
        // The owner still can.
        h.ok("owner-a", "browser_xpath_scan", json!({ "tabId": theirs }))
            .await;
    });
}

#[test]
fn an_unknown_tab_is_not_found() {
    run(|h| async move {
        h.fails_with(
            ErrorCode::TabNotFound,
            "nobody",
            "browser_click",
            json!({ "tabId": 987654, "xpath": "//a" }),
        )
        .await;
    });
}

#[test]
fn session_stop_closes_the_sessions_tabs() {
    run_worker(|h| async move {
        let tab = h.start("stop-close", "/fixtures/article.html").await;
        let mut events = h.worker().transport.events();
        let stopped = h.ok("stop-close", "session_stop", json!({})).await;
        assert_eq!(stopped, json!({ "stopped": true }));
        assert!(
            h.worker().transport.tab(tab).await.unwrap().is_none(),
            "the tab should be closed"
        );
        // ... and said to be (the twin, and the tab's watcher, hear of it from this).
        loop {
            match events.try_recv() {
                Ok(BrowserEvent::TabRemoved { tab: removed }) if removed == tab => break,
                Ok(_) => {}
                Err(e) => panic!("no TabRemoved for the closed tab {tab}: {e}"),
            }
        }
        assert!(h.worker().engine.session_tabs("stop-close").is_empty());
        h.fails_with(
            ErrorCode::TabNotFound,
            "stop-close",
            "browser_xpath_scan",
            json!({ "tabId": tab }),
        )
        .await;
        // Stopping again is harmless.
        h.ok("stop-close", "session_stop", json!({})).await;
    });
}

#[test]
fn stop_without_closing_keeps_the_tab_for_reuse() {
    run_worker(|h| async move {
        let tab = h.start("stop-keep", "/fixtures/article.html").await;
        h.ok("stop-keep", "session_stop", json!({ "closeTab": false }))
            .await;
        assert!(
            h.worker().transport.tab(tab).await.unwrap().is_some(),
            "the tab should stay open"
        );
        assert!(
            !h.worker().transport.is_attached(tab),
            "the debugger should have left the tab"
        );

        let url = h.url("/fixtures/form.html");
        let again = h
            .ok(
                "stop-keep",
                "session_start",
                json!({ "url": url, "reuseExistingTab": true }),
            )
            .await;
        assert_eq!(again["tabId"], tab, "the session's tab is reused");
        assert_eq!(h.eval(tab, "location.href").await, url.as_str());
        h.ok("stop-keep", "session_stop", json!({})).await;
    });
}

#[test]
fn browser_internal_pages_are_forbidden_targets() {
    run(|h| async move {
        let e = h
            .fails_with(
                ErrorCode::ForbiddenTarget,
                "internal",
                "session_start",
                json!({ "url": "chrome://version" }),
            )
            .await;
        assert!(e.message.contains("chrome://version"), "{}", e.message);
        let tab = h.start("internal", "/fixtures/article.html").await;
        for url in [
            "chrome://settings",
            "devtools://devtools/bundled/inspector.html",
            "chrome-extension://abc/x.html",
            // Spelled as the browser still reads them (WHATWG URL parsing): spaces and C0
            // controls around the URL stripped, tabs and newlines inside dropped, any case.
            " chrome://version",
            "\tchrome://settings",
            "\n chrome://password-manager",
            "chr\tome://version",
            "CHROME://settings",
            "\u{1}chrome://version ",
            "view-source:https://example.com/",
            " view-source:chrome://settings",
        ] {
            h.fails_with(
                ErrorCode::ForbiddenTarget,
                "internal",
                "browser_navigate",
                json!({ "tabId": tab, "url": url }),
            )
            .await;
        }
        assert!(h
            .eval(tab, "location.href")
            .await
            .as_str()
            .unwrap()
            .ends_with("/fixtures/article.html"));
    });
}

#[test]
fn the_control_ui_is_a_forbidden_target_even_when_the_page_walks_into_it() {
    run_worker(|h| async move {
        let panel = h.url(&format!("{CONTROL_UI_PATH}panel.html"));
        let tab = h.start("control-ui", "/fixtures/article.html").await;
        h.fails_with(
            ErrorCode::ForbiddenTarget,
            "control-ui",
            "browser_navigate",
            json!({ "tabId": tab, "url": panel }),
        )
        .await;

        // The page itself navigates there: every later action on the tab is refused.
        let mut events = h.worker().transport.events();
        h.eval(tab, &format!("location.href = {panel:?}")).await;
        // The browser announces the new URL once the navigation commits (bounded, so a missing
        // announcement fails the test instead of hanging the suite).
        let committed = async {
            loop {
                match events.recv().await.expect("browser events") {
                    BrowserEvent::TabUpdated(info) if info.tab_id == tab && info.url == panel => break,
                    _ => {}
                }
            }
        };
        tokio::time::timeout(std::time::Duration::from_secs(30), committed)
            .await
            .expect("the browser never announced the control UI's URL");
        for (action, params) in [
            ("browser_xpath_scan", json!({ "tabId": tab })),
            ("browser_click", json!({ "tabId": tab, "xpath": "//button" })),
            ("browser_screenshot", json!({ "tabId": tab })),
        ] {
            let e = h
                .fails_with(ErrorCode::ForbiddenTarget, "control-ui", action, params)
                .await;
            assert!(e.message.contains("control UI"), "{}", e.message);
        }
        // The session can still lead the tab away, and act there again.
        let article = h.url("/fixtures/article.html");
        h.ok(
            "control-ui",
            "browser_navigate",
            json!({ "tabId": tab, "url": article }),
        )
        .await;
        h.ok("control-ui", "browser_xpath_scan", json!({ "tabId": tab }))
            .await;
    });
}

#[test]
fn a_failed_session_start_leaves_no_tab_behind() {
    run_worker(|h| async move {
        let e = h
            .fails_with(
                ErrorCode::NavigationFailed,
                "failed-start",
                "session_start",
                json!({ "url": h.refused_url() }),
            )
            .await;
        assert!(e.message.contains("ERR_CONNECTION_REFUSED"), "{}", e.message);
        assert!(h.worker().engine.session_tabs("failed-start").is_empty());
    });
}

#[test]
fn tabs_opened_by_a_session_tab_join_the_session() {
    run_worker(|h| async move {
        let tab = h.start("popups", "/fixtures/popups.html").await;
        for (xpath, path) in [
            ("//a[@id='blank-link']", "/fixtures/article.html"),
            ("//button[@id='open']", "/fixtures/form.html"),
        ] {
            let clicked = h
                .ok("popups", "browser_click", json!({ "tabId": tab, "xpath": xpath }))
                .await;
            let opened = clicked["openedTabIds"].as_array().expect("openedTabIds").clone();
            assert_eq!(opened.len(), 1, "{clicked}");
            let new_tab = opened[0].as_i64().unwrap();
            assert!(h.worker().engine.session_tabs("popups").contains(&new_tab));
            h.ok("popups", "browser_wait_for_loaded", json!({ "tabId": new_tab }))
                .await;
            assert!(h
                .eval(new_tab, "location.href")
                .await
                .as_str()
                .unwrap()
                .ends_with(path));
            h.fails_with(
                ErrorCode::TabNotInSession,
                "not-popups",
                "browser_xpath_scan",
                json!({ "tabId": new_tab }),
            )
            .await;
        }
        h.ok("popups", "session_stop", json!({})).await;
        assert!(h.worker().engine.session_tabs("popups").is_empty());
    });
}

#[test]
fn bad_calls_get_the_codes_that_say_what_to_fix() {
    run(|h| async move {
        let e = h
            .fails_with(ErrorCode::UnknownAction, "bad", "browser_teleport", json!({}))
            .await;
        assert!(
            e.message.contains("browser_click"),
            "lists the known actions: {}",
            e.message
        );
        let e = h
            .fails_with(
                ErrorCode::InvalidParams,
                "bad",
                "browser_click",
                json!({ "tabId": 1 }),
            )
            .await;
        assert!(e.message.contains("xpath"), "{}", e.message);
        let e = h
            .fails_with(
                ErrorCode::InvalidParams,
                "bad",
                "browser_screenshot",
                json!({ "tabId": 1, "format": "gif" }),
            )
            .await;
        assert!(e.message.contains("gif"), "{}", e.message);
    });
}

#[test]
fn browser_tabs_lists_opens_and_closes_the_sessions_own_tabs() {
    run(|h| async move {
        let s = "tabs-own";
        let first = h.start(s, "/fixtures/form.html").await;
        let listed = h.ok(s, "browser_tabs", json!({})).await;
        let tabs = listed["tabs"].as_array().unwrap();
        assert_eq!(tabs.len(), 1, "{listed}");
        assert_eq!(
            (tabs[0]["tabId"].as_i64(), tabs[0]["status"].as_str()),
            (Some(first), Some("complete"))
        );
        assert_eq!(tabs[0]["url"], h.url("/fixtures/form.html").as_str());

        let article = h.url("/fixtures/article.html");
        let opened = h
            .ok(s, "browser_tabs", json!({ "action": "open", "url": article }))
            .await;
        let second = opened["tabId"].as_i64().expect("the opened tab");
        let order: Vec<i64> = opened["tabs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["tabId"].as_i64().unwrap())
            .collect();
        assert_eq!(order, [first, second], "in the order they joined");
        h.ok(s, "browser_wait_for_loaded", json!({ "tabId": second }))
            .await;
        assert_eq!(h.eval(second, "location.href").await, article.as_str());
        // A loaded tab is listed with the title its page has now.
        let listed = h.ok(s, "browser_tabs", json!({})).await;
        let titles: Vec<&str> = listed["tabs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["title"].as_str().unwrap())
            .collect();
        assert_eq!(
            titles,
            ["Form", h.eval(second, "document.title").await.as_str().unwrap()]
        );

        let closed = h
            .ok(s, "browser_tabs", json!({ "action": "close", "tabId": first }))
            .await;
        let left: Vec<i64> = closed["tabs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["tabId"].as_i64().unwrap())
            .collect();
        assert_eq!(left, [second]);
        h.fails_with(
            ErrorCode::TabNotFound,
            s,
            "browser_get_html",
            json!({ "tabId": first }),
        )
        .await;
    });
}

#[test]
fn browser_tabs_refuses_what_it_cannot_do() {
    run(|h| async move {
        let s = "tabs-refuse";
        let tab = h.start(s, "/fixtures/form.html").await;
        h.fails_with(
            ErrorCode::InvalidParams,
            s,
            "browser_tabs",
            json!({ "action": "close" }),
        )
        .await;
        h.fails_with(
            ErrorCode::InvalidParams,
            s,
            "browser_tabs",
            json!({ "action": "open", "url": "not a url" }),
        )
        .await;
        let other = h.start("tabs-refuse-other", "/fixtures/form.html").await;
        h.fails_with(
            ErrorCode::TabNotInSession,
            s,
            "browser_tabs",
            json!({ "action": "close", "tabId": other }),
        )
        .await;
        assert_eq!(
            h.eval(other, "document.readyState").await,
            "complete",
            "the other session's tab stays"
        );
        let listed = h.ok(s, "browser_tabs", json!({ "action": "list" })).await;
        assert_eq!(listed["tabs"].as_array().unwrap().len(), 1);
        assert_eq!(listed["tabs"][0]["tabId"], tab);
    });
}

#[test]
fn the_relay_is_no_target_under_any_loopback_spelling() {
    run(|h| async move {
        // Worker mode: a relay of its own and a worker wired as the command wires it; extension
        // mode: the relay the extension's host serves.
        let data = tempfile::tempdir().unwrap();
        let own: TestRelay;
        let relay: &RelayApi = match h.mode {
            Mode::Worker => {
                own = TestRelay::start(data.path(), None);
                own.start_worker(h, "spelling-worker");
                own.wait_online("spelling-worker", std::time::Duration::from_secs(20))
                    .await;
                &own
            }
            Mode::Extension => &h.extension().relay,
        };
        let s = "relay-spellings";
        let port = relay.addr.port();
        let started = relay
            .ok(s, "session_start", json!({ "url": h.url("/fixtures/form.html") }))
            .await;
        let tab = started["tabId"].clone();
        for host in [
            "localhost",
            "LocalHost.",
            "0.0.0.0",
            "127.1",
            "0x7f.0.0.1",
            "2130706433",
            "127.8.9.10",
            "[::1]",
            "[::ffff:127.0.0.1]",
            "[::]",
        ] {
            let url = format!("http://{host}:{port}/");
            let refused = relay
                .act(s, "browser_navigate", json!({ "tabId": tab, "url": url }))
                .await;
            assert_eq!(refused["error"]["code"], "FORBIDDEN_TARGET", "{url}: {refused}");
        }
        let console = format!("http://localhost:{port}/");
        let refused = relay
            .act(s, "browser_tabs", json!({ "action": "open", "url": console }))
            .await;
        assert_eq!(refused["error"]["code"], "FORBIDDEN_TARGET", "{refused}");

        // A page sends its own tab to the relay's console: the session can read nothing there,
        // and can still lead the tab away.
        let bounce = h.url(&format!("/redirect?to=http://localhost:{port}/"));
        relay
            .act(s, "browser_navigate", json!({ "tabId": tab, "url": bounce }))
            .await;
        let refused = relay.act(s, "browser_snapshot", json!({ "tabId": tab })).await;
        assert_eq!(refused["error"]["code"], "FORBIDDEN_TARGET", "{refused}");
        assert!(
            !refused.to_string().contains("token"),
            "nothing of the console is read: {refused}"
        );
        relay
            .ok(
                s,
                "browser_navigate",
                json!({ "tabId": tab, "url": h.url("/fixtures/article.html") }),
            )
            .await;
        let snapshot = relay.ok(s, "browser_snapshot", json!({ "tabId": tab })).await;
        assert!(snapshot["markdown"].as_str().unwrap().contains("Harbour"));
        relay.ok(s, "session_stop", json!({})).await;
    });
}

/// In the person's browser too (the relay names the current tab): a tab the session opens
/// becomes its current one, `browser_tabs` `select` goes back, and an action without a tabId
/// acts where the session now is.
#[test]
fn in_the_users_browser_select_moves_the_sessions_current_tab() {
    run_extension(|h| async move {
        let s = "select-ext";
        let first = h.start(s, "/fixtures/form.html").await;
        let opened = h
            .ok(
                s,
                "browser_tabs",
                json!({ "action": "open", "url": h.url("/fixtures/article.html") }),
            )
            .await;
        h.ok(s, "browser_wait_for_loaded", json!({})).await;
        let title = |r: serde_json::Value| r["markdown"].as_str().unwrap_or_default().to_owned();
        let read = title(h.ok(s, "browser_snapshot", json!({})).await);
        assert!(
            read.contains("article.html"),
            "the opened tab is current: {read}; {opened}"
        );
        h.ok(s, "browser_tabs", json!({ "action": "select", "tabId": first }))
            .await;
        let read = title(h.ok(s, "browser_snapshot", json!({})).await);
        assert!(read.contains("form.html"), "select went back: {read}");
        h.ok(s, "session_stop", json!({})).await;
    });
}
