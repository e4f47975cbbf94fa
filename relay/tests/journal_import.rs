//! A data dir an earlier relay left, its JSONL journal (`fixtures/journal-v0`, made by the
//! `make.sh` beside it with the last relay that kept one), is imported at the first start
//! (docs/protocol.md §22): the file is renamed `sessions.jsonl.imported`, and every result it
//! kept replays by its `actionId` without reaching a browser (none is connected), after the
//! import and again after a restart; bindings and standing come across.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::process::RelayProcess;
use common::ORCHESTRATOR;
use serde_json::{json, Value};

/// Every result the journal kept, by action id: in the `session` records a start wrote, and
/// in the `finished` records appended after.
fn kept_results(journal: &Path) -> BTreeMap<String, Value> {
    let mut kept = BTreeMap::new();
    for line in std::fs::read_to_string(journal).unwrap().lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        let results = match (&record["session"]["results"], &record["finished"]["result"]) {
            (Value::Array(results), _) => results.clone(),
            (_, result @ Value::Object(_)) => vec![result.clone()],
            _ => continue,
        };
        for result in results {
            kept.insert(result["actionId"].as_str().unwrap().to_owned(), result);
        }
    }
    kept
}

async fn replay_all(relay: &RelayProcess, kept: &BTreeMap<String, Value>) {
    for (action_id, result) in kept {
        let body = json!({ "sessionId": result["sessionId"], "actionId": action_id,
            "actionName": result["actionName"], "params": {} });
        let (_, again) = common::client::post_action(&relay.addr, ORCHESTRATOR, body).await;
        assert_eq!(again["replayed"], true, "{action_id}: {again}");
        assert_eq!(
            (&again["status"], &again["result"]),
            (&result["status"], &result["result"]),
            "{action_id}: the kept result, whole"
        );
    }
}

#[tokio::test]
async fn an_earlier_relays_journal_is_imported_and_every_kept_result_replays() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/journal-v0/sessions.jsonl");
    let kept = kept_results(&fixture);
    let ids: Vec<&str> = kept.keys().map(String::as_str).collect();
    assert_eq!(ids, ["look", "look-again", "open", "open-done", "stop-done"]);
    let data = tempfile::tempdir().unwrap();
    std::fs::copy(&fixture, data.path().join("sessions.jsonl")).unwrap();

    let relay = RelayProcess::start_in(data, &[]).await;
    assert!(relay.data.path().join("sessions.jsonl.imported").exists());
    assert!(!relay.data.path().join("sessions.jsonl").exists());
    replay_all(&relay, &kept).await;
    let shop = common::client::get_json(&relay.addr, "/api/sessions/shop").await;
    assert_eq!(
        (&shop["status"], &shop["clientId"]),
        (&json!("ongoing"), &json!("fixture-browser"))
    );
    let done = common::client::get_json(&relay.addr, "/api/sessions/done").await;
    assert_eq!(done["status"], "completed", "{done}");

    let relay = relay.kill9().await.restart().await;
    assert!(
        !relay.data.path().join("sessions.jsonl").exists(),
        "imported once"
    );
    replay_all(&relay, &kept).await;
}
