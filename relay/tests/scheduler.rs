//! The action lifecycle over real sockets (docs/protocol.md §2.3): forwarding with ack and result,
//! one action at a time per session in FIFO order, the queue bound, every timeout, idempotent
//! action ids, a host that drops its link mid-action, client selection and session status.

mod common;

use std::time::Duration;

use common::client::{act, envelope, orchestrator, post_action, recv, recv_type, request, send};
use common::test_host::TestHost;
use common::{start, HOST, ORCHESTRATOR};
use serde_json::{json, Value};
use tether_relay::config::Settings;
use tether_relay::stores::artifacts::Limits;

async fn relay_with(settings: Settings) -> String {
    start(settings, Limits::default()).await.0.to_string()
}

async fn relay() -> String {
    relay_with(Settings::default()).await
}

fn click(session: &str, action_id: Option<&str>) -> Value {
    let mut payload = json!({
        "sessionId": session, "actionName": "browser_click",
        "params": { "tabId": 1, "xpath": "//button" },
    });
    if let Some(id) = action_id {
        payload["actionId"] = json!(id);
    }
    payload
}

#[tokio::test]
async fn an_action_is_forwarded_acked_and_answered_in_reply_to_the_request() {
    let addr = relay().await;
    let mut host = TestHost::join(&addr, "browser-1").await;
    let mut orch = orchestrator(&addr).await;
    let run = tokio::spawn(async move { act(&mut orch, "req-7", click("s1", Some("a1"))).await });
    let action = host.next_action().await;
    let p = &action["payload"];
    assert_eq!(
        (
            p["sessionId"].as_str(),
            p["actionId"].as_str(),
            p["actionName"].as_str()
        ),
        (Some("s1"), Some("a1"), Some("browser_click"))
    );
    assert_eq!(p["params"]["xpath"], "//button");
    assert!(
        p["timeoutMs"]
            .as_u64()
            .is_some_and(|ms| ms > 29_000 && ms <= 30_000),
        "{p}"
    );
    host.ack(&action).await;
    host.succeed(&action, json!({ "clicked": true })).await;
    let (ack, result) = run.await.unwrap();
    let ack = ack.expect("an ack before the result");
    assert_eq!(
        (ack["replyTo"].as_str(), ack["payload"]["actionId"].as_str()),
        (Some("req-7"), Some("a1"))
    );
    let r = &result["payload"];
    assert_eq!(result["type"], "browser_action.result");
    assert_eq!(result["replyTo"], "req-7");
    assert_eq!(
        (r["status"].as_str(), r["clientId"].as_str()),
        (Some("success"), Some("browser-1"))
    );
    assert_eq!(r["result"], json!({ "clicked": true }));
    assert!(r.get("replayed").is_none());
}

#[tokio::test]
async fn a_session_runs_one_action_at_a_time_and_answers_in_order() {
    let addr = relay().await;
    let mut host = TestHost::join(&addr, "browser-1").await;
    let posts: Vec<_> = (0..3)
        .map(|i| {
            let addr = addr.clone();
            tokio::spawn(async move {
                post_action(&addr, ORCHESTRATOR, click("serial", Some(&format!("a{i}")))).await
            })
        })
        .collect();
    // Another session is not held up by the first one's queue.
    let other = {
        let addr = addr.clone();
        tokio::spawn(async move { post_action(&addr, ORCHESTRATOR, click("other", Some("b0"))).await })
    };
    let mut seen = Vec::new();
    let mut first_of_serial: Option<Value> = None;
    // Two actions may be in flight at once: the first of "serial" and the one of "other".
    while seen.len() < 2 {
        let action = host.next_action().await;
        seen.push(action["payload"]["actionId"].as_str().unwrap().to_owned());
        if action["payload"]["sessionId"] == "serial" {
            first_of_serial = Some(action);
        } else {
            host.ack(&action).await;
            host.succeed(&action, json!({})).await;
        }
    }
    assert!(seen.contains(&"b0".to_owned()), "{seen:?}");
    let first = first_of_serial.expect("serial's first action");
    let first_id = first["payload"]["actionId"].as_str().unwrap().to_owned();
    let session = request(
        &mut orchestrator(&addr).await,
        "session.get",
        "g",
        json!({ "sessionId": "serial" }),
    )
    .await;
    assert_eq!(session["payload"]["status"], "running");
    assert_eq!(session["payload"]["inFlight"], first_id.as_str());
    assert_eq!(session["payload"]["queued"], 2);
    host.ack(&first).await;
    host.succeed(&first, json!({ "n": first_id })).await;
    let mut order = vec![first_id];
    for _ in 0..2 {
        let action = host.next_action().await;
        let id = action["payload"]["actionId"].as_str().unwrap().to_owned();
        host.ack(&action).await;
        host.succeed(&action, json!({ "n": id })).await;
        order.push(id);
    }
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order.len(), 3);
    assert_eq!(sorted, ["a0", "a1", "a2"]);
    for post in posts {
        let (status, body) = post.await.unwrap();
        assert_eq!(status, 200);
        assert_eq!(body["status"], "success");
        assert_eq!(
            body["result"]["n"], body["actionId"],
            "each caller gets its own result"
        );
    }
    assert_eq!(other.await.unwrap().1["status"], "success");
}

#[tokio::test]
async fn results_of_one_session_arrive_in_the_order_actions_were_sent() {
    let addr = relay().await;
    TestHost::join(&addr, "browser-1").await.serve_echo();
    let mut orch = orchestrator(&addr).await;
    for i in 0..20 {
        send(
            &mut orch,
            envelope("browser_action", &format!("r{i}"), click("ordered", None)),
        )
        .await;
    }
    let mut replies = Vec::new();
    while replies.len() < 20 {
        let reply = recv(&mut orch).await;
        if reply["type"] == "browser_action.result" {
            assert_eq!(reply["payload"]["status"], "success", "{reply}");
            replies.push(reply["replyTo"].as_str().unwrap().to_owned());
        }
    }
    let expected: Vec<String> = (0..20).map(|i| format!("r{i}")).collect();
    assert_eq!(replies, expected);
}

#[tokio::test]
async fn a_full_queue_refuses_with_queue_full() {
    let addr = relay_with(Settings {
        queue_limit: 1,
        ..Settings::default()
    })
    .await;
    let mut host = TestHost::join(&addr, "browser-1").await;
    let running = tokio::spawn({
        let addr = addr.clone();
        async move { post_action(&addr, ORCHESTRATOR, click("q", Some("a0"))).await }
    });
    let first = host.next_action().await;
    let queued = tokio::spawn({
        let addr = addr.clone();
        async move { post_action(&addr, ORCHESTRATOR, click("q", Some("a1"))).await }
    });
    // The second is queued once the session reports it.
    let mut orch = orchestrator(&addr).await;
    let mut polls = 0;
    while request(&mut orch, "session.get", "g", json!({ "sessionId": "q" })).await["payload"]["queued"] != 1
    {
        polls += 1;
        assert!(polls < 10_000, "the second action never got queued");
    }
    let (status, refused) = post_action(&addr, ORCHESTRATOR, click("q", Some("a2"))).await;
    assert_eq!(status, 200);
    assert_eq!(refused["error"]["code"], "QUEUE_FULL", "{refused}");
    assert_eq!(refused["actionId"], "a2");
    host.ack(&first).await;
    host.succeed(&first, json!({})).await;
    let second = host.next_action().await;
    host.ack(&second).await;
    host.succeed(&second, json!({})).await;
    assert_eq!(running.await.unwrap().1["status"], "success");
    assert_eq!(queued.await.unwrap().1["status"], "success");
    // Refused is not recorded: the same id may be sent again once there is room.
    let retry = tokio::spawn({
        let addr = addr.clone();
        async move { post_action(&addr, ORCHESTRATOR, click("q", Some("a2"))).await }
    });
    let third = host.next_action().await;
    assert_eq!(third["payload"]["actionId"], "a2");
    host.ack(&third).await;
    host.succeed(&third, json!({})).await;
    assert_eq!(retry.await.unwrap().1["status"], "success");
}

/// Posts an action in the background.
fn post_later(addr: &str, session: &str, action_id: &str) -> tokio::task::JoinHandle<(u16, Value)> {
    let (addr, body) = (addr.to_owned(), click(session, Some(action_id)));
    tokio::spawn(async move { post_action(&addr, ORCHESTRATOR, body).await })
}

#[tokio::test]
async fn a_relay_with_too_many_actions_waiting_refuses_more_yet_starts_an_idle_sessions() {
    let addr = relay_with(Settings {
        waiting_limit: 2,
        ..Settings::default()
    })
    .await;
    let mut host = TestHost::join(&addr, "browser-1").await;
    let _running = [post_later(&addr, "w1", "a0"), post_later(&addr, "w2", "b0")];
    host.next_action().await;
    host.next_action().await;
    let _waiting = [post_later(&addr, "w1", "a1"), post_later(&addr, "w2", "b1")];
    let mut orch = orchestrator(&addr).await;
    for session in ["w1", "w2"] {
        let mut polls = 0;
        while request(&mut orch, "session.get", "g", json!({ "sessionId": session })).await["payload"]
            ["queued"]
            != 1
        {
            polls += 1;
            assert!(polls < 10_000, "{session}'s second action never got queued");
        }
    }
    // Two wait in all, one per session: a third waiting anywhere is one too many.
    let (status, refused) = post_action(&addr, ORCHESTRATOR, click("w1", Some("a2"))).await;
    assert_eq!(status, 200);
    assert_eq!(refused["error"]["code"], "QUEUE_FULL", "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("2 actions waiting across its sessions"),
        "{message}"
    );
    // A session running nothing still starts its action: it waits for nothing.
    let _idle = post_later(&addr, "w3", "c0");
    let started = host.next_action().await;
    assert_eq!(started["payload"]["actionId"], "c0");
}

#[tokio::test]
async fn no_ack_in_time_is_ack_timeout_and_the_session_is_in_error() {
    let addr = relay_with(Settings {
        ack_timeout: Duration::from_millis(200),
        ..Settings::default()
    })
    .await;
    let mut host = TestHost::join(&addr, "browser-1").await;
    let post = tokio::spawn({
        let addr = addr.clone();
        async move { post_action(&addr, ORCHESTRATOR, click("t", Some("a1"))).await }
    });
    let action = host.next_action().await;
    let (_, result) = post.await.unwrap();
    assert_eq!(result["error"]["code"], "ACK_TIMEOUT", "{result}");
    // A late answer is dropped: the action already has its one result.
    host.ack(&action).await;
    host.succeed(&action, json!({})).await;
    let mut orch = orchestrator(&addr).await;
    let state = request(&mut orch, "session.get", "g", json!({ "sessionId": "t" })).await;
    assert_eq!(state["payload"]["status"], "error");
    assert_eq!(state["payload"]["lastError"]["code"], "ACK_TIMEOUT");
    // The next successful action leaves the error state.
    let next = tokio::spawn({
        let addr = addr.clone();
        async move { post_action(&addr, ORCHESTRATOR, click("t", Some("a2"))).await }
    });
    let action = host.next_action().await;
    assert_eq!(action["payload"]["actionId"], "a2");
    host.ack(&action).await;
    host.succeed(&action, json!({})).await;
    assert_eq!(next.await.unwrap().1["status"], "success");
    let state = request(&mut orch, "session.get", "g2", json!({ "sessionId": "t" })).await;
    assert_eq!(state["payload"]["status"], "ongoing");
}

#[tokio::test]
async fn an_acked_action_without_result_is_action_timeout_after_its_timeout_ms() {
    let addr = relay().await;
    let mut host = TestHost::join(&addr, "browser-1").await;
    let post = tokio::spawn({
        let addr = addr.clone();
        let mut body = click("t", Some("a1"));
        body["timeoutMs"] = json!(300);
        async move { post_action(&addr, ORCHESTRATOR, body).await }
    });
    let action = host.next_action().await;
    assert!(action["payload"]["timeoutMs"].as_u64().unwrap() <= 300);
    host.ack(&action).await;
    let (_, result) = post.await.unwrap();
    assert_eq!(result["error"]["code"], "ACTION_TIMEOUT", "{result}");
    assert!(result["durationMs"].as_u64().unwrap() >= 290, "{result}");
}

#[tokio::test]
async fn a_host_that_drops_its_link_mid_action_gives_client_offline() {
    let addr = relay().await;
    let mut host = TestHost::join(&addr, "browser-1").await;
    let mut orch = orchestrator(&addr).await;
    let run = tokio::spawn(async move { act(&mut orch, "r1", click("s", Some("a1"))).await });
    let action = host.next_action().await;
    host.ack(&action).await;
    drop(host);
    let (ack, result) = run.await.unwrap();
    assert!(ack.is_some());
    assert_eq!(result["payload"]["error"]["code"], "CLIENT_OFFLINE", "{result}");
    assert_eq!(result["payload"]["clientId"], "browser-1");
    // While it is away, actions for it fail at once, without waiting for a timeout.
    let (_, body) = post_action(&addr, ORCHESTRATOR, click("s", Some("a2"))).await;
    assert_eq!(body["error"]["code"], "CLIENT_OFFLINE");
}

#[tokio::test]
async fn a_repeated_action_id_is_answered_from_the_first_run() {
    let addr = relay().await;
    let mut host = TestHost::join(&addr, "browser-1").await;
    let first = tokio::spawn({
        let addr = addr.clone();
        async move { post_action(&addr, ORCHESTRATOR, click("idem", Some("same"))).await }
    });
    let action = host.next_action().await;
    // A repeat while the first is in flight is acked at once and waits for the same result.
    let mut orch = orchestrator(&addr).await;
    send(
        &mut orch,
        envelope("browser_action", "repeat", click("idem", Some("same"))),
    )
    .await;
    let ack = recv_type(&mut orch, "browser_action.ack").await;
    assert_eq!(ack["replyTo"], "repeat");
    let state = request(&mut orch, "session.get", "g", json!({ "sessionId": "idem" })).await;
    assert_eq!(
        state["payload"]["queued"], 0,
        "a repeat is never queued to run again"
    );
    host.ack(&action).await;
    host.succeed(&action, json!({ "runs": 1 })).await;
    let (_, original) = first.await.unwrap();
    let repeated = recv_type(&mut orch, "browser_action.result").await;
    assert_eq!(repeated["replyTo"], "repeat");
    let repeated = &repeated["payload"];
    assert_eq!(original["result"], json!({ "runs": 1 }));
    assert!(original.get("replayed").is_none());
    assert_eq!(repeated["result"], json!({ "runs": 1 }));
    assert_eq!(repeated["replayed"], true);
    // A repeat after the end returns the stored result without running again.
    let (_, replay) = post_action(&addr, ORCHESTRATOR, click("idem", Some("same"))).await;
    assert_eq!(
        (replay["replayed"].as_bool(), &replay["result"]),
        (Some(true), &json!({ "runs": 1 }))
    );
    assert_eq!(replay["startedAt"], original["startedAt"]);
    // The same id in another session is another action.
    let other = tokio::spawn({
        let addr = addr.clone();
        async move { post_action(&addr, ORCHESTRATOR, click("idem-2", Some("same"))).await }
    });
    let action = host.next_action().await;
    assert_eq!(action["payload"]["sessionId"], "idem-2");
    host.ack(&action).await;
    host.succeed(&action, json!({ "runs": 2 })).await;
    assert_eq!(other.await.unwrap().1["result"], json!({ "runs": 2 }));
}

#[tokio::test]
async fn with_no_host_or_two_the_session_waits_for_a_browser_selection() {
    let addr = relay().await;
    let (_, body) = post_action(&addr, ORCHESTRATOR, click("pick", None)).await;
    assert_eq!(body["error"]["code"], "NO_CLIENT_SELECTED", "{body}");
    assert!(
        body["actionId"].as_str().is_some_and(|id| !id.is_empty()),
        "the relay assigns an actionId"
    );
    let _a = TestHost::join(&addr, "browser-a").await.serve_echo();
    let _b = TestHost::join(&addr, "browser-b").await.serve_echo();
    let (_, body) = post_action(&addr, ORCHESTRATOR, click("pick", None)).await;
    assert_eq!(body["error"]["code"], "NO_CLIENT_SELECTED");
    assert!(body["error"]["message"].as_str().unwrap().contains("2 browsers"));
    let mut orch = orchestrator(&addr).await;
    let state = request(&mut orch, "session.get", "g", json!({ "sessionId": "pick" })).await;
    assert_eq!(state["payload"]["status"], "waiting_for_browser_selection");
    let bound = request(
        &mut orch,
        "session.bind",
        "b",
        json!({ "sessionId": "pick", "clientId": "browser-b" }),
    )
    .await;
    assert_eq!(bound["type"], "session.bound");
    assert_eq!(
        bound["payload"],
        json!({ "sessionId": "pick", "clientId": "browser-b" })
    );
    let (_, body) = post_action(&addr, ORCHESTRATOR, click("pick", None)).await;
    assert_eq!(
        (body["status"].as_str(), body["clientId"].as_str()),
        (Some("success"), Some("browser-b"))
    );
    // An action may name its browser itself.
    let mut direct = click("other", None);
    direct["clientId"] = json!("browser-a");
    assert_eq!(
        post_action(&addr, ORCHESTRATOR, direct).await.1["clientId"],
        "browser-a"
    );
    // Binding to a browser that never joined is refused.
    let refused = request(
        &mut orch,
        "session.bind",
        "b2",
        json!({ "sessionId": "pick", "clientId": "nobody" }),
    )
    .await;
    assert_eq!(refused["payload"]["code"], "INVALID_PARAMS");
}

#[tokio::test]
async fn the_only_host_online_is_bound_automatically() {
    let addr = relay().await;
    let _host = TestHost::join(&addr, "solo").await.serve_echo();
    let (_, body) = post_action(&addr, ORCHESTRATOR, click("auto", None)).await;
    assert_eq!(
        (body["status"].as_str(), body["clientId"].as_str()),
        (Some("success"), Some("solo"))
    );
    let list = common::client::get_json(&addr, "/api/extension/extension-list").await;
    assert_eq!(list["clients"][0]["sessions"], json!(["auto"]));
}

#[tokio::test]
async fn http_answers_every_named_action_with_a_result_and_malformed_bodies_with_400() {
    let addr = relay().await;
    let _host = TestHost::join(&addr, "browser-1").await.serve_echo();
    let (status, body) = post_action(
        &addr,
        ORCHESTRATOR,
        json!({ "sessionId": "h", "actionName": "browser_fly", "params": {} }),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (200, Some("UNKNOWN_ACTION"))
    );
    assert_eq!(body["status"], "error");
    let (status, body) = post_action(
        &addr,
        ORCHESTRATOR,
        json!({ "sessionId": "h", "actionName": "browser_click", "params": { "tabId": "x" } }),
    )
    .await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (200, Some("INVALID_PARAMS"))
    );
    let (status, body) = post_action(&addr, ORCHESTRATOR, json!({ "sessionId": "h", "actionName": "browser_click", "params": { "tabId": 1, "xpath": "//a" }, "timeoutMs": -5 })).await;
    assert_eq!(
        (status, body["error"]["code"].as_str()),
        (200, Some("INVALID_PARAMS"))
    );
    for bad in [
        json!({ "actionName": "browser_click" }),
        json!({ "sessionId": "h" }),
        json!([1, 2]),
    ] {
        let (status, body) = post_action(&addr, ORCHESTRATOR, bad).await;
        assert_eq!((status, body["code"].as_str()), (400, Some("INVALID_MESSAGE")));
    }
    let response = tether_tests::client::own_http()
        .post(format!("http://{addr}/api/browser/action"))
        .bearer_auth(ORCHESTRATOR)
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);
    let (status, body) = post_action(&addr, HOST, click("h", None)).await;
    assert_eq!((status, body["code"].as_str()), (403, Some("FORBIDDEN")));
    let (status, body) = post_action(&addr, "wrong", click("h", None)).await;
    assert_eq!((status, body["code"].as_str()), (401, Some("UNAUTHORIZED")));
}

#[tokio::test]
async fn a_stopped_session_refuses_actions_until_it_starts_again() {
    let addr = relay().await;
    let _host = TestHost::join(&addr, "browser-1").await.serve_echo();
    let stop = json!({ "sessionId": "life", "actionName": "session_stop", "params": {} });
    assert_eq!(
        post_action(&addr, ORCHESTRATOR, stop).await.1["status"],
        "success"
    );
    let mut orch = orchestrator(&addr).await;
    let state = request(&mut orch, "session.get", "g", json!({ "sessionId": "life" })).await;
    assert_eq!(state["payload"]["status"], "completed");
    let (_, body) = post_action(&addr, ORCHESTRATOR, click("life", None)).await;
    assert_eq!(body["error"]["code"], "SESSION_NOT_ACTIVE");
    let start = json!({ "sessionId": "life", "actionName": "session_start", "params": {} });
    assert_eq!(
        post_action(&addr, ORCHESTRATOR, start).await.1["status"],
        "success"
    );
    assert_eq!(
        post_action(&addr, ORCHESTRATOR, click("life", None)).await.1["status"],
        "success"
    );
}

#[tokio::test]
async fn an_action_error_of_the_page_does_not_put_the_session_in_error() {
    let addr = relay().await;
    let mut host = TestHost::join(&addr, "browser-1").await;
    let post = tokio::spawn({
        let addr = addr.clone();
        async move { post_action(&addr, ORCHESTRATOR, click("page", None)).await }
    });
    let action = host.next_action().await;
    host.ack(&action).await;
    host.fail(&action, "ELEMENT_NOT_FOUND", "no such button").await;
    let (_, body) = post.await.unwrap();
    assert_eq!(body["error"]["code"], "ELEMENT_NOT_FOUND");
    let mut orch = orchestrator(&addr).await;
    let state = request(&mut orch, "session.get", "g", json!({ "sessionId": "page" })).await;
    assert_eq!(state["payload"]["status"], "ongoing");
    assert_eq!(state["payload"]["lastError"]["code"], "ELEMENT_NOT_FOUND");
}
