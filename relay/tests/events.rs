//! What subscribers see (docs/protocol.md §2.4, §3, §7): WS `subscribe`, the SSE stream with its
//! replay from the session log, the twin and its Live Screen, talk beside the actions,
//! metrics, and the session log itself.

mod common;

use common::client::{
    connect, envelope, join, orchestrator, post_action, recv, recv_type, request, send, SseStream, Ws,
};
use common::test_host::TestHost;
use common::{start, HOST, OBSERVER, ORCHESTRATOR};
use serde_json::{json, Value};
use tether_relay::config::Settings;
use tether_relay::stores::artifacts::Limits;

fn click(session: &str) -> Value {
    json!({ "sessionId": session, "actionName": "browser_click", "params": { "tabId": 1, "xpath": "//a" } })
}

#[tokio::test]
async fn sse_streams_a_sessions_events_and_replays_them_after_last_event_id() {
    let (addr, _) = start(Settings::default(), Limits::default()).await;
    let addr = addr.to_string();
    let _host = TestHost::join(&addr, "browser-1").await.serve_echo();
    let mut stream = SseStream::open(&addr, "sse", None).await;
    let (kind, id, connection) = stream.next().await.unwrap();
    assert_eq!((kind.as_str(), id), ("connection", None));
    assert_eq!(connection["type"], "connection");
    assert_eq!(connection["data"]["sessionId"], "sse");
    assert!(
        connection["timestamp"].as_i64().unwrap() > 1_700_000_000_000,
        "Unix milliseconds"
    );

    let (_, result) = post_action(&addr, ORCHESTRATOR, click("sse")).await;
    let started = stream.next_of("action.started").await;
    assert_eq!(started.2["data"]["actionId"], result["actionId"]);
    assert_eq!(started.2["data"]["clientId"], "browser-1");
    let (_, result_id, result_event) = stream.next_of("browser_action.result").await;
    assert_eq!(result_event["type"], "browser_action.result");
    assert_eq!(result_event["data"], result);
    let result_id = result_id.expect("logged events carry their eventIndex");

    // A second action while no one listens; a client that comes back after the first
    // result gets what it missed, then live events, with none doubled.
    drop(stream);
    let (_, second) = post_action(&addr, ORCHESTRATOR, click("sse")).await;
    let mut resumed = SseStream::open(&addr, "sse", Some(result_id)).await;
    assert_eq!(resumed.next().await.unwrap().0, "connection");
    let mut ids = Vec::new();
    let replayed = loop {
        let (kind, id, event) = resumed.next().await.unwrap();
        ids.push(id.expect("replayed events carry their index"));
        if kind == "browser_action.result" {
            break event;
        }
    };
    assert!(ids.iter().all(|id| *id > result_id), "{ids:?} after {result_id}");
    assert_eq!(replayed["data"], second);
    let (_, third) = post_action(&addr, ORCHESTRATOR, click("sse")).await;
    let (_, live_id, live) = resumed.next_of("browser_action.result").await;
    assert_eq!(live["data"], third);
    assert!(live_id.unwrap() > *ids.last().unwrap());

    // session_stop completes the session and ends the stream.
    let stop = json!({ "sessionId": "sse", "actionName": "session_stop", "params": {} });
    post_action(&addr, ORCHESTRATOR, stop).await;
    let mut statuses = Vec::new();
    while statuses.last().map(String::as_str) != Some("completed") {
        let state = resumed.next_of("session.state").await;
        statuses.push(state.2["data"]["status"].as_str().unwrap().to_owned());
    }
    assert_eq!(statuses, ["ongoing", "running", "completed"]);
    assert_eq!(resumed.next().await.unwrap().0, "stream_end");
    assert!(resumed.next().await.is_none(), "the stream ends after stream_end");
}

#[tokio::test]
async fn sse_sends_heartbeats_when_idle() {
    let settings = Settings {
        heartbeat: std::time::Duration::from_millis(50),
        ..Settings::default()
    };
    let (addr, _) = start(settings, Limits::default()).await;
    let mut stream = SseStream::open(&addr.to_string(), "quiet", None).await;
    assert_eq!(stream.next().await.unwrap().0, "connection");
    let (kind, id, heartbeat) = stream.next().await.unwrap();
    assert_eq!((kind.as_str(), id), ("heartbeat", None));
    assert_eq!(heartbeat["data"], json!({}));
}

async fn subscribed(addr: &str, payload: Value) -> Ws {
    let mut ws = orchestrator(addr).await;
    let reply = request(&mut ws, "subscribe", "sub", payload).await;
    assert_eq!(reply["type"], "subscribed", "{reply}");
    ws
}

fn tab(id: i64, window: i64, url: &str, title: &str, active: bool) -> Value {
    json!({ "tabId": id, "windowId": window, "url": url, "title": title, "active": active, "status": "complete" })
}

#[tokio::test]
async fn the_twin_follows_the_hosts_reports_and_is_pushed_to_subscribers() {
    let (addr, _) = start(Settings::default(), Limits::default()).await;
    let addr = addr.to_string();
    let mut watcher = subscribed(&addr, json!({ "clientId": "browser-1" })).await;
    let mut host = TestHost::join(&addr, "browser-1").await;
    assert_eq!(recv(&mut watcher).await["type"], "client.online");
    let state = json!({
        "windows": [{ "windowId": 1, "focused": true }],
        "tabs": [tab(10, 1, "https://example.org/", "Example", true)],
        "groups": [],
    });
    host.report("full_state_sync", state).await;
    let sync = recv_type(&mut watcher, "twin_state_sync").await;
    let first_version = sync["payload"]["version"].as_u64().unwrap();
    assert_eq!(sync["payload"]["clientId"], "browser-1");
    assert_eq!(sync["payload"]["activeTabId"], 10);
    host.report(
        "tab_event",
        json!({ "event": "created", "tab": tab(11, 1, "https://tether.dev/", "Tether", false) }),
    )
    .await;
    host.report(
        "tab_event",
        json!({ "event": "group_updated", "group": { "groupId": 5, "title": "Agent" } }),
    )
    .await;
    host.report(
        "tab_event",
        json!({ "event": "updated", "tab": { "tabId": 11, "windowId": 1, "groupId": 5, "url": "https://tether.dev/docs", "title": "Docs", "active": false, "status": "loading" } }),
    )
    .await;
    host.report("tab_event", json!({ "event": "removed", "tabId": 10 }))
        .await;
    let mut last = Value::Null;
    for _ in 0..4 {
        last = recv_type(&mut watcher, "twin_state_sync").await;
    }
    let twin = &last["payload"];
    assert_eq!(twin["version"].as_u64().unwrap(), first_version + 4);
    assert_eq!(twin["tabs"].as_array().unwrap().len(), 1);
    assert_eq!(twin["tabs"][0]["url"], "https://tether.dev/docs");
    assert_eq!(twin["tabs"][0]["groupId"], 5);

    // The same twin over HTTP, over twin.get, and as a Live Screen.
    let client = tether_tests::client::own_http();
    let get = |path: String| {
        client
            .get(format!("http://{addr}{path}"))
            .bearer_auth(ORCHESTRATOR)
            .send()
    };
    let json_twin: Value = get("/api/twin/browser-1".into())
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(&json_twin, twin);
    let over_ws = request(&mut watcher, "twin.get", "t", json!({ "clientId": "browser-1" })).await;
    assert_eq!(&over_ws["payload"], twin);
    let live = get("/api/twin/browser-1.md".into())
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(live.contains("## Browser `browser-1`"), "{live}");
    assert!(
        live.contains("tab 11 \"Docs\" https://tether.dev/docs (loading) [group \"Agent\"]"),
        "{live}"
    );
    assert!(!live.contains("Recent changes"));
    let recent = get("/api/twin/browser-1.md?detail=recent".into())
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        recent.contains("### Recent changes") && recent.contains("tab 10 closed"),
        "{recent}"
    );
    let gist = get("/api/twin/browser-1.md?detail=gist".into())
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(gist.lines().count(), 1, "{gist}");
    assert!(gist.contains("1 tabs in 1 windows"), "{gist}");
    let unknown = get("/api/twin/nobody".into()).await.unwrap();
    assert_eq!(unknown.status().as_u16(), 404);

    // A report the relay cannot read is refused, and the twin stays as it was.
    host.report("tab_event", json!({ "event": "removed" })).await;
    let error = recv_type(&mut host.ws, "error").await;
    assert_eq!(error["payload"]["code"], "INVALID_MESSAGE");
    drop(host);
    assert_eq!(
        recv_type(&mut watcher, "client.offline").await["payload"]["clientId"],
        "browser-1"
    );
}

#[tokio::test]
async fn ws_subscribers_see_a_sessions_lifecycle() {
    let (addr, _) = start(Settings::default(), Limits::default()).await;
    let addr = addr.to_string();
    let _host = TestHost::join(&addr, "browser-1").await.serve_echo();
    let mut watcher = subscribed(&addr, json!({ "sessionId": "life" })).await;
    let (_, result) = post_action(&addr, ORCHESTRATOR, click("life")).await;
    let mut kinds = Vec::new();
    loop {
        let event = recv(&mut watcher).await;
        kinds.push(event["type"].as_str().unwrap().to_owned());
        if event["type"] == "browser_action.result" {
            assert_eq!(event["payload"], result);
            break;
        }
    }
    assert_eq!(
        kinds,
        ["session.state", "action.started", "browser_action.result"]
    );
    let state = recv_type(&mut watcher, "session.state").await;
    assert_eq!(state["payload"]["status"], "ongoing");
}

#[tokio::test]
async fn metrics_count_actions_by_name_and_outcome() {
    let (addr, _) = start(Settings::default(), Limits::default()).await;
    let addr = addr.to_string();
    let _host = TestHost::join(&addr, "browser-1").await.serve_echo();
    post_action(&addr, ORCHESTRATOR, click("m")).await;
    post_action(
        &addr,
        ORCHESTRATOR,
        json!({ "sessionId": "m", "actionName": "nope" }),
    )
    .await;
    let client = tether_tests::client::own_http();
    let response = client.get(format!("http://{addr}/metrics")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 401);
    let text = common::client::metrics(&addr, ORCHESTRATOR).await;
    assert!(
        text.contains(r#"tether_actions_total{action="browser_click",outcome="success"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(r#"tether_actions_total{action="unknown",outcome="UNKNOWN_ACTION"} 1"#),
        "{text}"
    );
    assert!(text.contains("tether_hosts_online 1"), "{text}");
    assert!(text.contains("tether_action_duration_seconds_bucket"), "{text}");
    // Every family, with its labels, after a few actions.
    for line in [
        "tether_actions_queued 0",
        r#"tether_sessions{status="running"} 0"#,
        r#"tether_sessions{status="ongoing"} 1"#,
        "tether_artifacts 0",
        "tether_artifacts_bytes 0",
        "tether_event_subscribers 0",
        "# UNIT tether_store_bytes bytes",
    ] {
        assert!(text.contains(line), "{line} in {text}");
    }
    let store: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("tether_store_bytes "))
        .unwrap()
        .parse()
        .unwrap();
    assert!(store > 0, "the database has a size: {text}");
    assert!(
        !text.contains("tether_nats_connected{"),
        "a relay on its own has no NATS link"
    );
}

#[tokio::test]
async fn the_session_log_holds_each_envelope_of_the_session_in_order() {
    let (addr, data) = start(Settings::default(), Limits::default()).await;
    let addr = addr.to_string();
    let _host = TestHost::join(&addr, "browser-1").await.serve_echo();
    let mut orch = orchestrator(&addr).await;
    send(&mut orch, envelope("browser_action", "r1", click("logged"))).await;
    let result = recv_type(&mut orch, "browser_action.result").await;
    let text = std::fs::read_to_string(data.join("logs/logged.jsonl")).unwrap();
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "browser_action",
            "session.state",
            "action.started",
            "browser_action.ack",
            "browser_action.result",
            "session.state"
        ]
    );
    for (i, line) in lines.iter().enumerate() {
        assert_eq!(line["eventIndex"], i as u64);
        assert_eq!(line["sessionId"], "logged");
        assert!(line["timestamp"].as_str().unwrap().ends_with('Z'));
    }
    assert_eq!(lines[0]["direction"], "in");
    assert_eq!(lines[4]["direction"], "out");
    assert_eq!(lines[4]["payload"], result["payload"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_that_stops_reading_loses_nothing_and_costs_nothing_extra() {
    const ACTIONS: usize = 3000;
    let settings = Settings {
        queue_limit: ACTIONS,
        ..Settings::default()
    };
    let (addr, _) = start(settings, Limits::default()).await;
    let addr = addr.to_string();
    let _host = TestHost::join(&addr, "browser-1").await.serve_echo();
    // A stream that is opened, then not read while far more events happen than the relay
    // keeps in memory for subscribers (4096): it falls behind and must catch up from the log.
    let mut stream = SseStream::open(&addr, "slow", None).await;
    let mut orch = orchestrator(&addr).await;
    for i in 0..ACTIONS {
        let mut action = click("slow");
        action["actionId"] = json!(format!("a{i}"));
        send(&mut orch, envelope("browser_action", &format!("r{i}"), action)).await;
    }
    let mut done = 0;
    while done < ACTIONS {
        if recv(&mut orch).await["type"] == "browser_action.result" {
            done += 1;
        }
    }
    // Now read: every result, in order, each event once.
    let mut last_id = None;
    let mut results = Vec::new();
    while results.len() < ACTIONS {
        let (kind, id, event) = stream.next().await.expect("the stream goes on");
        if let Some(id) = id {
            assert!(
                last_id.is_none_or(|last| id > last),
                "event {id} after {last_id:?}"
            );
            last_id = Some(id);
        }
        if kind == "browser_action.result" {
            assert_eq!(event["data"]["status"], "success", "{event}");
            results.push(event["data"]["actionId"].as_str().unwrap().to_owned());
        }
    }
    let expected: Vec<String> = (0..ACTIONS).map(|i| format!("a{i}")).collect();
    assert_eq!(results, expected);
}

#[tokio::test]
async fn the_agent_and_the_person_talk_beside_the_actions() {
    let (addr, _) = start(Settings::default(), Limits::default()).await;
    let addr = addr.to_string();
    let mut agent = orchestrator(&addr).await;
    request(&mut agent, "subscribe", "s", json!({ "sessionId": "talk" })).await;
    let mut person = connect(&addr).await;
    send(&mut person, join("observer", OBSERVER)).await;
    recv(&mut person).await;
    request(&mut person, "subscribe", "s", json!({ "sessionId": "talk" })).await;
    let mut sse = SseStream::open(&addr, "talk", None).await;

    let said = json!({ "sessionId": "talk", "text": "I'll compare the two offers next" });
    let receipt = request(&mut agent, "agent.message", "a1", said.clone()).await;
    assert_eq!(receipt["type"], "agent.message", "{receipt}");
    let heard = recv_type(&mut person, "agent.message").await;
    assert_eq!(heard["payload"], said);

    let answer = json!({ "sessionId": "talk", "text": "Take the cheaper one" });
    request(&mut person, "user.message", "u1", answer.clone()).await;
    assert_eq!(recv_type(&mut agent, "user.message").await["payload"], answer);
    // The agent cannot speak for the person, nor the person for the agent.
    let forged = request(&mut agent, "user.message", "u2", answer.clone()).await;
    assert_eq!(forged["payload"]["code"], "FORBIDDEN");
    let forged = request(&mut person, "agent.message", "a2", said.clone()).await;
    assert_eq!(forged["payload"]["code"], "FORBIDDEN");

    // Over HTTP, the token says who speaks; words are checked.
    let http = tether_tests::client::own_http();
    let url = format!("http://{addr}/api/sessions/talk/messages");
    for (token, text, status, kind) in [
        (
            ORCHESTRATOR,
            "Done with the first offer",
            200,
            Some("agent.message"),
        ),
        (OBSERVER, "Thanks", 200, Some("user.message")),
        (OBSERVER, "   ", 400, None),
        (HOST, "hello", 403, None),
    ] {
        let response = http
            .post(&url)
            .bearer_auth(token)
            .json(&json!({ "text": text }))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status().as_u16(), status, "{text:?}");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["type"].as_str(), kind, "{body}");
    }
    let long = "x".repeat(tether_protocol::messages::MAX_MESSAGE_CHARS + 1);
    let response = http
        .post(&url)
        .bearer_auth(OBSERVER)
        .json(&json!({ "text": long }))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 400);

    // Both are in the session's log, and on its SSE stream.
    let mut kinds = Vec::new();
    while kinds.len() < 4 {
        let (event, _, _) = sse.next().await.expect("the stream goes on");
        if event.ends_with(".message") {
            kinds.push(event);
        }
    }
    assert_eq!(
        kinds,
        ["agent.message", "user.message", "agent.message", "user.message"]
    );
}
