//! The whole chain: orchestrator -> relay -> `tether-host worker` -> headless Chromium, and the
//! artifacts back from the relay's store by their presigned URLs. The worker is wired exactly
//! as the `worker` command wires it, to the test binary's one Chromium (as `--browser-ws`).

use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tether_host::modes::worker::{BrowserAt, Worker};
use tether_tests::client::{self, download};
use tether_tests::relay::TestRelay;
use tether_tests::{find_element as find, run_worker};
use tokio_tungstenite::tungstenite::Message;

/// Generous bound for a host to (re)join: its backoff starts at 250 ms and doubles.
const JOIN_WITHIN: Duration = Duration::from_secs(20);

#[test]
fn an_orchestrator_drives_a_worker_through_the_relay() {
    run_worker(|h| async move {
        let data = tempfile::tempdir().unwrap();
        let relay = TestRelay::start(data.path(), None);
        let worker = relay.start_worker(h, "chain-worker");
        relay.wait_online("chain-worker", JOIN_WITHIN).await;
        let list = relay.get("/api/extension/extension-list").await;
        let me = list["clients"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["clientId"] == "chain-worker")
            .unwrap();
        assert_eq!(me["meta"]["mode"], "worker");
        assert!(me["meta"]["actions"]
            .as_array()
            .unwrap()
            .contains(&json!("browser_click")));

        let session = "chain";
        let started = relay
            .ok(
                session,
                "session_start",
                json!({ "url": h.url("/fixtures/form.html") }),
            )
            .await;
        let tab = started["tabId"].as_i64().unwrap();
        relay
            .ok(session, "browser_wait_for_loaded", json!({ "tabId": tab }))
            .await;
        let scan = relay
            .ok(session, "browser_xpath_scan", json!({ "tabId": tab }))
            .await;
        let elements = scan["elements"].as_array().unwrap();
        let name = find(elements, "input", "name")["xpath"].clone();
        let go = find(elements, "button", "go")["xpath"].clone();
        relay
            .ok(
                session,
                "browser_type",
                json!({ "tabId": tab, "xpath": name, "text": "Ada" }),
            )
            .await;
        relay
            .ok(session, "browser_click", json!({ "tabId": tab, "xpath": go }))
            .await;

        // What the page did, read back through the relay's artifact store.
        let html = relay
            .ok(session, "browser_get_html", json!({ "tabId": tab }))
            .await;
        let (kind, bytes) = download(html["url"].as_str().unwrap()).await;
        assert!(kind.starts_with("text/html"), "{kind}");
        let page = String::from_utf8(bytes).unwrap();
        assert!(
            page.contains(r#"<span id="submitted">Ada</span>"#),
            "the form was submitted with the typed name"
        );

        let shot = relay
            .ok(session, "browser_screenshot", json!({ "tabId": tab }))
            .await;
        assert!(shot["url"]
            .as_str()
            .unwrap()
            .starts_with(&relay.http("/artifacts/")));
        let (kind, png) = download(shot["url"].as_str().unwrap()).await;
        assert_eq!(kind, "image/png");
        assert_eq!(png.len() as u64, shot["bytes"].as_u64().unwrap());
        let image = image::load_from_memory(&png).unwrap();
        assert_eq!(
            (image.width() as u64, image.height() as u64),
            (shot["width"].as_u64().unwrap(), shot["height"].as_u64().unwrap())
        );

        // The twin shows the session's tab.
        let twin = relay.get("/api/twin/chain-worker").await;
        let tabs = twin["tabs"].as_array().unwrap();
        assert!(
            tabs.iter()
                .any(|t| t["url"].as_str().is_some_and(|u| u.ends_with("/form.html"))),
            "{twin}"
        );

        // The relay's own pages are refused like a control UI.
        let refused = relay
            .act(
                session,
                "browser_navigate",
                json!({ "tabId": tab, "url": relay.http("/healthz") }),
            )
            .await;
        assert_eq!(refused["error"]["code"], "FORBIDDEN_TARGET", "{refused}");
        // Typed as a person types an address (no scheme), by its port on loopback's other names
        // too: still the relay's own page.
        let port = relay.addr.port();
        for typed in [
            format!("127.0.0.1:{port}/healthz"),
            format!("localhost:{port}/healthz"),
        ] {
            let refused = relay
                .act(session, "browser_navigate", json!({ "tabId": tab, "url": typed }))
                .await;
            assert_eq!(refused["error"]["code"], "FORBIDDEN_TARGET", "{typed}: {refused}");
        }
        // Nor may a session go through the relay as its proxy (its pages under any site's name),
        // whatever the proxy's scheme.
        for scheme in ["http", "socks5"] {
            let proxy = json!({ "server": format!("{scheme}://localhost:{port}"), "bypass": "<-loopback>" });
            let through_relay = json!({ "url": h.url("/fixtures/form.html"), "proxy": proxy });
            let refused = relay.act("proxied-relay", "session_start", through_relay).await;
            assert_eq!(
                refused["error"]["code"], "FORBIDDEN_TARGET",
                "{scheme}: {refused}"
            );
        }

        relay.ok(session, "session_stop", json!({})).await;
        let state = relay.get(&format!("/api/sessions/{session}")).await;
        assert_eq!(state["status"], "completed");
        worker.abort();
    });
}

#[test]
fn a_worker_rejoins_a_restarted_relay_and_serves_it() {
    run_worker(|h| async move {
        let data = tempfile::tempdir().unwrap();
        let relay = TestRelay::start(data.path(), None);
        let addr = relay.addr;
        let worker = relay.start_worker(h, "restart-worker");
        relay.wait_online("restart-worker", JOIN_WITHIN).await;
        let started = relay
            .ok(
                "before",
                "session_start",
                json!({ "url": h.url("/fixtures/form.html") }),
            )
            .await;
        relay.ok("before", "session_stop", json!({})).await;
        assert!(started["tabId"].as_i64().is_some());
        // An orchestrator on a socket sees the relay go, and dials it again.
        let mut orchestrator = client::orchestrator(&relay.addr.to_string()).await;
        relay.kill().await;
        let gone = async { while let Some(Ok(_)) = orchestrator.next().await {} };
        tokio::time::timeout(JOIN_WITHIN, gone)
            .await
            .expect("the socket closed with the relay");

        let relay = TestRelay::start(data.path(), Some(addr));
        let mut orchestrator = client::orchestrator(&relay.addr.to_string()).await;
        relay.wait_online("restart-worker", JOIN_WITHIN).await;
        relay.wait_twin("restart-worker", JOIN_WITHIN).await;
        let envelope = json!({ "v": "1", "type": "extension.list", "id": "l", "payload": {} });
        orchestrator
            .send(Message::Text(envelope.to_string().into()))
            .await
            .unwrap();
        let reply = loop {
            let Some(Ok(Message::Text(text))) = orchestrator.next().await else {
                panic!("closed")
            };
            let reply: Value = serde_json::from_str(&text).unwrap();
            if reply["replyTo"] == "l" {
                break reply;
            }
        };
        assert_eq!(reply["payload"]["clients"][0]["online"], true, "{reply}");
        // The twin came back with the join, and actions run again.
        let twin = relay.get("/api/twin/restart-worker").await;
        assert!(!twin["tabs"].as_array().unwrap().is_empty(), "{twin}");
        let started = relay
            .ok(
                "after",
                "session_start",
                json!({ "url": h.url("/fixtures/form.html") }),
            )
            .await;
        assert!(started["tabId"].as_i64().is_some());
        relay.ok("after", "session_stop", json!({})).await;
        // The log of the earlier session survived the restart.
        let log = std::fs::read_to_string(data.path().join("logs/before.jsonl")).unwrap();
        assert!(log.lines().count() >= 4, "{log}");
        worker.abort();
    });
}

#[test]
fn a_worker_with_a_wrong_token_stops_and_says_why() {
    run_worker(|h| async move {
        let data = tempfile::tempdir().unwrap();
        let relay = TestRelay::start(data.path(), None);
        for (token, code) in [
            ("wrong", "UNAUTHORIZED"),
            (tether_tests::relay::ORCHESTRATOR, "FORBIDDEN"),
        ] {
            let worker = Worker {
                browser: BrowserAt::Ws(h.browser_ws().to_owned()),
                relay: format!("ws://{}", relay.addr),
                token: token.into(),
                client_id: "refused-worker".into(),
                forbid_urls: Vec::new(),
                ca_file: None,
                allow_evaluate: false,
                allow_file_urls: false,
                no_page_log: false,
                secrets: Default::default(),
                data_dir: None,
            };
            let outcome = tokio::time::timeout(JOIN_WITHIN, worker.serve())
                .await
                .expect("a refused worker stops instead of retrying");
            let message = format!("{:#}", outcome.unwrap_err());
            assert!(message.contains(code) && message.contains("refused"), "{message}");
        }
    });
}

#[test]
fn a_full_artifact_store_fails_artifact_actions_clearly_and_the_relay_serves_on() {
    run_worker(|h| async move {
        let data = tempfile::tempdir().unwrap();
        let limits = tether_relay::stores::artifacts::Limits {
            max_store_bytes: 1,
            ..Default::default()
        };
        let relay = TestRelay::start_with(data.path(), None, limits);
        let worker = relay.start_worker(h, "full-store");
        relay.wait_online("full-store", JOIN_WITHIN).await;
        let started = relay
            .ok(
                "full",
                "session_start",
                json!({ "url": h.url("/fixtures/form.html") }),
            )
            .await;
        let tab = started["tabId"].clone();
        let shot = relay
            .act("full", "browser_screenshot", json!({ "tabId": tab }))
            .await;
        assert_eq!(shot["status"], "error");
        let message = shot["error"]["message"].as_str().unwrap();
        assert!(message.contains("artifact store is full"), "{shot}");
        // Everything that needs no storage goes on.
        relay
            .ok("full", "browser_xpath_scan", json!({ "tabId": tab }))
            .await;
        relay.ok("full", "session_stop", json!({})).await;
        worker.abort();
    });
}

#[test]
fn a_pool_of_real_workers_serves_many_sessions_without_losing_or_reordering() {
    run_worker(|h| async move {
        const SESSIONS: usize = 20;
        const ACTIONS: usize = 10;
        let data = tempfile::tempdir().unwrap();
        let relay = std::sync::Arc::new(TestRelay::start(data.path(), None));
        let workers: Vec<_> = (0..2)
            .map(|w| relay.start_worker(h, &format!("pool-{w}")))
            .collect();
        for w in 0..2 {
            relay.wait_online(&format!("pool-{w}"), JOIN_WITHIN).await;
        }
        let sessions: Vec<_> = (0..SESSIONS)
            .map(|s| {
                let relay = relay.clone();
                let url = h.url("/fixtures/form.html");
                tokio::spawn(async move {
                    let session = format!("pool-session-{s}");
                    let body = json!({ "sessionId": session, "clientId": format!("pool-{}", s % 2),
                                       "actionName": "session_start", "params": { "url": url } });
                    let started = relay.post(body).await;
                    assert_eq!(started["status"], "success", "{started}");
                    let tab = started["result"]["tabId"].clone();
                    // Sent all at once: the relay queues them and runs them in order.
                    let actions: Vec<_> = (0..ACTIONS)
                        .map(|n| {
                            let relay = relay.clone();
                            let body = json!({ "sessionId": session, "actionId": format!("{n}"),
                                               "actionName": if n % 2 == 0 { "browser_xpath_scan" } else { "browser_wait_for_loaded" },
                                               "params": { "tabId": tab } });
                            tokio::spawn(async move { relay.post(body).await })
                        })
                        .collect();
                    for action in actions {
                        let result = action.await.unwrap();
                        assert_eq!(result["status"], "success", "{result}");
                    }
                    relay.ok(&session, "session_stop", json!({})).await;
                })
            })
            .collect();
        for session in sessions {
            session.await.unwrap();
        }
        // Each session's log holds each action's result once: none lost, none doubled.
        for s in 0..SESSIONS {
            let log =
                std::fs::read_to_string(data.path().join(format!("logs/pool-session-{s}.jsonl"))).unwrap();
            let ends: Vec<String> = log
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .filter(|e| {
                    e["type"] == "browser_action.result"
                        && e["payload"]["actionName"] != "session_start"
                        && e["payload"]["actionName"] != "session_stop"
                })
                .map(|e| e["payload"]["actionId"].as_str().unwrap().to_owned())
                .collect();
            assert_eq!(ends.len(), ACTIONS, "session {s}: {ends:?}");
            let mut unique = ends.clone();
            unique.sort();
            unique.dedup();
            assert_eq!(unique.len(), ACTIONS, "none doubled: {ends:?}");
        }
        for worker in workers {
            worker.abort();
        }
    });
}

#[test]
fn a_session_screen_shows_its_tabs_and_current_page_and_leaves_recent_alone() {
    run_worker(|h| async move {
        let data = tempfile::tempdir().unwrap();
        let relay = TestRelay::start(data.path(), None);
        let worker = relay.start_worker(h, "screen-worker");
        relay.wait_online("screen-worker", JOIN_WITHIN).await;
        let s = "screen";
        let screen = |detail: &'static str| {
            let relay = &relay;
            async move {
                relay
                    .get_text(&format!("/api/sessions/{s}/screen.md{detail}"))
                    .await
            }
        };
        let (status, md) = screen("").await;
        assert_eq!(status, 200);
        assert!(md.contains("No browser yet"), "{md}");

        let tab = relay
            .ok(
                s,
                "session_start",
                json!({ "url": h.url("/fixtures/snapshot.html") }),
            )
            .await["tabId"]
            .as_i64()
            .unwrap();
        relay
            .ok(s, "browser_wait_for_loaded", json!({ "tabId": tab }))
            .await;
        let (_, md) = screen("").await;
        let listed = md
            .lines()
            .find(|l| l.starts_with(&format!("- tab {tab} ")))
            .expect(&md);
        assert!(listed.ends_with("/fixtures/snapshot.html (current)"), "{md}");
        assert!(
            md.contains(&format!("### Tab {tab}\nPage \"Snapshot shop\"")),
            "{md}"
        );
        assert!(
            md.contains("# Garden shop") && md.contains("button \"Add watering can\""),
            "{md}"
        );

        // The session's own snapshot is the baseline; looks in between do not move it.
        relay.ok(s, "browser_snapshot", json!({ "tabId": tab })).await;
        relay
            .ok(
                s,
                "browser_click",
                json!({ "tabId": tab, "xpath": "//button[@id='add']" }),
            )
            .await;
        let (_, look) = screen("?detail=recent").await;
        assert!(look.contains("+ - Watering can"), "{look}");
        let (_, gist) = screen("?detail=gist").await;
        assert!(gist.contains("Main heading: \"Garden shop\""), "{gist}");
        let recent = relay
            .ok(s, "browser_snapshot", json!({ "tabId": tab, "detail": "recent" }))
            .await;
        assert!(
            recent["markdown"].as_str().unwrap().contains("+ - Watering can"),
            "{recent}"
        );

        let (status, body) = screen("?detail=everything").await;
        assert_eq!(status, 400, "{body}");
        let anonymous = tether_tests::client::own_http()
            .get(relay.http(&format!("/api/sessions/{s}/screen.md")))
            .send()
            .await
            .unwrap();
        assert_eq!(anonymous.status().as_u16(), 401);
        worker.abort();
    });
}

/// Every file under `dir`, read as text where it is.
fn texts_under(dir: &std::path::Path) -> Vec<(std::path::PathBuf, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().filter_map(Result::ok) {
        let path = entry.path();
        if path.is_dir() {
            found.extend(texts_under(&path));
        } else if let Ok(bytes) = std::fs::read(&path) {
            found.push((path, String::from_utf8_lossy(&bytes).into_owned()));
        }
    }
    found
}

#[test]
fn a_secret_logs_in_while_its_value_shows_nowhere() {
    run_worker(|h| async move {
        const VALUE: &str = "Tr1cky-S3cret!";
        let data = tempfile::tempdir().unwrap();
        let relay = TestRelay::start(data.path(), None);
        let secrets = tether_host::engine::secrets::Secrets::default();
        let origin = h.url("");
        secrets
            .set(vec![("site-password".into(), VALUE.into(), vec![origin.clone()])])
            .unwrap();
        let _worker = relay.start_worker_with(h.browser_ws(), "secret-worker", |w| w.secrets = secrets);
        relay.wait_online("secret-worker", JOIN_WITHIN).await;
        let s = "secrets";
        let mut seen = Vec::new();
        let listed = relay.ok(s, "browser_secrets", json!({})).await;
        assert_eq!(
            listed["secrets"],
            json!([{ "name": "site-password", "origins": [origin] }])
        );
        let page = h.url("/fixtures/login.html");
        let tab = relay.ok(s, "session_start", json!({ "url": page })).await["tabId"].clone();
        relay
            .ok(s, "browser_wait_for_loaded", json!({ "tabId": tab }))
            .await;
        for field in ["password", "note"] {
            let typed = json!({ "tabId": tab, "xpath": format!("//input[@name='{field}']"), "secret": "site-password" });
            seen.push(relay.ok(s, "browser_type", typed).await);
        }
        let snapshot = relay.ok(s, "browser_snapshot", json!({ "tabId": tab })).await;
        let markdown = snapshot["markdown"].as_str().unwrap();
        assert_eq!(
            markdown.matches("= \"<secret:site-password>\"").count(),
            2,
            "the password and the note field show the name: {markdown}"
        );
        seen.push(snapshot.clone());
        seen.push(relay.ok(s, "browser_get_html", json!({ "tabId": tab })).await);
        let unknown = relay
            .post(json!({ "sessionId": s, "actionName": "browser_type",
                "params": { "tabId": tab, "xpath": "//input[@name='user']", "secret": "bank" } }))
            .await;
        assert_eq!(unknown["error"]["code"], "INVALID_PARAMS", "{unknown}");
        assert!(unknown["error"]["message"]
            .as_str()
            .unwrap()
            .contains("site-password"));

        let click = json!({ "tabId": tab, "xpath": "//button[@id='sign-in']" });
        seen.push(relay.ok(s, "browser_click", click).await);
        tether_tests::fixtures::hit_times("login", 1).await;
        let posted = tether_tests::fixtures::logins().pop().unwrap();
        assert!(
            posted.contains("password=Tr1cky-S3cret%21"),
            "the site received it: {posted}"
        );

        // The same page on another origin (localhost, not 127.0.0.1): nothing is typed.
        let elsewhere = page.replace("127.0.0.1", "localhost");
        relay
            .ok(s, "browser_navigate", json!({ "tabId": tab, "url": elsewhere }))
            .await;
        let refused = relay
            .post(json!({ "sessionId": s, "actionName": "browser_type",
                "params": { "tabId": tab, "xpath": "//input[@name='password']", "secret": "site-password" } }))
            .await;
        assert_eq!(refused["error"]["code"], "FORBIDDEN_TARGET", "{refused}");
        let left = relay.ok(s, "browser_snapshot", json!({ "tabId": tab })).await;
        assert!(!left["markdown"].as_str().unwrap().contains("secret"), "{left}");
        seen.push(refused);
        relay.ok(s, "session_stop", json!({})).await;

        for result in &seen {
            assert!(!result.to_string().contains(VALUE), "a result shows it: {result}");
        }
        for (path, text) in texts_under(data.path()) {
            assert!(!text.contains(VALUE), "{} holds it", path.display());
        }
    });
}

#[test]
fn a_worker_started_without_the_page_log_keeps_none_and_says_so() {
    run_worker(|h| async move {
        let data = tempfile::tempdir().unwrap();
        let relay = TestRelay::start(data.path(), None);
        let _worker = relay.start_worker_with(h.browser_ws(), "quiet-worker", |w| w.no_page_log = true);
        relay.wait_online("quiet-worker", JOIN_WITHIN).await;
        let s = "no-page-log";
        let page = h.url("/fixtures/tally.html");
        let tab = relay.ok(s, "session_start", json!({ "url": page })).await["tabId"].clone();
        // The page logs a line and sends a request for each press; the press still works.
        let pressed = relay
            .ok(
                s,
                "browser_click",
                json!({ "tabId": tab, "xpath": "//button[@id='add']", "observe": "recent" }),
            )
            .await;
        assert!(
            pressed["screen"].as_str().unwrap().contains("Line 1 added"),
            "{pressed}"
        );
        for read in ["browser_console", "browser_network"] {
            let refused = relay.act(s, read, json!({ "tabId": tab })).await;
            assert_eq!(refused["error"]["code"], "FORBIDDEN", "{refused}");
            let message = refused["error"]["message"].as_str().unwrap();
            assert!(message.contains("--no-page-log"), "{message}");
        }
        relay.ok(s, "session_stop", json!({})).await;
    });
}

/// docs/protocol.md §3: over HTTP, as in MCP, an action that leaves `tabId` out acts on the
/// session's current tab (the last one an action ran on or opened); a session with no tab yet
/// says what to do.
#[test]
fn an_action_without_a_tab_id_acts_on_the_sessions_current_tab() {
    run_worker(|h| async move {
        let data = tempfile::tempdir().unwrap();
        let relay = TestRelay::start(data.path(), None);
        let _worker = relay.start_worker(h, "current-tab-worker");
        relay.wait_online("current-tab-worker", JOIN_WITHIN).await;
        let session = "current-tab";
        let bind = json!({ "sessionId": session, "clientId": "current-tab-worker", "actionName": "browser_snapshot", "params": {} });
        let early = relay.post(bind).await;
        assert_eq!(early["error"]["code"], "INVALID_PARAMS", "{early}");
        assert!(
            early["error"]["message"]
                .as_str()
                .unwrap()
                .contains("session_start"),
            "{early}"
        );

        let started = relay
            .ok(
                session,
                "session_start",
                json!({ "url": h.url("/fixtures/snapshot.html") }),
            )
            .await;
        let tab = started["tabId"].clone();
        relay.ok(session, "browser_wait_for_loaded", json!({})).await;
        let read = relay.act(session, "browser_snapshot", json!({})).await;
        assert_eq!(read["status"], "success", "{read}");
        assert!(
            read["result"]["markdown"]
                .as_str()
                .unwrap()
                .contains("Garden shop"),
            "{read}"
        );
        // A tab the session opens becomes the current one; select goes back.
        let article = h.url("/fixtures/article.html");
        relay
            .ok(
                session,
                "browser_tabs",
                json!({ "action": "open", "url": article }),
            )
            .await;
        relay.ok(session, "browser_wait_for_loaded", json!({})).await;
        let markdown = |result: Value| result["markdown"].as_str().unwrap().to_owned();
        let read = markdown(relay.ok(session, "browser_snapshot", json!({})).await);
        assert!(!read.contains("Garden shop"), "{read}");
        relay
            .ok(
                session,
                "browser_tabs",
                json!({ "action": "select", "tabId": tab }),
            )
            .await;
        let read = markdown(relay.ok(session, "browser_snapshot", json!({})).await);
        assert!(read.contains("Garden shop"), "{read}");
    });
}
