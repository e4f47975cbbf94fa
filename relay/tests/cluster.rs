//! A deployment of three real relay processes on a real `nats-server` (docs/protocol.md §14):
//! actions reach hosts on other relays, in order, once each; an `actionId` repeats across
//! relays; a relay killed with SIGKILL under a running action loses nothing.
//!
//! The hosts are the real host's link (`tether_host::modes::relay_link`) in front of a browser
//! stand-in that counts what it runs, so "ran once" is the browser's word, not the relay's.

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use common::client::{envelope, orchestrator, post_action, SseStream};
use common::counting::{host, CountingBrowser, HELD};
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tether_tests::nats::NatsServer;
use tether_tests::process::RelayProcess;
use tokio_tungstenite::tungstenite::Message;

const SESSIONS: usize = 20;
const ACTIONS: usize = 20;
/// How soon a host whose relay died must be serving on another (the issue's bound).
const BACK_WITHIN: Duration = Duration::from_secs(5);
const JOIN_WITHIN: Duration = Duration::from_secs(20);

fn click(session: &str, client: &str, action_id: &str, params: Value) -> Value {
    json!({ "sessionId": session, "clientId": client, "actionId": action_id,
            "actionName": "browser_click", "params": params })
}

fn plain() -> Value {
    json!({ "tabId": 1, "xpath": "//a" })
}

/// A nats-server, three relays of one deployment on it (each with `args` too), and a browser
/// stand-in for the hosts.
async fn deployment(args: &[&str]) -> (NatsServer, Vec<RelayProcess>, Arc<CountingBrowser>) {
    let nats = NatsServer::start().await;
    let relays = nats.relays(3, args).await;
    (nats, relays, Arc::new(CountingBrowser::default()))
}

/// Starts the host `client_id`, joining the relays `on` in that order, and waits until the
/// last relay of the deployment lists it online.
async fn serve(relays: &[RelayProcess], on: &[usize], client_id: &str, browser: &Arc<CountingBrowser>) {
    let addrs: Vec<&str> = on.iter().map(|&r| relays[r].addr.as_str()).collect();
    host(&addrs, client_id, browser.clone());
    relays[relays.len() - 1]
        .api()
        .wait_online(client_id, JOIN_WITHIN)
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_over_three_relays_loses_nothing_doubles_nothing_and_keeps_order() {
    let (_nats, relays, browser) = deployment(&[]).await;
    // Each host on a relay of its own; the third relay holds no host.
    serve(&relays, &[0], "host-0", &browser).await;
    serve(&relays, &[1], "host-1", &browser).await;
    // Session s is driven through relay s % 3, on host s % 2: most actions cross two relays.
    let mut drivers = Vec::new();
    for (r, relay) in relays.iter().enumerate() {
        let actions: Vec<(String, Value)> = (0..ACTIONS)
            .flat_map(|n| (0..SESSIONS).filter(move |s| s % 3 == r).map(move |s| (s, n)))
            .map(|(s, n)| {
                let id = format!("{s}-{n}");
                let payload = click(&format!("load-{s}"), &format!("host-{}", s % 2), &id, plain());
                (id, payload)
            })
            .collect();
        let addr = relay.addr.clone();
        drivers.push(tokio::spawn(async move { exchange(&addr, actions).await }));
    }
    let mut results = HashMap::new();
    for driver in drivers {
        for (id, result) in driver.await.unwrap() {
            assert!(
                results.insert(id, result).is_none(),
                "two results for one request"
            );
        }
    }
    assert_eq!(results.len(), SESSIONS * ACTIONS, "every action has its result");
    for (id, result) in &results {
        assert_eq!(result["status"], "success", "{id}: {result}");
    }
    let ran = browser.ran.lock().unwrap().clone();
    assert_eq!(ran.len(), SESSIONS * ACTIONS, "each action ran once");
    for s in 0..SESSIONS {
        let order: Vec<String> = ran
            .iter()
            .filter(|(session, _)| *session == format!("load-{s}"))
            .map(|(_, action)| action.clone())
            .collect();
        let sent: Vec<String> = (0..ACTIONS).map(|n| format!("{s}-{n}")).collect();
        assert_eq!(order, sent, "session load-{s} ran in the order sent");
    }
}

/// Sends `actions` in order on one orchestrator socket; every result, by request id.
async fn exchange(addr: &str, actions: Vec<(String, Value)>) -> Vec<(String, Value)> {
    let expected = actions.len();
    let (mut sink, mut stream) = orchestrator(addr).await.split();
    let sending = tokio::spawn(async move {
        for (id, payload) in actions {
            let frame = envelope("browser_action", &id, payload).to_string();
            sink.feed(Message::Text(frame.into())).await.unwrap();
        }
        sink.flush().await.unwrap();
        sink
    });
    let mut results = Vec::new();
    while results.len() < expected {
        let next = tokio::time::timeout(JOIN_WITHIN, stream.next()).await;
        let Ok(Some(Ok(Message::Text(text)))) = next else {
            panic!("the relay stopped answering after {} results", results.len());
        };
        let reply: Value = serde_json::from_str(&text).unwrap();
        if reply["type"] == "browser_action.result" {
            results.push((
                reply["replyTo"].as_str().unwrap().to_owned(),
                reply["payload"].clone(),
            ));
        }
    }
    drop(sending.await);
    results
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_action_id_repeated_on_another_relay_gets_the_same_result() {
    let (_nats, relays, browser) = deployment(&[]).await;
    serve(&relays, &[0], "shop", &browser).await;

    let action = click("repeat", "shop", "pay-once", plain());
    let token = common::ORCHESTRATOR;
    let (status, first) = post_action(&relays[1].addr, token, action.clone()).await;
    assert_eq!(
        (status, first["status"].as_str()),
        (200, Some("success")),
        "{first}"
    );
    let (_, again) = post_action(&relays[2].addr, token, action).await;
    assert_eq!(again["replayed"], true, "{again}");
    assert_eq!(
        again["startedAt"], first["startedAt"],
        "the stored result: {again}"
    );
    assert_eq!(browser.ran("pay-once"), 1, "the browser ran it once");

    // The session's state and binding read the same from every relay.
    for relay in &relays {
        let state = relay.api().get("/api/sessions/repeat").await;
        assert_eq!(
            (state["status"].as_str(), state["clientId"].as_str()),
            (Some("ongoing"), Some("shop")),
            "{state}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_killed_under_a_running_action_ends_it_once_and_the_host_moves_on() {
    let (_nats, mut relays, browser) = deployment(&[]).await;
    let addrs: Vec<String> = relays.iter().map(|r| r.addr.clone()).collect();
    serve(&relays, &[0, 1, 2], "desk", &browser).await;
    let token = common::ORCHESTRATOR;

    // The orchestrator is on relay 2; the host is on relay 0, holding the action.
    let held = click(
        "desk-work",
        "desk",
        "long-one",
        json!({ "tabId": 1, "xpath": HELD }),
    );
    let holding = browser.holding();
    let orchestrator_relay = addrs[2].clone();
    let mut running = tokio::spawn(async move { post_action(&orchestrator_relay, token, held).await });
    tokio::select! {
        _ = holding => {}
        ended = &mut running => panic!("the action ended before it ran: {ended:?}"),
    }
    let killed = relays.remove(0).kill9().await;
    let killed_at = tokio::time::Instant::now();

    // A probe through relay 1 succeeds once the host serves again (on relay 1 or 2).
    let api = relays[0].api();
    let mut probes = 0;
    let back = tokio::time::timeout(BACK_WITHIN, async {
        loop {
            probes += 1;
            let probe = click("probe", "desk", &format!("probe-{probes}"), plain());
            let (_, result) = post_action(&api.addr.to_string(), token, probe).await;
            if result["status"] == "success" {
                return;
            }
            assert_eq!(result["error"]["code"], "CLIENT_OFFLINE", "{result}");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await;
    assert!(
        back.is_ok(),
        "the host was not back on another relay within {BACK_WITHIN:?}"
    );
    let waited = killed_at.elapsed();

    browser.release();
    let (status, result) = running.await.unwrap();
    assert_eq!(
        (status, result["status"].as_str()),
        (200, Some("success")),
        "one result: {result}"
    );
    assert_eq!(browser.ran("long-one"), 1, "it ran once");
    // The session goes on.
    let next = click("desk-work", "desk", "after", plain());
    let (_, after) = post_action(&addrs[2], token, next).await;
    assert_eq!(after["status"], "success", "{after}");
    drop(killed);
    eprintln!("the host served again {} ms after the kill", waited.as_millis());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_events_stream_from_any_relay_and_replay_there() {
    let (_nats, relays, browser) = deployment(&[]).await;
    serve(&relays, &[0], "reader", &browser).await;
    let token = common::ORCHESTRATOR;

    // The host is on relay 0, the orchestrator on relay 1, the event stream on relay 2.
    let mut stream = SseStream::open(&relays[2].addr, "watched", None).await;
    assert_eq!(stream.next().await.unwrap().0, "connection");
    let (_, first) = post_action(&relays[1].addr, token, click("watched", "reader", "one", plain())).await;
    let started = stream.next_of("action.started").await;
    assert_eq!(started.2["data"]["actionId"], "one");
    let (_, first_id, first_event) = stream.next_of("browser_action.result").await;
    assert_eq!(first_event["data"], first);
    let first_id = first_id.expect("events carry their eventIndex");
    drop(stream);

    // Missed while away, read back on a relay that neither owns the session nor holds its host.
    let (_, second) = post_action(&relays[1].addr, token, click("watched", "reader", "two", plain())).await;
    let mut resumed = SseStream::open(&relays[0].addr, "watched", Some(first_id)).await;
    assert_eq!(resumed.next().await.unwrap().0, "connection");
    let (_, second_id, replayed) = resumed.next_of("browser_action.result").await;
    assert_eq!(replayed["data"], second);
    assert!(second_id.unwrap() > first_id);
    let (_, third) = post_action(
        &relays[2].addr,
        token,
        click("watched", "reader", "three", plain()),
    )
    .await;
    let (_, third_id, live) = resumed.next_of("browser_action.result").await;
    assert_eq!(live["data"], third, "then live, none doubled");
    assert!(third_id.unwrap() > second_id.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_person_answers_a_confirmation_on_any_relay() {
    let (_nats, relays, browser) = deployment(&["--confirm", "every"]).await;
    serve(&relays, &[0], "asked", &browser).await;

    // The action goes through relay 1, which asks; the person watches and answers on relay 2.
    let mut watching = SseStream::open(&relays[2].addr, "careful", None).await;
    let orchestrator_relay = relays[1].addr.clone();
    let running = tokio::spawn(async move {
        post_action(
            &orchestrator_relay,
            common::ORCHESTRATOR,
            click("careful", "asked", "risky", plain()),
        )
        .await
    });
    let (_, _, asked) = watching.next_of("browser_task.confirmation_requested").await;
    let request_id = asked["data"]["requestId"].as_str().unwrap().to_owned();
    assert_eq!(browser.ran("risky"), 0, "nothing runs before the answer");
    let mut person = orchestrator(&relays[2].addr).await;
    let answer = json!({ "requestId": request_id, "approved": true });
    let confirmed = common::client::request(&mut person, "browser_task.confirm", "c", answer).await;
    assert_eq!(confirmed["type"], "browser_task.confirmed", "{confirmed}");
    let (_, result) = running.await.unwrap();
    assert_eq!(result["status"], "success", "{result}");
    assert_eq!(browser.ran("risky"), 1);

    // An answer nobody waits for is refused, on any relay.
    let again = json!({ "requestId": request_id, "approved": true });
    let late = common::client::request(&mut person, "browser_task.confirm", "d", again).await;
    assert_eq!(late["payload"]["code"], "INVALID_PARAMS", "{late}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_artifact_stored_on_one_relay_is_fetched_from_any_with_its_presigned_link() {
    let nats = NatsServer::start().await;
    let relays = nats.relays(3, &[]).await;
    let http = tether_tests::client::own_http();
    // Bigger than a NATS message (1 MiB): it travels in chunks.
    let bytes: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    let stored: Value = http
        .put(format!("http://{}/artifacts", relays[0].addr))
        .bearer_auth(common::HOST)
        .header("content-type", "image/png")
        .body(bytes.clone())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let url = stored["url"].as_str().expect("a presigned url");
    let path_and_query = &url[url.find("/artifacts/").unwrap()..];
    for relay in &relays[1..] {
        let fetched = http
            .get(format!("http://{}{path_and_query}", relay.addr))
            .send()
            .await
            .unwrap();
        assert_eq!(fetched.status().as_u16(), 200, "on {}", relay.addr);
        assert_eq!(fetched.headers()["content-type"], "image/png");
        assert!(fetched.bytes().await.unwrap() == bytes, "the same bytes");
    }
    let forged = path_and_query.replace("sig=", "sig=00");
    let refused = http
        .get(format!("http://{}{forged}", relays[2].addr))
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status().as_u16(), 403);
    // Each relay of the deployment says its link is up.
    for relay in &relays {
        let metrics = common::client::metrics(&relay.addr, common::ORCHESTRATOR).await;
        assert!(
            metrics.contains(r#"tether_nats_connected{link="nats"} 1"#),
            "{metrics}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_whose_relay_dies_is_taken_over_with_its_journal() {
    let (_nats, mut relays, browser) = deployment(&[]).await;
    // The browser is on relay 1 only: when relay 1 dies, nothing but the journal can answer.
    serve(&relays, &[1], "steady", &browser).await;
    let token = common::ORCHESTRATOR;

    // Relay 1 takes the session with its first action, then dies.
    let first = click("orphan", "steady", "first", plain());
    let (_, done) = post_action(&relays[1].addr, token, first.clone()).await;
    assert_eq!(done["status"], "success", "{done}");
    drop(relays.remove(1).kill9().await);

    // The orchestrator repeats on another relay: the same result, from the session's journal.
    let (_, again) = post_action(&relays[1].addr, token, first).await;
    assert_eq!(
        (again["replayed"].as_bool(), &again["startedAt"]),
        (Some(true), &done["startedAt"]),
        "{again}"
    );
    assert_eq!(browser.ran("first"), 1, "not run again");
    let state = relays[0].api().get("/api/sessions/orphan").await;
    assert_eq!(
        (state["status"].as_str(), state["clientId"].as_str()),
        (Some("ongoing"), Some("steady")),
        "{state}"
    );
    // Its browser went down with the relay: the next action says so.
    let (_, next) = post_action(&relays[0].addr, token, click("orphan", "steady", "next", plain())).await;
    assert_eq!(next["error"]["code"], "CLIENT_OFFLINE", "{next}");
}
