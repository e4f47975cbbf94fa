//! The session's transitions against docs/protocol.md §2.3's status rules.

use chrono::Utc;
use serde_json::json;
use tether_protocol::result::{ActionHeader, Output};
use tether_protocol::{ActionError, ActionResult, ErrorCode};
use tokio::sync::oneshot;

use std::sync::Arc;

use super::*;
use crate::core::job::Job;
use crate::core::reply::Reply;
use crate::core::request::Request;
use crate::stores::store::{Record, Store};

fn request(action_id: &str, action_name: &str) -> Request {
    Request {
        session_id: "s".into(),
        client_id: None,
        action_id: action_id.into(),
        action: crate::core::request::Named::new(action_name.into()),
        params: json!({}),
        timeout: None,
        peek: false,
    }
}

fn job(action_id: &str) -> (Job, oneshot::Receiver<ActionResult>) {
    let (tx, rx) = oneshot::channel();
    let job = Job {
        request: request(action_id, "browser_click"),
        reply: Reply::Channel(tx),
    };
    (job, rx)
}

fn result(action_id: &str, action_name: &str, error: Option<ErrorCode>) -> ActionResult {
    let header = ActionHeader {
        action_id: action_id.into(),
        action_name: action_name.into(),
        session_id: "s".into(),
        client_id: "c".into(),
    };
    let outcome = match error {
        None => Ok(Output::of(&json!({}))),
        Some(code) => Err(ActionError::new(code, "it failed")),
    };
    ActionResult::new(header, Utc::now(), Utc::now(), outcome)
}

fn finish(session: &mut Session<Job>, result: ActionResult) -> (Vec<Reply>, Changed) {
    let stored = Arc::from(serde_json::value::to_raw_value(&result).unwrap());
    session.finish(&result, stored)
}

/// Runs one action through the session: start, then finish with `error`.
fn run(session: &mut Session<Job>, action_name: &str, error: Option<ErrorCode>) -> Changed {
    session.start("a");
    finish(session, result("a", action_name, error)).1
}

fn status_after(changed: Changed) -> Option<SessionStatus> {
    changed.map(|state| state.status)
}

#[test]
fn a_session_is_created_then_running_then_ongoing() {
    let mut session = Session::<Job>::new("s");
    assert_eq!(session.status(), SessionStatus::Created);
    assert_eq!(status_after(session.start("a")), Some(SessionStatus::Running));
    assert_eq!(session.state().in_flight.as_deref(), Some("a"));
    let (_, changed) = finish(&mut session, result("a", "browser_click", None));
    assert_eq!(status_after(changed), Some(SessionStatus::Ongoing));
    assert_eq!(session.state().in_flight, None);
}

#[test]
fn a_browser_failure_is_error_until_a_success() {
    let mut session = Session::<Job>::new("s");
    for code in [
        ErrorCode::AckTimeout,
        ErrorCode::ActionTimeout,
        ErrorCode::ClientOffline,
    ] {
        assert_eq!(
            status_after(run(&mut session, "browser_click", Some(code))),
            Some(SessionStatus::Error)
        );
        assert_eq!(session.state().last_error.map(|e| e.code), Some(code));
        assert_eq!(
            status_after(run(&mut session, "browser_click", None)),
            Some(SessionStatus::Ongoing)
        );
        assert_eq!(session.state().last_error, None);
    }
}

#[test]
fn an_actions_own_error_leaves_the_session_ongoing() {
    let mut session = Session::<Job>::new("s");
    run(&mut session, "browser_click", None);
    let changed = run(&mut session, "browser_click", Some(ErrorCode::ElementNotFound));
    assert_eq!(status_after(changed), Some(SessionStatus::Ongoing));
    assert_eq!(session.status(), SessionStatus::Ongoing);
    assert_eq!(
        session.state().last_error.map(|e| e.code),
        Some(ErrorCode::ElementNotFound)
    );
}

#[test]
fn a_stopped_session_runs_only_session_start() {
    let mut session = Session::<Job>::new("s");
    assert_eq!(
        status_after(run(&mut session, "session_stop", None)),
        Some(SessionStatus::Completed)
    );
    let refused = session.open_for(Some(ActionName::BrowserClick)).unwrap_err();
    assert_eq!(refused.code, ErrorCode::SessionNotActive);
    assert!(session.open_for(Some(ActionName::SessionStart)).is_ok());
    assert_eq!(session.status(), SessionStatus::Ongoing);
    assert!(session.open_for(Some(ActionName::BrowserClick)).is_ok());
}

#[test]
fn the_browser_is_the_named_one_the_bound_one_or_the_only_one() {
    let mut session = Session::<Job>::new("s");
    let (chosen, changed) = session.choose_client(None, || vec!["only".into()]);
    assert_eq!(chosen.unwrap(), "only");
    assert_eq!(
        changed, None,
        "bound to it, said by the running state that follows"
    );
    assert_eq!(session.client_id(), Some("only"));
    let (chosen, changed) = session.choose_client(None, || unreachable!("the binding decides"));
    assert_eq!((chosen.unwrap().as_str(), changed), ("only", None));
    let (chosen, _) = session.choose_client(Some("other"), || unreachable!());
    assert_eq!(chosen.unwrap(), "other");
    assert_eq!(
        session.client_id(),
        Some("only"),
        "a named browser does not rebind"
    );
}

#[test]
fn without_a_choice_the_session_waits_for_a_person() {
    for online in [vec![], vec!["a".to_owned(), "b".to_owned()]] {
        let mut session = Session::<Job>::new("s");
        let (chosen, changed) = session.choose_client(None, || online.clone());
        assert_eq!(chosen.unwrap_err().code, ErrorCode::NoClientSelected);
        assert_eq!(
            status_after(changed),
            Some(SessionStatus::WaitingForBrowserSelection)
        );
        let (_, changed) = finish(
            &mut session,
            result("a", "browser_click", Some(ErrorCode::NoClientSelected)),
        );
        assert_eq!(changed, None, "still waiting: nothing new to say");
        assert_eq!(status_after(session.bind("b")), Some(SessionStatus::Ongoing));
        assert_eq!(session.client_id(), Some("b"));
        assert_eq!(session.bind("b"), None, "nothing changed");
        assert_eq!(session.bind("c").and_then(|s| s.client_id).as_deref(), Some("c"));
    }
}

#[test]
fn confirmation_is_asked_as_the_mode_says() {
    let mut session = Session::<Job>::new("s");
    assert!(!session.needs_confirmation(ConfirmMode::Never));
    assert!(session.needs_confirmation(ConfirmMode::First));
    assert_eq!(
        status_after(session.await_confirmation()),
        Some(SessionStatus::WaitingForUserConfirmation)
    );
    session.confirmed();
    assert!(!session.needs_confirmation(ConfirmMode::First));
    assert!(session.needs_confirmation(ConfirmMode::Every));
}

#[test]
fn one_runner_drains_the_queue_in_order_up_to_its_limit() {
    let mut session = Session::<Job>::new("s");
    let admitted: Vec<bool> = ["a", "b"]
        .into_iter()
        .map(|id| match session.admit(job(id).0, 2) {
            Admitted::Queued { start_runner } => start_runner,
            _ => panic!("{id} should queue"),
        })
        .collect();
    assert_eq!(admitted, [true, false], "one runner, started once");
    // The runner has taken nothing yet: two wait, the limit.
    assert!(matches!(session.admit(job("c").0, 2), Admitted::Full(_)));
    let first = session.next_job().map(|j| j.request.action_id);
    assert!(matches!(
        session.admit(job("c").0, 2),
        Admitted::Queued { start_runner: false }
    ));
    let rest: Vec<String> = std::iter::from_fn(|| session.next_job())
        .map(|j| j.request.action_id)
        .collect();
    assert_eq!(
        (first.as_deref(), rest.as_slice()),
        (Some("a"), &["b".to_owned(), "c".to_owned()][..])
    );
    assert!(!session.has_runner(), "an empty queue ends the runner");
}

#[test]
fn a_repeated_action_id_gets_the_one_result() {
    let mut session = Session::<Job>::new("s");
    assert!(matches!(session.admit(job("a").0, 8), Admitted::Queued { .. }));
    let (repeat, repeat_rx) = job("a");
    let Admitted::Repeat(repeat) = session.admit(repeat, 8) else {
        panic!("a running id is a repeat")
    };
    session.attach("a", repeat.reply);
    let (waiting, _) = finish(&mut session, result("a", "browser_click", None));
    assert_eq!(waiting.len(), 1, "the repeat waits for the same result");
    for reply in waiting {
        reply.deliver(result("a", "browser_click", None));
    }
    assert_eq!(repeat_rx.blocking_recv().unwrap().action_id, "a");
    let Admitted::Replay(_, stored) = session.admit(job("a").0, 8) else {
        panic!("a finished id is replayed")
    };
    assert!(stored.get().contains("\"actionId\":\"a\""));
}

#[test]
fn only_the_last_results_are_kept_for_replay() {
    let mut session = Session::<Job>::new("s");
    for n in 0..=KEPT_RESULTS {
        finish(&mut session, result(&format!("a{n}"), "browser_click", None));
    }
    assert!(
        matches!(session.admit(job("a0").0, 8), Admitted::Queued { .. }),
        "the oldest is forgotten"
    );
    assert!(matches!(session.admit(job("a1").0, 8), Admitted::Replay(..)));
}

fn stored_of(result: &ActionResult) -> Stored {
    Arc::from(serde_json::value::to_raw_value(result).unwrap())
}

/// Runs action `id` of session "s" on tab 7 as the relay does, each change kept; `end` none
/// leaves it with the browser, as a relay that dies does.
async fn act(sessions: &Sessions<Job>, id: &str, end: Option<Option<ErrorCode>>) {
    let started = Action::Started {
        action_id: id.into(),
        action_name: "browser_click".into(),
        tab_id: Some(7),
    };
    let ((), kept) = sessions.keep("s", |s| {
        s.start(id);
        ((), Fact::action(started))
    });
    kept.wait().await;
    let Some(error) = end else { return };
    let done = result(id, "browser_click", error);
    let stored = stored_of(&done);
    let ((), kept) = sessions.keep("s", |s| {
        s.follow_tab(&json!({ "tabId": 7 }), &done);
        finish(s, done.clone());
        ((), s.finished_fact(id, &stored))
    });
    kept.wait().await;
}

/// The sessions of a relay started again on the same store: nothing in memory.
fn restarted(sessions: Sessions<Job>) -> Sessions<Job> {
    Sessions::<Job>::new(sessions.store.clone())
}

fn new_sessions() -> Sessions<Job> {
    Sessions::<Job>::new(Arc::new(Store::in_memory()))
}

/// The ids of the results session "s" keeps for replay in the store, in order.
fn kept_ids(sessions: &Sessions<Job>) -> Vec<String> {
    let loaded = sessions.store().load("s").unwrap();
    loaded.results.into_iter().map(|(id, _)| id).collect()
}

#[tokio::test]
async fn a_restart_keeps_binding_status_tab_and_results() {
    let sessions = new_sessions();
    let ((), kept) = sessions.keep("s", |s| {
        s.bind("c");
        ((), Fact::head())
    });
    kept.wait().await;
    act(&sessions, "on-7", Some(None)).await;
    act(&sessions, "a", Some(Some(ErrorCode::ClientOffline))).await;
    let sessions = restarted(sessions);
    let state = sessions.state("s");
    assert_eq!(
        (state.status, state.client_id.as_deref(), state.in_flight),
        (SessionStatus::Error, Some("c"), None)
    );
    assert_eq!(sessions.screen_of("s").1, Some(7));
    assert_eq!(sessions.bound_to("c"), ["s"]);
    assert_eq!(sessions.going_bound_to("c"), ["s"]);
    let replayed = sessions.update("s", |s| match s.admit(job("a").0, 8) {
        Admitted::Replay(_, stored) => stored.get().contains("CLIENT_OFFLINE"),
        _ => false,
    });
    assert!(replayed, "the result is kept for a repeat");
}

#[tokio::test]
async fn an_action_the_browser_had_at_a_crash_ends_with_the_browsers_kept_result() {
    let sessions = new_sessions();
    act(&sessions, "a", None).await;
    let sessions = restarted(sessions);
    let state = sessions.state("s");
    assert_eq!(
        (state.status, state.in_flight),
        (SessionStatus::Created, None),
        "nothing runs after a restart"
    );
    let kept = result("a", "browser_click", None);
    let ended = sessions.update("s", |s| {
        matches!(s.kept(&kept, stored_of(&kept)), Kept::Ended(..))
    });
    assert!(ended, "the kept result is the action's one result");
    assert_eq!(sessions.state("s").status, SessionStatus::Ongoing);
    // Again (the host says it twice after a reconnect): the relay has it.
    assert!(sessions.update("s", |s| matches!(s.kept(&kept, stored_of(&kept)), Kept::Ignored)));
}

#[tokio::test]
async fn an_unsettled_action_repeated_goes_to_the_browser_again() {
    let sessions = new_sessions();
    act(&sessions, "a", None).await;
    let sessions = restarted(sessions);
    let queued = sessions.update("s", |s| matches!(s.admit(job("a").0, 8), Admitted::Queued { .. }));
    assert!(queued, "the browser answers it from what it kept");
}

#[test]
fn a_browsers_kept_result_replaces_the_relays_verdict_only() {
    let mut session = Session::<Job>::new("s");
    finish(
        &mut session,
        result("offline", "browser_click", Some(ErrorCode::ClientOffline)),
    );
    finish(
        &mut session,
        result("own", "browser_click", Some(ErrorCode::ElementNotFound)),
    );
    for (id, replaced) in [("offline", true), ("own", false), ("never", false)] {
        let kept = result(id, "browser_click", None);
        let fate = session.kept(&kept, stored_of(&kept));
        assert_eq!(matches!(fate, Kept::Replaced), replaced, "{id}");
    }
    let Admitted::Replay(_, stored) = session.admit(job("offline").0, 8) else {
        panic!("replayed")
    };
    assert!(stored.get().contains("\"status\":\"success\""));
}

#[tokio::test]
async fn the_store_keeps_the_last_results_as_memory_does() {
    let sessions = new_sessions();
    for n in 0..=KEPT_RESULTS {
        act(&sessions, &format!("a{n}"), Some(None)).await;
    }
    let ids = kept_ids(&sessions);
    assert_eq!(ids.len(), KEPT_RESULTS);
    assert_eq!(
        (ids[0].as_str(), ids[KEPT_RESULTS - 1].as_str()),
        ("a1", "a64"),
        "in order, a0 pushed out"
    );
}

#[tokio::test]
async fn a_session_that_left_memory_comes_back_with_its_results() {
    let sessions = new_sessions();
    act(&sessions, "a", Some(None)).await;
    sessions.update("running", |s| {
        s.start("b");
    });
    let evicted = sessions.evict_idle(now_ms() + 1, usize::MAX);
    assert_eq!(evicted, ["s"], "the running one stays");
    assert_eq!(sessions.count(), 1);
    assert_eq!(
        sessions.state("s").status,
        SessionStatus::Ongoing,
        "read from the store"
    );
    let replayed = sessions.update("s", |s| matches!(s.admit(job("a").0, 8), Admitted::Replay(..)));
    assert!(replayed);
    assert!(
        sessions.evict_idle(now_ms() - 60_000, usize::MAX).is_empty(),
        "recent ones stay"
    );
    assert_eq!(
        sessions.evict_idle(now_ms() - 60_000, 0),
        ["s"],
        "past the count, idle ones go"
    );
}

#[tokio::test]
async fn sessions_past_the_retention_leave_the_store_in_batches_running_ones_stay() {
    let sessions = new_sessions();
    for n in 0..5 {
        let id = format!("old{n}");
        sessions.keep(&id, |_| ((), Fact::head())).1.wait().await;
    }
    sessions.update("old4", |s| {
        s.start("a");
    });
    sessions.evict_idle(now_ms() + 1, usize::MAX);
    let later = now_ms() + 1;
    let store = sessions.store();
    let first = store
        .expire(later, crate::stores::store::FIRST, 2, |id| {
            sessions.active_since(id, later)
        })
        .await;
    assert_eq!(first.ids, ["old0", "old1"]);
    let second = store
        .expire(later, first.next.unwrap(), 2, |id| {
            sessions.active_since(id, later)
        })
        .await;
    assert_eq!(second.ids, ["old2", "old3"]);
    let last = store
        .expire(later, second.next.unwrap(), 2, |id| {
            sessions.active_since(id, later)
        })
        .await;
    assert!(last.ids.is_empty(), "old4 is running: {:?}", last.ids);
    assert!(last.next.is_none());
    assert_eq!(store.counts().0, 1);
}

#[test]
fn an_earlier_versions_journal_is_imported_once() {
    let dir = tempfile::tempdir().unwrap();
    let done = stored_of(&result("a", "browser_click", Some(ErrorCode::ClientOffline)));
    let records = [
        Record::Bound {
            session_id: "s".into(),
            client_id: "c".into(),
        },
        Record::Finished {
            session_id: "s".into(),
            current_tab: Some(7),
            result: &done,
        },
        Record::Started {
            session_id: "s".into(),
            action_id: "b".into(),
            action_name: "browser_click".into(),
            tab_id: Some(7),
        },
    ];
    let lines: Vec<u8> = records
        .iter()
        .flat_map(|r| crate::stores::store::line(r).unwrap())
        .collect();
    std::fs::write(dir.path().join("sessions.jsonl"), lines).unwrap();
    let store = Arc::new(Store::open(dir.path()).unwrap());
    let imported = import_journal(dir.path(), &store).unwrap();
    assert_eq!(imported.records, 3);
    assert!(dir.path().join("sessions.jsonl.imported").exists());
    assert!(!dir.path().join("sessions.jsonl").exists());
    assert_eq!(import_journal(dir.path(), &store).unwrap().records, 0, "once");
    let sessions = Sessions::<Job>::new(store);
    let state = sessions.state("s");
    assert_eq!(
        (state.status, state.client_id.as_deref()),
        (SessionStatus::Error, Some("c"))
    );
    let (replayed, queued) = sessions.update("s", |s| {
        let a = matches!(s.admit(job("a").0, 8), Admitted::Replay(..));
        let b = matches!(s.admit(job("b").0, 8), Admitted::Queued { .. });
        (a, b)
    });
    assert!(
        replayed && queued,
        "a's result replays; b, unsettled, goes to the browser again"
    );
}
