//! The user's kill switch, a host that dies, a service worker that restarts, and file access
//! turned off, in extension mode. Each ends every session of the browser, so they run one
//! after the other on a browser of their own.

use std::time::Duration;

use serde_json::json;
use tether_host::cdp::connection::CdpConnection;
use tether_tests::bench::Raw;
use tether_tests::cdp::RawSession;
use tether_tests::extension::{ExtensionBrowser, EXTENSION_ID, JOIN_WITHIN};

/// Starts a session on a page that never finishes loading and an action that waits for it;
/// returns the waiting action, once the relay has sent it to the host.
async fn stuck_action(
    b: &'static ExtensionBrowser,
    session: &str,
) -> tokio::task::JoinHandle<serde_json::Value> {
    let started = b
        .ok(session, "session_start", json!({ "url": b.url("/never-loads") }))
        .await;
    let tab = started["tabId"].clone();
    let session = session.to_owned();
    let action = tokio::spawn(async move {
        b.act(
            &session,
            "browser_wait_for_loaded",
            json!({ "tabId": tab, "timeoutMs": 20_000 }),
        )
        .await
    });
    action
}

/// Waits (bounded) until the relay reports the session's action as running.
async fn until_running(b: &ExtensionBrowser, session: &str) {
    let state = async {
        loop {
            let state = b.get(&format!("/api/sessions/{session}")).await;
            if state["status"] == "running" {
                return;
            }
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(20), state)
        .await
        .expect("the action never started");
}

#[test]
fn stop_all_a_killed_host_a_restarted_worker_and_no_file_access_each_end_clearly() {
    tether_tests::block_on(async {
        let b: &'static ExtensionBrowser = Box::leak(Box::new(ExtensionBrowser::launch().await));

        // The user presses "Stop all" while an action runs: it ends now, saying why.
        let action = stuck_action(b, "stop-all").await;
        until_running(b, "stop-all").await;
        let (cdp, worker) = b.service_worker().await;
        let stopped = cdp
            .call(
                Some(&worker),
                "Runtime.evaluate",
                json!({ "expression": "tetherStopAll()", "awaitPromise": true, "returnByValue": true }),
            )
            .await
            .unwrap();
        assert_eq!(
            stopped["result"]["value"].as_array().map(Vec::len),
            Some(1),
            "{stopped}"
        );
        let result = tokio::time::timeout(Duration::from_secs(10), action)
            .await
            .expect("the running action ended at once")
            .unwrap();
        assert_eq!(result["status"], "error");
        let message = result["error"]["message"].as_str().unwrap();
        assert!(message.contains("stopped_by_user"), "{result}");
        // The session is over on the host: its tab is no longer the session's.
        let after = b
            .act("stop-all", "browser_xpath_scan", json!({ "tabId": 0 }))
            .await;
        assert_eq!(after["status"], "error");

        // The host dies mid-action: CLIENT_OFFLINE, and Chromium starts a new host when the
        // extension reconnects.
        let action = stuck_action(b, "killed").await;
        until_running(b, "killed").await;
        let pids = b.host_pids();
        assert_eq!(pids.len(), 1, "one host per browser: {pids:?}");
        unsafe { libc::kill(pids[0], libc::SIGKILL) };
        let result = tokio::time::timeout(Duration::from_secs(10), action)
            .await
            .expect("the relay answered as soon as the link dropped")
            .unwrap();
        assert_eq!(result["error"]["code"], "CLIENT_OFFLINE", "{result}");
        let rejoined = tokio::time::timeout(JOIN_WITHIN, b.wait_for_extension_host())
            .await
            .expect("a new host joined");
        assert_eq!(rejoined, b.client_id, "the same browser, by its stable clientId");
        let new_pids = b.host_pids();
        assert!(
            new_pids.len() == 1 && new_pids != pids,
            "{new_pids:?} after {pids:?}"
        );
        let started = b
            .ok(
                "after",
                "session_start",
                json!({ "url": b.url("/fixtures/form.html") }),
            )
            .await;
        assert!(started["tabId"].as_i64().is_some());

        // The extension's service worker restarts (an update, Chrome reclaiming it): the
        // port closes, the host leaves, and the new worker brings a new host back.
        let before = b.host_pids();
        let (cdp, _) = b.service_worker().await;
        let worker_target = b.service_worker_target(&cdp).await;
        cdp.call(None, "Target.closeTarget", json!({ "targetId": worker_target }))
            .await
            .expect("stop the service worker");
        let gone = async {
            while b.host_pids() == before {
                tokio::task::yield_now().await;
            }
        };
        tokio::time::timeout(JOIN_WITHIN, gone)
            .await
            .expect("the old host left with its port");
        // Chrome starts the worker again for the next event it listens to: a new tab.
        cdp.call(
            None,
            "Target.createTarget",
            json!({ "url": "about:blank", "background": true }),
        )
        .await
        .unwrap();
        let rejoined = tokio::time::timeout(JOIN_WITHIN, b.wait_for_extension_host())
            .await
            .expect("a new host joined after the restart");
        assert_eq!(rejoined, b.client_id);
        let again = b
            .ok(
                "after-restart",
                "session_start",
                json!({ "url": b.url("/fixtures/form.html") }),
            )
            .await;
        assert!(again["tabId"].as_i64().is_some());

        upload_without_file_access(b).await;
    });
}

/// The person turns "Allow access to file URLs" off for Tether (Chrome reloads the extension
/// for it): an upload is FORBIDDEN, naming that switch; other actions go on.
async fn upload_without_file_access(b: &ExtensionBrowser) {
    let before = b.host_pids();
    let cdp = CdpConnection::connect(b.ws_url()).await.unwrap();
    let blank = json!({ "url": "about:blank", "background": true });
    let target = cdp.call(None, "Target.createTarget", blank).await.unwrap()["targetId"].clone();
    // Loaded before it is used: a target made with the settings' URL answers first from its
    // initial blank document, where chrome.developerPrivate is not (a flake of the full run).
    let page = Raw::new(RawSession::attach(&cdp, &target).await);
    page.call("Page.enable", json!({})).await;
    page.call("Page.setLifecycleEventsEnabled", json!({ "enabled": true }))
        .await;
    tokio::time::timeout(JOIN_WITHIN, page.navigate_only("chrome://extensions"))
        .await
        .expect("chrome://extensions loads");
    // An unpacked extension is only reloaded in developer mode, as a person running one has.
    let developer_mode = "new Promise(done => chrome.developerPrivate.updateProfileConfiguration({ inDeveloperMode: true }, done))";
    page.eval_checked(developer_mode).await;
    let turn_off = format!(
        "new Promise(done => chrome.developerPrivate.updateExtensionConfiguration({{ extensionId: '{EXTENSION_ID}', fileAccess: false }}, done))"
    );
    page.eval_checked(&turn_off).await;
    // Chrome reloads the extension for the change: a new worker starts a new host.
    let reloaded = async {
        loop {
            let pids = b.host_pids();
            if !pids.is_empty() && pids.iter().all(|p| !before.contains(p)) {
                break;
            }
            tokio::task::yield_now().await;
        }
    };
    tokio::time::timeout(JOIN_WITHIN, reloaded)
        .await
        .expect("the reloaded extension started a new host");
    tokio::time::timeout(JOIN_WITHIN, b.wait_for_extension_host())
        .await
        .expect("a new host joined");

    let s = "no-file-access";
    let started = b
        .ok(
            s,
            "session_start",
            json!({ "url": b.url("/fixtures/upload.html") }),
        )
        .await;
    let tab = started["tabId"].clone();
    let note = tether_tests::client::upload_named(
        &b.relay.addr.to_string(),
        "note.txt",
        "text/plain",
        b"hi".to_vec(),
    )
    .await;
    let upload = json!({ "tabId": tab, "xpath": "//input[@id='avatar']", "artifactIds": [note] });
    let refused = b.act(s, "browser_upload_file", upload).await;
    assert_eq!(refused["error"]["code"], "FORBIDDEN", "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("Allow access to file URLs"), "{message}");
    let scan = b.ok(s, "browser_xpath_scan", json!({ "tabId": tab })).await;
    assert!(!scan["elements"].as_array().unwrap().is_empty());
}
