//! Nothing lost when the relay dies (docs/protocol.md §13). The real `tether-relay` binary is
//! killed with SIGKILL while a worker presses "Buy" on a real page, then started again on the
//! same port and data dir. Each press is counted by the fixture server, not by Tether, so "run
//! at most once" is the page's word; the orchestrator repeats by `actionId` and gets one result.

use std::io::Write;
use std::time::Duration;

use serde_json::{json, Value};
use tether_tests::client::{envelope, orchestrator, recv, request, send, Ws};
use tether_tests::fixtures;
use tether_tests::process::RelayProcess;
use tether_tests::relay::RelayApi;
use tether_tests::{run_worker, Harness};

/// Generous bound for a host to rejoin: its backoff starts at 250 ms and doubles.
const JOIN_WITHIN: Duration = Duration::from_secs(20);

fn press(action_id: &str, tab: i64, button: &str) -> Value {
    json!({ "sessionId": "shop", "actionId": action_id, "actionName": "browser_click",
            "params": { "tabId": tab, "xpath": format!("//button[@id='{button}']") } })
}

/// A relay with a worker `buyer`, and session `shop` on the Buy page (its tab).
async fn shop(h: &'static Harness, prefix: &str) -> (RelayProcess, tokio::task::JoinHandle<()>, i64) {
    let relay = RelayProcess::start(&[]).await;
    let worker = relay.api().start_worker(h, "buyer");
    relay.api().wait_online("buyer", JOIN_WITHIN).await;
    let start = json!({ "sessionId": "shop", "actionId": "open-shop", "actionName": "session_start",
                        "params": { "url": h.url(&format!("/fixtures/buy.html?prefix={prefix}")) } });
    let started = relay.api().post(start).await;
    let tab = started["result"]["tabId"].as_i64().expect("a tab");
    (relay, worker, tab)
}

/// Sends an action; its result, after its ack.
async fn act(ws: &mut Ws, id: &str, payload: Value) -> Value {
    send(ws, envelope("browser_action", id, payload)).await;
    let ack = recv(ws).await;
    assert_eq!(
        (ack["type"].as_str(), ack["replyTo"].as_str()),
        (Some("browser_action.ack"), Some(id)),
        "{ack}"
    );
    let result = recv(ws).await;
    assert_eq!(result["type"], "browser_action.result", "{result}");
    result["payload"].clone()
}

/// Restarts the relay and waits for the worker to be back on it.
async fn restarted(stopped: tether_tests::process::Stopped) -> RelayProcess {
    let relay = stopped.restart().await;
    relay.api().wait_online("buyer", JOIN_WITHIN).await;
    relay
}

/// The entries of session `shop`'s log (a torn line left out).
fn shop_log(data: &std::path::Path) -> Vec<Value> {
    let text = std::fs::read_to_string(data.join("logs/shop.jsonl")).unwrap_or_default();
    text.lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

/// How many results of `action_id` the log of `shop` holds.
fn logged_results(data: &std::path::Path, action_id: &str) -> usize {
    shop_log(data)
        .iter()
        .filter(|e| e["type"] == "browser_action.result" && e["payload"]["actionId"] == action_id)
        .count()
}

/// Waits until the relay's log of `shop` holds the result of `action_id`: the browser's kept
/// result has reached the relay.
async fn logged_result(api: &RelayApi, data: &std::path::Path, action_id: &str) {
    api.wait_until(json!({ "sessionId": "shop" }), JOIN_WITHIN, || async {
        (logged_results(data, action_id) > 0).then_some(())
    })
    .await
}

/// The relay and its worker with "Buy" pressed on session `shop`'s page and held there by the
/// fixture server: the press is in the middle of its handler. The relay, the worker, the tab,
/// the hold and the orchestrator's socket.
async fn pressed_and_held(
    h: &'static Harness,
    prefix: &str,
) -> (RelayProcess, tokio::task::JoinHandle<()>, i64, fixtures::Hold, Ws) {
    let (relay, worker, tab) = shop(h, prefix).await;
    let hold = fixtures::hold(&format!("{prefix}buy"));
    let mut orch = orchestrator(&relay.addr).await;
    send(
        &mut orch,
        envelope("browser_action", "r1", press("buy-1", tab, "buy")),
    )
    .await;
    fixtures::hit_times(&format!("{prefix}buy"), 1).await;
    (relay, worker, tab, hold, orch)
}

#[test]
fn a_press_the_browser_finished_while_the_relay_was_dead_is_kept_and_never_repeated() {
    run_worker(|h| async move {
        let (relay, worker, tab, hold, mut orch) = pressed_and_held(h, "kept-").await;
        // "Buy again" waits in the relay's queue behind the press the page is in the middle of.
        send(
            &mut orch,
            envelope("browser_action", "r2", press("again-1", tab, "again")),
        )
        .await;
        let state = request(&mut orch, "session.get", "g", json!({ "sessionId": "shop" })).await;
        assert_eq!(
            (state["payload"]["inFlight"].as_str(), &state["payload"]["queued"]),
            (Some("buy-1"), &json!(1)),
            "{state}"
        );

        let stopped = relay.kill9().await;
        hold.release();
        fixtures::hit_times("kept-buy-done", 1).await;
        // A crash mid-write leaves a torn last line in the session log.
        let mut torn = std::fs::OpenOptions::new()
            .append(true)
            .open(stopped.data.path().join("logs/shop.jsonl"))
            .unwrap();
        torn.write_all(br#"{"sessionId":"shop","eventIn"#).unwrap();

        let relay = restarted(stopped).await;
        logged_result(&relay.api(), relay.data.path(), "buy-1").await;
        let mut orch = orchestrator(&relay.addr).await;
        let bought = act(&mut orch, "r1-again", press("buy-1", tab, "buy")).await;
        assert_eq!(
            (&bought["status"], &bought["replayed"]),
            (&json!("success"), &json!(true)),
            "{bought}"
        );
        // The queued press never reached the browser: repeated, it runs now, once.
        let again = act(&mut orch, "r2-again", press("again-1", tab, "again")).await;
        assert_eq!(
            (&again["status"], &again.get("replayed")),
            (&json!("success"), &None),
            "{again}"
        );
        let again = act(&mut orch, "r2-thrice", press("again-1", tab, "again")).await;
        assert_eq!(again["replayed"], true, "{again}");
        // What finished before the crash is answered from the store: no second tab.
        let start = json!({ "sessionId": "shop", "actionId": "open-shop", "actionName": "session_start", "params": {} });
        let reopened = act(&mut orch, "s-again", start).await;
        assert_eq!(
            (&reopened["replayed"], &reopened["result"]["tabId"]),
            (&json!(true), &json!(tab)),
            "{reopened}"
        );
        assert_eq!(
            (fixtures::hits("kept-buy"), fixtures::hits("kept-again")),
            (1, 1),
            "each press ran once"
        );

        let state = request(&mut orch, "session.get", "g", json!({ "sessionId": "shop" })).await;
        assert_eq!(
            (&state["payload"]["status"], &state["payload"]["clientId"]),
            (&json!("ongoing"), &json!("buyer")),
            "{state}"
        );
        // The log goes on from where it ended: no index missing, none twice.
        let indices: Vec<u64> = shop_log(relay.data.path())
            .iter()
            .map(|e| e["eventIndex"].as_u64().unwrap())
            .collect();
        assert_eq!(indices, (0..indices.len() as u64).collect::<Vec<_>>());
        worker.abort();
    });
}

#[test]
fn a_press_still_running_when_the_relay_comes_back_ends_once_for_its_repeat() {
    run_worker(|h| async move {
        let (relay, worker, tab, hold, orch) = pressed_and_held(h, "running-").await;
        drop(orch);

        let relay = restarted(relay.kill9().await).await;
        let mut orch = orchestrator(&relay.addr).await;
        // The repeat goes to the browser, which is still in the middle of the press: it waits
        // for that press's result instead of pressing again.
        send(
            &mut orch,
            envelope("browser_action", "r1-again", press("buy-1", tab, "buy")),
        )
        .await;
        let ack = recv(&mut orch).await;
        assert_eq!(ack["type"], "browser_action.ack", "{ack}");
        hold.release();
        let result = recv(&mut orch).await;
        assert_eq!(result["replyTo"], "r1-again", "{result}");
        assert_eq!(
            (&result["payload"]["status"], &result["payload"]["replayed"]),
            (&json!("success"), &json!(true)),
            "{result}"
        );
        fixtures::hit_times("running-buy-done", 1).await;
        assert_eq!(fixtures::hits("running-buy"), 1, "pressed once");
        // Exactly one result in the log for the press.
        assert_eq!(
            logged_results(relay.data.path(), "buy-1"),
            1,
            "one result, in the log once"
        );
        worker.abort();
    });
}
