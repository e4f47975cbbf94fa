//! The person in control (docs/protocol.md §12) as the relay holds it: confirmations asked of a
//! person (on the relay's rule, or the browser owner's), what an observer may and may not do,
//! and an action that waits saying so.

mod common;

use common::client::{connect, join, orchestrator, post_action, recv, recv_type, request, send, Ws};
use common::test_host::TestHost;
use common::{start, OBSERVER, ORCHESTRATOR};
use serde_json::{json, Value};
use tether_relay::config::{ConfirmMode, Settings};
use tether_relay::stores::artifacts::Limits;
use tokio::task::JoinHandle;

fn click(session: &str) -> Value {
    json!({ "sessionId": session, "actionName": "browser_click", "params": { "tabId": 1, "xpath": "//a" } })
}

/// A relay that asks a person before every action; its address.
async fn asking_relay() -> String {
    let settings = Settings {
        confirm: ConfirmMode::Every,
        ..Settings::default()
    };
    start(settings, Limits::default()).await.0.to_string()
}

/// A person's console (the observer token), joined for `session` or for every session when
/// `None`, and subscribed to what it watches.
async fn console(addr: &str, session: Option<&str>) -> Ws {
    let mut console = connect(addr).await;
    let mut joining = join("observer", OBSERVER);
    if let Some(session) = session {
        joining["payload"]["sessionId"] = json!(session);
    }
    send(&mut console, joining).await;
    assert_eq!(recv(&mut console).await["type"], "relay.joined");
    request(&mut console, "subscribe", "s", json!({})).await;
    console
}

/// An orchestrator's click in `session`, posted in the background (it waits for a person);
/// its HTTP status and result.
fn click_in_background(addr: &str, session: &str) -> JoinHandle<(u16, Value)> {
    let (addr, body) = (addr.to_owned(), click(session));
    tokio::spawn(async move { post_action(&addr, ORCHESTRATOR, body).await })
}

#[tokio::test]
async fn with_confirm_every_an_action_waits_for_a_person() {
    let addr = asking_relay().await;
    let _host = TestHost::join(&addr, "browser-1").await.serve_echo();
    // The person watches through an observer (a web UI) that joined for the session.
    let mut observer = connect(&addr).await;
    let mut observe = join("observer", ORCHESTRATOR);
    observe["payload"]["sessionId"] = json!("careful");
    send(&mut observer, observe).await;
    assert_eq!(recv(&mut observer).await["payload"]["sessionId"], "careful");
    let reply = request(&mut observer, "subscribe", "s", json!({})).await;
    assert_eq!(reply["payload"]["sessionId"], "careful");

    let approved = click_in_background(&addr, "careful");
    let asked = recv_type(&mut observer, "browser_task.confirmation_requested").await;
    let p = &asked["payload"];
    assert_eq!(
        (p["sessionId"].as_str(), p["actionName"].as_str()),
        (Some("careful"), Some("browser_click"))
    );
    assert!(p["summary"].as_str().unwrap().contains("xpath=//a"), "{p}");
    let state = request(
        &mut orchestrator(&addr).await,
        "session.get",
        "g",
        json!({ "sessionId": "careful" }),
    )
    .await;
    assert_eq!(state["payload"]["status"], "waiting_for_user_confirmation");
    let confirmed = request(
        &mut observer,
        "browser_task.confirm",
        "c1",
        json!({ "requestId": p["requestId"], "approved": true }),
    )
    .await;
    assert_eq!(confirmed["type"], "browser_task.confirmed");
    assert_eq!(approved.await.unwrap().1["status"], "success");

    let denied = click_in_background(&addr, "careful");
    let asked = recv_type(&mut observer, "browser_task.confirmation_requested").await;
    let request_id = asked["payload"]["requestId"].clone();
    request(
        &mut observer,
        "browser_task.confirm",
        "c2",
        json!({ "requestId": request_id, "approved": false }),
    )
    .await;
    let (_, body) = denied.await.unwrap();
    assert_eq!(body["error"]["code"], "USER_DENIED");
    let again = request(
        &mut observer,
        "browser_task.confirm",
        "c3",
        json!({ "requestId": request_id, "approved": true }),
    )
    .await;
    assert_eq!(
        again["payload"]["code"], "INVALID_PARAMS",
        "an answered request is gone"
    );
}

#[tokio::test]
async fn an_observer_held_to_a_session_reads_only_it_and_cannot_act() {
    let (addr, _) = start(Settings::default(), Limits::default()).await;
    let addr = addr.to_string();
    let mut observer = connect(&addr).await;
    let mut observe = join("observer", OBSERVER);
    observe["payload"]["sessionId"] = json!("mine");
    send(&mut observer, observe).await;
    recv(&mut observer).await;
    for (kind, payload) in [
        ("browser_action", click("mine")),
        ("session.bind", json!({ "sessionId": "theirs", "clientId": "x" })),
        ("subscribe", json!({ "sessionId": "theirs" })),
        ("session.get", json!({ "sessionId": "theirs" })),
        ("twin.get", json!({ "clientId": "x" })),
        (
            "handoff.answer",
            json!({ "sessionId": "theirs", "actionId": "a1", "outcome": "done" }),
        ),
        (
            "handoff.input",
            json!({ "sessionId": "theirs", "actionId": "a1", "input": { "kind": "mouse", "action": "down", "x": 1, "y": 1 } }),
        ),
        ("live_view.start", json!({ "sessionId": "theirs" })),
    ] {
        let reply = request(&mut observer, kind, "r", payload.clone()).await;
        assert_eq!(reply["payload"]["code"], "FORBIDDEN", "{kind} {payload}: {reply}");
    }
    let own = request(&mut observer, "session.get", "g", json!({ "sessionId": "mine" })).await;
    assert_eq!(own["payload"]["status"], "created");
    let mine = request(&mut observer, "subscribe", "s", json!({})).await;
    assert_eq!(
        mine["payload"]["sessionId"], "mine",
        "its own session, not every one"
    );
    let list = request(&mut observer, "extension.list", "l", json!({})).await;
    assert_eq!(list["type"], "extension.list.result", "{list}");
}

#[tokio::test]
async fn the_observer_token_watches_every_session_binds_and_confirms_but_never_dispatches() {
    let addr = asking_relay().await;
    let _host = TestHost::join(&addr, "browser-1").await.serve_echo();

    // Its token joins as observer only, and dispatches nothing, over WS or HTTP.
    for role in ["orchestrator", "host"] {
        let mut ws = connect(&addr).await;
        let mut joining = join(role, OBSERVER);
        joining["payload"]["clientId"] = json!("sneaky");
        send(&mut ws, joining).await;
        let refused = recv(&mut ws).await;
        assert_eq!(refused["payload"]["code"], "FORBIDDEN", "{role}: {refused}");
    }
    let (status, body) = post_action(&addr, OBSERVER, click("s1")).await;
    assert_eq!(
        (status, body["code"].as_str()),
        (403, Some("FORBIDDEN")),
        "{body}"
    );

    // A console: no session named, every session's events.
    let mut console = connect(&addr).await;
    send(&mut console, join("observer", OBSERVER)).await;
    assert_eq!(recv(&mut console).await["type"], "relay.joined");
    let all = request(&mut console, "subscribe", "s", json!({})).await;
    assert_eq!(all["type"], "subscribed", "{all}");
    let bound = request(
        &mut console,
        "session.bind",
        "b",
        json!({ "sessionId": "s1", "clientId": "browser-1" }),
    )
    .await;
    assert_eq!(bound["type"], "session.bound", "{bound}");

    for session in ["s1", "s2"] {
        let asked_for = click_in_background(&addr, session);
        let asked = recv_type(&mut console, "browser_task.confirmation_requested").await;
        assert_eq!(asked["payload"]["sessionId"], session);
        let confirmed = request(
            &mut console,
            "browser_task.confirm",
            "c",
            json!({ "requestId": asked["payload"]["requestId"], "approved": true }),
        )
        .await;
        assert_eq!(confirmed["type"], "browser_task.confirmed", "{confirmed}");
        let (_, result) = asked_for.await.unwrap();
        assert_eq!(
            (result["status"].as_str(), result["clientId"].as_str()),
            (Some("success"), Some("browser-1"))
        );
    }

    // Stopping is never held for a confirmation.
    let (_, stopped) = post_action(
        &addr,
        ORCHESTRATOR,
        json!({ "sessionId": "s1", "actionName": "session_stop" }),
    )
    .await;
    assert_eq!(stopped["status"], "success", "{stopped}");
}

#[tokio::test]
async fn a_browser_answers_confirmations_of_the_sessions_bound_to_it_only() {
    let addr = asking_relay().await;
    let mut owner = TestHost::join(&addr, "owners-browser").await;
    let _other = TestHost::join(&addr, "other-browser").await.serve_echo();
    let mut watcher = console(&addr, None).await;
    for (session, browser) in [("owned", "owners-browser"), ("elsewhere", "other-browser")] {
        let body = json!({ "sessionId": session, "clientId": browser });
        let bound = request(&mut watcher, "session.bind", session, body).await;
        assert_eq!(bound["type"], "session.bound", "{bound}");
    }

    let elsewhere = click_in_background(&addr, "elsewhere");
    let asked = recv_type(&mut watcher, "browser_task.confirmation_requested").await;
    let answer = json!({ "v": "1", "type": "browser_task.confirm", "id": "o1",
        "payload": { "requestId": asked["payload"]["requestId"], "approved": true } });
    send(&mut owner.ws, answer).await;
    let refused = recv(&mut owner.ws).await;
    assert_eq!(refused["payload"]["code"], "FORBIDDEN", "{refused}");
    request(
        &mut watcher,
        "browser_task.confirm",
        "w",
        json!({ "requestId": asked["payload"]["requestId"], "approved": false }),
    )
    .await;
    assert_eq!(elsewhere.await.unwrap().1["error"]["code"], "USER_DENIED");

    let owned = click_in_background(&addr, "owned");
    let asked = recv_type(&mut watcher, "browser_task.confirmation_requested").await;
    let answer = json!({ "v": "1", "type": "browser_task.confirm", "id": "o2",
        "payload": { "requestId": asked["payload"]["requestId"], "approved": true } });
    send(&mut owner.ws, answer).await;
    let action = owner.next_action().await;
    owner.ack(&action).await;
    owner.succeed(&action, json!({ "clicked": true })).await;
    assert_eq!(owned.await.unwrap().1["status"], "success");
}

#[tokio::test]
async fn an_action_that_waits_says_so_until_it_ends() {
    let (addr, _) = start(Settings::default(), Limits::default()).await;
    let addr = addr.to_string();
    let mut host = TestHost::join(&addr, "slow-browser").await;
    let mut watcher = connect(&addr).await;
    send(&mut watcher, join("observer", OBSERVER)).await;
    recv(&mut watcher).await;
    request(&mut watcher, "subscribe", "s", json!({ "sessionId": "waits" })).await;
    let navigating = tokio::spawn({
        let addr = addr.clone();
        async move {
            let body = json!({ "sessionId": "waits", "actionName": "browser_navigate",
                "params": { "tabId": 1, "url": "https://example.com/" } });
            post_action(&addr, ORCHESTRATOR, body).await
        }
    });
    let action = host.next_action().await;
    host.ack(&action).await;
    // The host holds its result until the person has been told twice that it still waits.
    for _ in 0..2 {
        let progress = recv_type(&mut watcher, "progress").await;
        let p = &progress["payload"];
        assert_eq!(p["actionId"], action["payload"]["actionId"]);
        assert_eq!(p["sessionId"], "waits");
        assert!(
            p["message"]
                .as_str()
                .unwrap()
                .starts_with("browser_navigate is waiting"),
            "{p}"
        );
    }
    host.succeed(
        &action,
        json!({ "url": "https://example.com/", "status": "complete" }),
    )
    .await;
    assert_eq!(navigating.await.unwrap().1["status"], "success");
}

#[tokio::test]
async fn a_browsers_owner_may_approve_every_action_on_it_whatever_the_relay_says() {
    let (addr, _) = start(Settings::default(), Limits::default()).await;
    let addr = addr.to_string();
    let mut owner = TestHost::join(&addr, "careful-browser").await;
    let ask = |every: bool| json!({ "v": "1", "type": "client.settings", "id": "cs", "payload": { "confirmEveryAction": every } });
    send(&mut owner.ws, ask(true)).await;
    assert_eq!(recv(&mut owner.ws).await["type"], "client.settings");

    for approved in [true, false] {
        let acting = click_in_background(&addr, "owned");
        // The request reaches the browser itself, for its owner to answer there.
        let asked = recv_type(&mut owner.ws, "browser_task.confirmation_requested").await;
        assert_eq!(asked["payload"]["actionName"], "browser_click");
        let answer = json!({ "v": "1", "type": "browser_task.confirm", "id": "a",
            "payload": { "requestId": asked["payload"]["requestId"], "approved": approved } });
        send(&mut owner.ws, answer).await;
        if approved {
            let action = owner.next_action().await;
            owner.ack(&action).await;
            owner.succeed(&action, json!({ "clicked": true })).await;
            assert_eq!(acting.await.unwrap().1["status"], "success");
        } else {
            assert_eq!(acting.await.unwrap().1["error"]["code"], "USER_DENIED");
        }
    }

    // The owner stops asking: actions go straight to the browser again.
    send(&mut owner.ws, ask(false)).await;
    let acting = click_in_background(&addr, "owned");
    let action = owner.next_action().await;
    owner.ack(&action).await;
    owner.succeed(&action, json!({ "clicked": true })).await;
    assert_eq!(acting.await.unwrap().1["status"], "success");
}

/// docs/protocol.md §15: reading a session's page for a caller (`screen.md`) passes the same gate as
/// an agent's `browser_snapshot`: it waits in the session's queue for the person's approval.
#[tokio::test]
async fn a_look_at_a_sessions_page_waits_for_the_person() {
    let addr = asking_relay().await;
    let _host = TestHost::join(&addr, "browser-1").await.serve_echo();
    let mut observer = console(&addr, Some("looked")).await;
    let clicked = click_in_background(&addr, "looked");
    let asked = recv_type(&mut observer, "browser_task.confirmation_requested").await;
    let approve = json!({ "requestId": asked["payload"]["requestId"], "approved": true });
    request(&mut observer, "browser_task.confirm", "c1", approve).await;
    assert_eq!(clicked.await.unwrap().1["status"], "success");

    let looking = tokio::spawn({
        let url = format!("http://{addr}/api/sessions/looked/screen.md");
        async move {
            let response = tether_tests::client::own_http()
                .get(url)
                .bearer_auth(ORCHESTRATOR)
                .send()
                .await
                .unwrap();
            response.text().await.unwrap()
        }
    });
    for (n, read) in ["browser_tabs", "browser_snapshot"].into_iter().enumerate() {
        let asked = recv_type(&mut observer, "browser_task.confirmation_requested").await;
        assert_eq!(asked["payload"]["actionName"], read, "{asked}");
        let deny = json!({ "requestId": asked["payload"]["requestId"], "approved": false });
        request(&mut observer, "browser_task.confirm", &format!("d{n}"), deny).await;
    }
    let screen = looking.await.unwrap();
    assert!(screen.contains("USER_DENIED"), "{screen}");
    assert!(!screen.contains("echo"), "nothing of the page was read: {screen}");
}

/// docs/protocol.md §15: a console that connects after a question was asked still shows it.
#[tokio::test]
async fn a_console_that_connects_later_sees_the_questions_already_asked() {
    let addr = asking_relay().await;
    let _host = TestHost::join(&addr, "browser-1").await.serve_echo();
    // Someone is already watching, so the question is asked; the person's console comes later.
    let mut early = console(&addr, None).await;
    let clicked = click_in_background(&addr, "asked-early");
    let asked = recv_type(&mut early, "browser_task.confirmation_requested").await;

    let mut late = console(&addr, None).await;
    let shown = recv_type(&mut late, "browser_task.confirmation_requested").await;
    assert_eq!(shown["payload"], asked["payload"]);
    let approve = json!({ "requestId": shown["payload"]["requestId"], "approved": true });
    request(&mut late, "browser_task.confirm", "c", approve).await;
    assert_eq!(clicked.await.unwrap().1["status"], "success");
}
