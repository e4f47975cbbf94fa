//! The store on disk: what it keeps is there after it is opened again, private to its owner.

use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

use super::*;

fn raw(text: &str) -> Stored {
    Arc::from(serde_json::value::RawValue::from_string(text.to_owned()).unwrap())
}

#[tokio::test]
async fn what_is_kept_is_there_after_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = Store::open(dir.path()).unwrap();
        let head = Head {
            client_id: Some("c".into()),
            standing: Standing::Completed,
            last_error: Some(ActionError::new(
                tether_protocol::ErrorCode::ActionTimeout,
                "slow",
            )),
            confirmed: true,
            active_at: 5,
            ..Head::default()
        };
        let started = |id: &str| Action::Started {
            action_id: id.into(),
            action_name: "browser_click".into(),
            tab_id: Some(3),
        };
        store.keep("s", Some(head), Some(started("a"))).wait().await;
        let finished = Action::Finished {
            action_id: "a".into(),
            result: raw(r#"{"actionId":"a"}"#),
            forgotten: None,
            current_tab: Some(3),
        };
        store.keep("s", None, Some(finished)).wait().await;
        store.keep("s", None, Some(started("b"))).wait().await;
    }
    let mode = std::fs::metadata(dir.path().join(FILE))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let store = Store::open(dir.path()).unwrap();
    let loaded = store.load("s").unwrap();
    assert_eq!(loaded.head.client_id.as_deref(), Some("c"));
    assert_eq!(loaded.head.standing, Standing::Completed);
    assert_eq!(loaded.head.last_error.map(|e| e.message), Some("slow".to_owned()));
    assert!(loaded.head.confirmed);
    let results: Vec<_> = loaded
        .results
        .iter()
        .map(|(id, r)| (id.as_str(), r.get()))
        .collect();
    assert_eq!(results, [("a", r#"{"actionId":"a"}"#)]);
    assert_eq!(loaded.unsettled.len(), 1);
    assert_eq!(
        (loaded.unsettled[0].action_id.as_str(), loaded.unsettled[0].tab_id),
        ("b", Some(3))
    );
    assert!(store.load("t").is_none());
    assert_eq!(store.counts(), (1, 2));
}

#[tokio::test]
async fn a_session_first_kept_without_its_head_is_active_now() {
    let store = Store::in_memory();
    let started = Action::Started {
        action_id: "a".into(),
        action_name: "browser_click".into(),
        tab_id: None,
    };
    let before = chrono::Utc::now().timestamp_millis();
    store.keep("s", None, Some(started)).wait().await;
    let after = chrono::Utc::now().timestamp_millis();
    let active_at = store.load("s").unwrap().head.active_at;
    assert!(
        (before - 1..=after + 1).contains(&active_at),
        "{before} {active_at} {after}"
    );
}
