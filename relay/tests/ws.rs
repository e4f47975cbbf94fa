//! The `/ws` protocol over a real socket: envelopes, the `relay.join` handshake with roles and
//! tokens, and the registry of hosts it feeds.

mod common;

use common::client::{closes, connect, join, recv, send, Ws};
use common::{start_relay, HOST, ORCHESTRATOR};
use futures::SinkExt;
use serde_json::{json, Value};
use tether_relay::stores::artifacts::Limits;
use tokio_tungstenite::tungstenite::Message;

async fn relay() -> String {
    start_relay(Limits::default()).await.to_string()
}

async fn joined_host(addr: &str, client_id: &str) -> Ws {
    let mut ws = connect(addr).await;
    let meta = json!({ "browser": "Chromium", "mode": "worker", "actions": ["browser_click"] });
    send(
        &mut ws,
        json!({ "v": "1", "type": "relay.join", "id": "h", "payload": { "role": "host", "token": HOST, "clientId": client_id, "meta": meta } }),
    )
    .await;
    assert_eq!(recv(&mut ws).await["type"], "relay.joined");
    ws
}

async fn list(ws: &mut Ws) -> Vec<Value> {
    send(
        ws,
        json!({ "v": "1", "type": "extension.list", "id": "l", "payload": {} }),
    )
    .await;
    let reply = recv(ws).await;
    assert_eq!(
        (reply["type"].as_str(), reply["replyTo"].as_str()),
        (Some("extension.list.result"), Some("l"))
    );
    reply["payload"]["clients"].as_array().unwrap().clone()
}

#[tokio::test]
async fn a_join_is_answered_with_the_role_and_a_connection_id() {
    let addr = relay().await;
    let mut ws = connect(&addr).await;
    send(&mut ws, join("orchestrator", ORCHESTRATOR)).await;
    let joined = recv(&mut ws).await;
    assert_eq!(joined["v"], "1");
    assert_eq!(joined["type"], "relay.joined");
    assert_eq!(joined["replyTo"], "j1");
    assert_eq!(joined["payload"]["role"], "orchestrator");
    assert_eq!(joined["payload"]["connectionId"].as_str().unwrap().len(), 32);
}

#[tokio::test]
async fn a_frame_that_is_not_an_envelope_is_refused_and_the_connection_stays() {
    let addr = relay().await;
    let mut ws = connect(&addr).await;
    send(&mut ws, join("orchestrator", ORCHESTRATOR)).await;
    recv(&mut ws).await;
    for bad in [
        json!("just a string"),
        json!({ "type": "extension.list" }),
        json!({ "v": "1" }),
    ] {
        send(&mut ws, bad).await;
        let error = recv(&mut ws).await;
        assert_eq!(error["type"], "error");
        assert_eq!(error["payload"]["code"], "INVALID_MESSAGE");
    }
    send(
        &mut ws,
        json!({ "v": "2", "type": "extension.list", "id": "v2", "payload": {} }),
    )
    .await;
    let error = recv(&mut ws).await;
    assert_eq!(
        (error["payload"]["code"].as_str(), error["replyTo"].as_str()),
        (Some("INVALID_MESSAGE"), Some("v2"))
    );
    assert!(error["payload"]["message"].as_str().unwrap().contains("\"1\""));
    ws.send(Message::Text("{not json".into())).await.unwrap();
    assert_eq!(recv(&mut ws).await["payload"]["code"], "INVALID_MESSAGE");
    assert!(list(&mut ws).await.is_empty(), "still open and serving");
    send(
        &mut ws,
        json!({ "v": "1", "type": "no.such.thing", "id": "x", "payload": {} }),
    )
    .await;
    let error = recv(&mut ws).await;
    assert_eq!(
        (error["payload"]["code"].as_str(), error["replyTo"].as_str()),
        (Some("INVALID_MESSAGE"), Some("x"))
    );
}

#[tokio::test]
async fn bad_joins_are_refused_and_closed() {
    let addr = relay().await;
    for (first, code) in [
        (join("orchestrator", "wrong"), "UNAUTHORIZED"),
        (
            json!({ "v": "1", "type": "relay.join", "payload": { "role": "orchestrator" } }),
            "UNAUTHORIZED",
        ),
        (join("orchestrator", HOST), "FORBIDDEN"),
        (join("observer", HOST), "FORBIDDEN"),
        (
            json!({ "v": "1", "type": "relay.join", "payload": { "role": "host", "token": ORCHESTRATOR, "clientId": "c" } }),
            "FORBIDDEN",
        ),
        (
            json!({ "v": "1", "type": "extension.list", "payload": {} }),
            "UNAUTHORIZED",
        ),
        (
            json!({ "v": "1", "type": "relay.join", "payload": { "role": "host", "token": HOST } }),
            "INVALID_MESSAGE",
        ),
    ] {
        let mut ws = connect(&addr).await;
        send(&mut ws, first.clone()).await;
        let error = recv(&mut ws).await;
        assert_eq!(error["type"], "error", "{first}");
        assert_eq!(error["payload"]["code"], code, "{first}: {error}");
        assert!(closes(&mut ws).await, "{first}: the connection must close");
    }
}

#[tokio::test]
async fn a_token_on_the_upgrade_is_checked_there_and_then_suffices() {
    let addr = relay().await;
    let refused = tokio_tungstenite::connect_async(format!("ws://{addr}/ws?token=wrong")).await;
    match refused {
        Err(tokio_tungstenite::tungstenite::Error::Http(response)) => assert_eq!(response.status(), 401),
        other => panic!("expected HTTP 401, got {other:?}"),
    }
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws?token={ORCHESTRATOR}"))
        .await
        .unwrap();
    send(
        &mut ws,
        json!({ "v": "1", "type": "relay.join", "id": "j", "payload": { "role": "orchestrator" } }),
    )
    .await;
    assert_eq!(recv(&mut ws).await["type"], "relay.joined");
}

#[tokio::test]
async fn hosts_appear_in_the_extension_list_and_go_offline_when_they_leave() {
    let addr = relay().await;
    let mut orchestrator = connect(&addr).await;
    send(&mut orchestrator, join("orchestrator", ORCHESTRATOR)).await;
    recv(&mut orchestrator).await;

    let mut host = joined_host(&addr, "browser-1").await;
    let clients = list(&mut orchestrator).await;
    assert_eq!(clients.len(), 1);
    assert_eq!(clients[0]["clientId"], "browser-1");
    assert_eq!(clients[0]["online"], true);
    assert_eq!(clients[0]["meta"]["mode"], "worker");
    assert!(clients[0]["lastSeen"].as_str().unwrap().ends_with('Z'));

    // The same list over HTTP.
    let http = common::client::get_json(&addr, "/api/extension/extension-list").await;
    assert_eq!(http["clients"][0]["clientId"], "browser-1");

    // A host may not use an orchestrator's messages; its connection stays.
    send(
        &mut host,
        json!({ "v": "1", "type": "extension.list", "id": "nope", "payload": {} }),
    )
    .await;
    assert_eq!(recv(&mut host).await["payload"]["code"], "FORBIDDEN");

    host.close(None).await.unwrap();
    // Until client.offline events exist, ask until the relay has seen the close.
    for _ in 0..1000 {
        if list(&mut orchestrator).await[0]["online"] == false {
            return;
        }
        tokio::task::yield_now().await;
    }
    panic!("the host never went offline");
}

/// A host's join as `client_id` with `token`: its answer.
async fn host_join(addr: &str, token: &str, client_id: &str) -> (Ws, Value) {
    let mut ws = connect(addr).await;
    send(
        &mut ws,
        json!({ "v": "1", "type": "relay.join", "id": "h", "payload": {
            "role": "host", "token": token, "clientId": client_id, "meta": { "mode": "worker" } } }),
    )
    .await;
    let answer = recv(&mut ws).await;
    (ws, answer)
}

/// docs/protocol.md §15: whoever holds the shared host token cannot take an online browser's place
/// (and with it what is typed into that browser).
#[tokio::test]
async fn a_second_connection_for_an_online_browser_is_refused() {
    let addr = relay().await;
    let mut first = joined_host(&addr, "same").await;
    let (mut second, answer) = host_join(&addr, HOST, "same").await;
    assert_eq!(answer["type"], "error", "{answer}");
    assert_eq!(answer["payload"]["code"], "FORBIDDEN");
    assert!(answer["payload"]["message"]
        .as_str()
        .unwrap()
        .contains("already connected"));
    assert!(closes(&mut second).await);

    let mut orchestrator = connect(&addr).await;
    send(&mut orchestrator, join("orchestrator", ORCHESTRATOR)).await;
    recv(&mut orchestrator).await;
    let clients = list(&mut orchestrator).await;
    assert_eq!((clients.len(), &clients[0]["online"]), (1, &json!(true)));
    // The first is still the one the relay talks to.
    send(
        &mut first,
        json!({ "v": "1", "type": "heartbeat", "payload": {} }),
    )
    .await;
}

/// docs/protocol.md §15: a per-browser token joins only as its browser, replaces its own browser's
/// older connection (a reconnect), and shuts the shared host token out of that browser.
#[tokio::test]
async fn a_browsers_own_token_is_its_identity() {
    let (addr, data) = common::start(Default::default(), Limits::default()).await;
    let addr = addr.to_string();
    let laptop = tether_relay::stores::host_tokens::mint(&data, "laptop").unwrap();

    let (_, answer) = host_join(&addr, &laptop, "desk").await;
    assert_eq!(answer["payload"]["code"], "FORBIDDEN", "{answer}");
    assert!(answer["payload"]["message"]
        .as_str()
        .unwrap()
        .contains("belongs to"));
    let (_, answer) = host_join(&addr, HOST, "laptop").await;
    assert_eq!(answer["payload"]["code"], "FORBIDDEN", "{answer}");
    assert!(answer["payload"]["message"]
        .as_str()
        .unwrap()
        .contains("of its own"));

    let (mut first, answer) = host_join(&addr, &laptop, "laptop").await;
    assert_eq!(answer["type"], "relay.joined", "{answer}");
    let (_second, answer) = host_join(&addr, &laptop, "laptop").await;
    assert_eq!(answer["type"], "relay.joined", "a reconnect replaces: {answer}");
    let notice = recv(&mut first).await;
    assert!(notice["payload"]["message"]
        .as_str()
        .unwrap()
        .contains("replaced"));
    assert!(closes(&mut first).await);

    // The bound token also uploads artifacts, as hosts do.
    let upload = tether_tests::client::own_http()
        .put(format!("http://{addr}/artifacts"))
        .bearer_auth(&laptop)
        .header("content-type", "image/png")
        .body(vec![1, 2, 3])
        .send()
        .await
        .unwrap();
    assert_eq!(upload.status().as_u16(), 200);

    tether_relay::stores::host_tokens::revoke(&data, "laptop").unwrap();
    let (_, answer) = host_join(&addr, &laptop, "laptop").await;
    assert_eq!(answer["payload"]["code"], "UNAUTHORIZED", "revoked: {answer}");
}

#[tokio::test]
async fn an_oversize_message_is_refused_with_payload_too_large() {
    let settings = tether_relay::config::Settings {
        max_message_bytes: 64 * 1024,
        ..Default::default()
    };
    let (addr, _) = common::start(settings, Limits::default()).await;
    let addr = addr.to_string();
    let mut ws = connect(&addr).await;
    send(&mut ws, join("orchestrator", ORCHESTRATOR)).await;
    recv(&mut ws).await;
    let big = "x".repeat(100 * 1024);
    let envelope = json!({ "v": "1", "type": "browser_action", "id": "big", "payload": { "sessionId": "s", "actionName": "browser_type", "params": { "tabId": 1, "xpath": "//input", "text": big } } });
    ws.send(Message::Text(envelope.to_string().into())).await.unwrap();
    let error = recv(&mut ws).await;
    assert_eq!(error["payload"]["code"], "PAYLOAD_TOO_LARGE", "{error}");
    assert!(closes(&mut ws).await);

    let (status, body) = common::client::post_action(&addr, ORCHESTRATOR, envelope["payload"].clone()).await;
    assert_eq!((status, body["code"].as_str()), (413, Some("PAYLOAD_TOO_LARGE")));
}

#[tokio::test]
async fn each_role_is_refused_the_other_roles_messages() {
    let addr = relay().await;
    let mut host = joined_host(&addr, "browser-1").await;
    for kind in [
        "extension.list",
        "session.bind",
        "browser_action",
        "catalog.get",
        "twin.get",
        "subscribe",
        "session.get",
    ] {
        send(
            &mut host,
            json!({ "v": "1", "type": kind, "id": "x", "payload": {} }),
        )
        .await;
        let reply = recv(&mut host).await;
        assert_eq!(
            reply["payload"]["code"], "FORBIDDEN",
            "a host sending {kind}: {reply}"
        );
    }
    let mut orch = connect(&addr).await;
    send(&mut orch, join("orchestrator", ORCHESTRATOR)).await;
    recv(&mut orch).await;
    for kind in [
        "browser_action.ack",
        "browser_action.result",
        "full_state_sync",
        "tab_event",
    ] {
        send(
            &mut orch,
            json!({ "v": "1", "type": kind, "id": "x", "replyTo": "d1", "payload": {} }),
        )
        .await;
        let reply = recv(&mut orch).await;
        assert_eq!(
            reply["payload"]["code"], "FORBIDDEN",
            "an orchestrator sending {kind}: {reply}"
        );
    }
    // Both connections are still usable afterwards.
    assert_eq!(list(&mut orch).await.len(), 1);
}

/// docs/protocol.md §15: a web page in the person's browser cannot talk to the relay's socket; the
/// relay's own console, and programs (which send no Origin), can.
#[tokio::test]
async fn pages_of_other_origins_cannot_open_the_socket() {
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    let addr = relay().await;
    let port = addr.rsplit_once(':').unwrap().1.to_owned();
    let open = |origin: Option<String>| {
        let mut request = format!("ws://{addr}/ws").into_client_request().unwrap();
        if let Some(origin) = origin {
            request.headers_mut().insert("origin", origin.parse().unwrap());
        }
        tokio_tungstenite::connect_async(request)
    };
    for refused in [
        "https://evil.example".to_owned(),
        format!("http://evil.example:{port}"),
        "null".to_owned(),
    ] {
        match open(Some(refused.clone())).await {
            Err(tokio_tungstenite::tungstenite::Error::Http(response)) => {
                assert_eq!(response.status().as_u16(), 403, "{refused}")
            }
            other => panic!("{refused} was let in: {other:?}"),
        }
    }
    for admitted in [
        None,
        Some(format!("http://127.0.0.1:{port}")),
        Some(format!("http://localhost:{port}")),
    ] {
        assert!(open(admitted.clone()).await.is_ok(), "{admitted:?}");
    }
}

/// docs/protocol.md §15: browsers that come and go do not pile up in the list for ever; one bound to
/// a session still going stays.
#[tokio::test]
async fn browsers_offline_long_enough_are_forgotten() {
    let settings = tether_relay::config::Settings {
        forget_offline_after: std::time::Duration::from_secs(1),
        ..Default::default()
    };
    let addr = common::start(settings, Limits::default()).await.0.to_string();
    let mut orchestrator = connect(&addr).await;
    send(&mut orchestrator, join("orchestrator", ORCHESTRATOR)).await;
    recv(&mut orchestrator).await;
    let kept = joined_host(&addr, "kept").await;
    let bind = json!({ "v": "1", "type": "session.bind", "id": "b",
        "payload": { "sessionId": "going", "clientId": "kept" } });
    send(&mut orchestrator, bind).await;
    assert_eq!(recv(&mut orchestrator).await["type"], "session.bound");
    drop(kept);
    for n in 0..50 {
        let host = joined_host(&addr, &format!("passing-{n}")).await;
        drop(host);
    }
    // Until a second has passed since each left, the list has them; then only the bound one.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(15);
    loop {
        let clients = list(&mut orchestrator).await;
        let ids: Vec<&str> = clients.iter().map(|c| c["clientId"].as_str().unwrap()).collect();
        if ids == ["kept"] {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "still listed: {ids:?}");
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
}

/// docs/protocol.md §15: browsers joining under ever new clientIds cannot grow the relay's list
/// without bound: past `--max-offline-browsers`, the offline ones seen longest ago are
/// forgotten first, and a browser with a host token of its own outlives shared-token ones.
#[tokio::test]
async fn offline_browsers_are_bounded_by_count() {
    let settings = tether_relay::config::Settings {
        max_offline_browsers: 10,
        ..Default::default()
    };
    let (addr, data_dir) = common::start(settings, Limits::default()).await;
    let addr = addr.to_string();
    let own_token = tether_relay::stores::host_tokens::mint(&data_dir, "owned").unwrap();
    let mut owned = connect(&addr).await;
    send(
        &mut owned,
        json!({ "v": "1", "type": "relay.join", "id": "h", "payload": {
            "role": "host", "token": own_token, "clientId": "owned", "meta": {} } }),
    )
    .await;
    assert_eq!(recv(&mut owned).await["type"], "relay.joined");
    drop(owned);
    let mut orchestrator = connect(&addr).await;
    send(&mut orchestrator, join("orchestrator", ORCHESTRATOR)).await;
    recv(&mut orchestrator).await;
    for n in 0..40 {
        let mut host = joined_host(&addr, &format!("ghost-{n:02}")).await;
        host.close(None).await.unwrap();
        // Gone from the relay's side before the next one joins: the order of leaving is known.
        while list(&mut orchestrator).await.iter().any(|c| c["online"] == true) {
            tokio::task::yield_now().await;
        }
    }
    let mut ids: Vec<String> = list(&mut orchestrator)
        .await
        .iter()
        .map(|c| c["clientId"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    let mut wanted: Vec<String> = (31..40).map(|n| format!("ghost-{n:02}")).collect();
    wanted.push("owned".into());
    wanted.sort();
    assert_eq!(ids, wanted);
}

/// A host's join is bounded before the relay keeps it: a clientId over 256 bytes, or meta over
/// 16 KiB, is refused with a message saying the limit.
#[tokio::test]
async fn oversized_client_ids_and_meta_are_refused_at_join() {
    let addr = relay().await;
    for (client_id, meta) in [
        ("é".repeat(129), json!({})),
        ("big-meta".to_owned(), json!({ "browser": "x".repeat(17 * 1024) })),
    ] {
        let mut ws = connect(&addr).await;
        send(
            &mut ws,
            json!({ "v": "1", "type": "relay.join", "id": "h", "payload": {
                "role": "host", "token": HOST, "clientId": client_id, "meta": meta } }),
        )
        .await;
        let refused = recv(&mut ws).await;
        assert_eq!(refused["payload"]["code"], "INVALID_MESSAGE", "{refused}");
    }
}

/// docs/protocol.md §15: two hosts under one clientId do not take the place from each other for
/// ever. The one replaced is told so (`replaced`), joins again with `replace: false` and is
/// refused while the other holds the place; the list shows the browser contested.
#[tokio::test]
async fn a_host_replaced_by_another_cannot_take_the_place_back() {
    let (addr, data_dir) = common::start(Default::default(), Limits::default()).await;
    let addr = addr.to_string();
    let token = tether_relay::stores::host_tokens::mint(&data_dir, "twice").unwrap();
    let join_as = |replace: Option<bool>| {
        let mut payload = json!({ "role": "host", "token": token, "clientId": "twice", "meta": {} });
        if let Some(replace) = replace {
            payload["replace"] = json!(replace);
        }
        json!({ "v": "1", "type": "relay.join", "id": "h", "payload": payload })
    };
    let mut first = connect(&addr).await;
    send(&mut first, join_as(None)).await;
    assert_eq!(recv(&mut first).await["type"], "relay.joined");
    let mut second = connect(&addr).await;
    send(&mut second, join_as(None)).await;
    assert_eq!(recv(&mut second).await["type"], "relay.joined");
    let told = recv(&mut first).await;
    assert_eq!(told["payload"]["details"]["replaced"], true, "{told}");
    assert!(closes(&mut first).await);

    let mut again = connect(&addr).await;
    send(&mut again, join_as(Some(false))).await;
    let refused = recv(&mut again).await;
    assert_eq!(refused["payload"]["code"], "FORBIDDEN", "{refused}");
    assert_eq!(
        refused["payload"]["details"]["alreadyConnected"], true,
        "{refused}"
    );

    let mut orchestrator = connect(&addr).await;
    send(&mut orchestrator, join("orchestrator", ORCHESTRATOR)).await;
    recv(&mut orchestrator).await;
    let clients = list(&mut orchestrator).await;
    assert_eq!(clients[0]["clientId"], "twice");
    assert_eq!(clients[0]["online"], true);
    assert_eq!(clients[0]["contested"]["joins"], 2, "{clients:?}");

    // Once the place is free, the host stepped aside joins.
    drop(second);
    loop {
        let mut retry = connect(&addr).await;
        send(&mut retry, join_as(Some(false))).await;
        if recv(&mut retry).await["type"] == "relay.joined" {
            break;
        }
        tokio::task::yield_now().await;
    }
}
