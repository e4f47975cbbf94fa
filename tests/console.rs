//! The console at `GET /` (docs/protocol.md §12) in a real headless Chromium, driven over raw CDP
//! the way a person would use it: a token typed in, actions of a real worker appearing live,
//! confirmations approved and denied by clicks. The page must log no error and make no
//! request beyond the relay, and never put the token in a URL.
//!
//! `TETHER_DOC_SHOTS=1` also writes `docs/console.png` (the README links it).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tether_host::cdp::connection::CdpConnection;
use tether_relay::config::{ConfirmMode, Settings};
use tether_relay::stores::artifacts::Limits;
use tether_tests::cdp::RawSession;
use tether_tests::client::post_action;
use tether_tests::person::{click, doc_shot, shown, shown_with, signed_in_console, type_into};
use tether_tests::relay::{TestRelay, OBSERVER, ORCHESTRATOR};
use tether_tests::run_worker;

const JOIN_WITHIN: Duration = Duration::from_secs(20);

/// What the page did that it must not: errors logged or thrown, requests beyond the relay.
#[derive(Default)]
struct Misdeeds(Vec<String>);

fn watch(
    cdp: &CdpConnection,
    session: String,
    origin: String,
    seen: Arc<Mutex<Misdeeds>>,
    urls: Arc<Mutex<Vec<String>>>,
) {
    let mut events = cdp.subscribe();
    tokio::spawn(async move {
        while let Ok(event) = events.recv().await {
            if event.session_id.as_deref() != Some(&session) {
                continue;
            }
            let p = &event.params;
            let wrong = match event.method.as_str() {
                "Runtime.exceptionThrown" => Some(format!("threw: {}", p["exceptionDetails"])),
                "Runtime.consoleAPICalled" if p["type"] == "error" => {
                    Some(format!("console.error: {}", p["args"]))
                }
                "Log.entryAdded" if p["entry"]["level"] == "error" => Some(format!("logged: {}", p["entry"])),
                "Network.requestWillBeSent" => {
                    let url = p["request"]["url"].as_str().unwrap_or_default().to_owned();
                    urls.lock().unwrap().push(url.clone());
                    let ours = url.starts_with(&origin) || url.starts_with(&origin.replacen("http", "ws", 1));
                    (!ours).then(|| format!("a request beyond the relay: {url}"))
                }
                _ => None,
            };
            if let Some(wrong) = wrong {
                seen.lock().unwrap().0.push(wrong);
            }
        }
    });
}

#[test]
fn a_person_follows_and_approves_actions_in_the_console() {
    run_worker(|h| async move {
        let data = tempfile::tempdir().unwrap();
        let settings = Settings {
            confirm: ConfirmMode::Every,
            ..Settings::default()
        };
        let relay = TestRelay::start_configured(data.path(), None, settings, Limits::default());
        let _worker = relay.start_worker(h, "console-worker");
        relay.wait_online("console-worker", JOIN_WITHIN).await;
        relay.wait_twin("console-worker", JOIN_WITHIN).await;

        let cdp = CdpConnection::connect(h.browser_ws()).await.unwrap();
        let target = cdp
            .call(None, "Target.createTarget", json!({ "url": "about:blank" }))
            .await
            .unwrap();
        let page = RawSession::attach(&cdp, &target["targetId"]).await;
        let (misdeeds, urls) = (Arc::default(), Arc::default());
        let origin = relay.http("");
        watch(
            &cdp,
            page.session.clone(),
            origin.clone(),
            Arc::clone(&misdeeds),
            Arc::clone(&urls),
        );
        for domain in ["Runtime.enable", "Log.enable", "Network.enable", "Page.enable"] {
            page.call(domain, json!({})).await;
        }
        page.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": false }),
        )
        .await;
        page.call("Page.navigate", json!({ "url": relay.http("/") }))
            .await;
        page.eval_checked(&shown("body[data-ready]")).await;
        // Before sign-in the board is not drawn: nothing it would say ("No browser has joined")
        // is true or known yet while a worker is online.
        let board = page
            .eval_checked("document.getElementById('board').checkVisibility()")
            .await;
        assert_eq!(board, false, "the board shows before sign-in");

        // A wrong token is refused, clearly.
        type_into(&page, "#token", "not-the-token").await;
        click(&page, "#token-form button").await;
        let error = page.eval_checked(&shown("#sign-in-error")).await;
        assert!(error.as_str().unwrap().contains("not valid"), "{error}");

        type_into(&page, "#token", OBSERVER).await;
        click(&page, "#token-form button").await;
        page.eval_checked(&shown("#board")).await;
        let browsers = page.eval_checked(&shown("[data-client='console-worker']")).await;
        assert!(browsers.as_str().unwrap().contains("online"), "{browsers}");
        // The browser's windows and tabs, as its twin says them.
        click(&page, "[data-client='console-worker'] .twin-toggle").await;
        page.eval_checked(&shown("[data-client='console-worker'] pre.twin"))
            .await;

        // An agent starts a session: the person approves it, and sees it run.
        let url = h.url("/fixtures/snapshot.html");
        let addr = relay.addr.to_string();
        let starting = tokio::spawn({
            let addr = addr.clone();
            let body =
                json!({ "sessionId": "shop", "actionName": "session_start", "params": { "url": url } });
            async move { post_action(&addr, ORCHESTRATOR, body).await.1 }
        });
        let ask = page.eval_checked(&shown("#ask-list [data-request]")).await;
        assert!(ask.as_str().unwrap().contains("session_start"), "{ask}");
        click(&page, "#ask-list .approve").await;
        let started = starting.await.unwrap();
        assert_eq!(started["status"], "success", "{started}");
        let done = page
            .eval_checked(&shown("[data-session='shop'] .actions li.ok"))
            .await;
        assert!(done.as_str().unwrap().contains("session_start"), "{done}");
        page.eval_checked(&shown_with("[data-client='console-worker'] .sessions-of", "shop"))
            .await;

        // The next one the person denies; the agent gets USER_DENIED, and the page says so.
        let tab = started["result"]["tabId"].clone();
        let shooting = tokio::spawn({
            let body = json!({ "sessionId": "shop", "actionName": "browser_screenshot", "params": { "tabId": tab } });
            async move { post_action(&addr, ORCHESTRATOR, body).await.1 }
        });
        page.eval_checked(&shown("#ask-list [data-request]")).await;
        click(&page, "#ask-list .deny").await;
        assert_eq!(shooting.await.unwrap()["error"]["code"], "USER_DENIED");
        let failed = page
            .eval_checked(&shown("[data-session='shop'] .actions li.failed"))
            .await;
        assert!(failed.as_str().unwrap().contains("USER_DENIED"), "{failed}");

        // On a narrow window (a phone), the page reflows to one column: nothing sticks out.
        page.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": 390, "height": 800, "deviceScaleFactor": 1, "mobile": false }),
        )
        .await;
        let overflow = page
            .eval_checked("document.documentElement.scrollWidth - document.documentElement.clientWidth")
            .await;
        assert_eq!(overflow, 0, "the page is wider than a 390 px window");
        page.call(
            "Emulation.setDeviceMetricsOverride",
            json!({ "width": 1280, "height": 800, "deviceScaleFactor": 1, "mobile": false }),
        )
        .await;

        doc_shot(&page, "console.png", None).await;
        let misdeeds = std::mem::take(&mut misdeeds.lock().unwrap().0);
        assert!(misdeeds.is_empty(), "{misdeeds:#?}");
        let urls = urls.lock().unwrap().clone();
        assert!(
            urls.iter().all(|u| !u.contains(OBSERVER)),
            "the token went into a URL: {urls:?}"
        );
        cdp.call(
            None,
            "Target.closeTarget",
            json!({ "targetId": target["targetId"] }),
        )
        .await
        .unwrap();
    });
}

#[test]
fn an_html_artifact_opened_in_the_consoles_tab_cannot_read_its_token() {
    run_worker(|h| async move {
        let data = tempfile::tempdir().unwrap();
        let relay = TestRelay::start(data.path(), None);
        let _worker = relay.start_worker(h, "artifact-worker");
        relay.wait_online("artifact-worker", JOIN_WITHIN).await;
        // An agent saves a hostile page's HTML: an artifact on the relay's own origin.
        let s = "hostile-html";
        let started = relay
            .ok(
                s,
                "session_start",
                json!({ "url": h.url("/fixtures/hostile.html") }),
            )
            .await;
        let html = relay
            .ok(s, "browser_get_html", json!({ "tabId": started["tabId"] }))
            .await;
        let link = html["url"].as_str().unwrap().to_owned();

        // A person signed in to the console opens that link in the same tab.
        let cdp = CdpConnection::connect(h.browser_ws()).await.unwrap();
        let (page, target) = signed_in_console(&cdp, &relay.http("/")).await;
        page.call("Page.enable", json!({})).await;
        page.call("Page.navigate", json!({ "url": link })).await;
        // Whatever the tab now shows has loaded: a script in it has run.
        page.eval("new Promise(r => document.readyState === 'complete' ? r() : addEventListener('load', r))")
            .await;
        assert_eq!(
            tether_tests::fixtures::hits("artifact-leak"),
            0,
            "the page's script ran on the relay's origin and sent the console's storage away"
        );
        cdp.call(None, "Target.closeTarget", json!({ "targetId": target }))
            .await
            .unwrap();
    });
}

/// A console opened while a session runs shows what the session did before the person signed
/// in: its latest actions, as the relay kept them.
#[test]
fn a_console_opened_late_shows_what_the_running_sessions_did_before() {
    run_worker(|h| async move {
        let data = tempfile::tempdir().unwrap();
        let relay = TestRelay::start(data.path(), None);
        let _worker = relay.start_worker(h, "late-worker");
        relay.wait_online("late-worker", JOIN_WITHIN).await;
        let addr = relay.addr.to_string();
        let url = h.url("/fixtures/snapshot.html");
        let start = json!({ "sessionId": "before", "actionName": "session_start", "params": { "url": url } });
        let (_, started) = post_action(&addr, ORCHESTRATOR, start).await;
        assert_eq!(started["status"], "success", "{started}");
        let tab = started["result"]["tabId"].clone();
        let look =
            json!({ "sessionId": "before", "actionName": "browser_snapshot", "params": { "tabId": tab } });
        let (_, looked) = post_action(&addr, ORCHESTRATOR, look).await;
        assert_eq!(looked["status"], "success", "{looked}");

        let cdp = CdpConnection::connect(h.browser_ws()).await.unwrap();
        let (page, target) = signed_in_console(&cdp, &relay.http("/")).await;
        let earlier = page
            .eval_checked(&shown_with(
                "[data-session='before'] .actions",
                "browser_snapshot",
            ))
            .await;
        assert!(earlier.as_str().unwrap().contains("session_start"), "{earlier}");
        cdp.call(None, "Target.closeTarget", json!({ "targetId": target }))
            .await
            .unwrap();
    });
}
