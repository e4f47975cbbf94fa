//! The session's transitions against docs/protocol.md §2.3's status rules.

use chrono::Utc;
use serde_json::json;
use tether_protocol::result::{ActionHeader, Output};
use tether_protocol::{ActionError, ActionResult, ErrorCode};
use tokio::sync::oneshot;

use super::*;
use crate::journal::Journal;

fn request(action_id: &str, action_name: &str) -> Request {
    Request {
        session_id: "s".into(),
        client_id: None,
        action_id: action_id.into(),
        action: crate::request::Named::new(action_name.into()),
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

fn finish(session: &mut Session, result: ActionResult) -> (Vec<Reply>, Changed) {
    let stored = Arc::from(serde_json::value::to_raw_value(&result).unwrap());
    session.finish(&result, stored)
}

/// Runs one action through the session: start, then finish with `error`.
fn run(session: &mut Session, action_name: &str, error: Option<ErrorCode>) -> Changed {
    session.start("a");
    finish(session, result("a", action_name, error)).1
}

fn status_after(changed: Changed) -> Option<SessionStatus> {
    changed.map(|state| state.status)
}

#[test]
fn a_session_is_created_then_running_then_ongoing() {
    let mut session = Session::new("s");
    assert_eq!(session.status(), SessionStatus::Created);
    assert_eq!(status_after(session.start("a")), Some(SessionStatus::Running));
    assert_eq!(session.state().in_flight.as_deref(), Some("a"));
    let (_, changed) = finish(&mut session, result("a", "browser_click", None));
    assert_eq!(status_after(changed), Some(SessionStatus::Ongoing));
    assert_eq!(session.state().in_flight, None);
}

#[test]
fn a_browser_failure_is_error_until_a_success() {
    let mut session = Session::new("s");
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
    let mut session = Session::new("s");
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
    let mut session = Session::new("s");
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
    let mut session = Session::new("s");
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
        let mut session = Session::new("s");
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
    let mut session = Session::new("s");
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
    let mut session = Session::new("s");
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
    let mut session = Session::new("s");
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
    let mut session = Session::new("s");
    for n in 0..=KEPT_RESULTS {
        finish(&mut session, result(&format!("a{n}"), "browser_click", None));
    }
    assert!(
        matches!(session.admit(job("a0").0, 8), Admitted::Queued { .. }),
        "the oldest is forgotten"
    );
    assert!(matches!(session.admit(job("a1").0, 8), Admitted::Replay(..)));
}

/// A session rebuilt from the journal's records of `write`, as a relay that restarts does.
fn rebuilt(write: impl FnOnce(&Journal)) -> Sessions {
    let dir = tempfile::tempdir().unwrap();
    write(&Journal::rewrite(dir.path(), []).unwrap());
    let sessions = Sessions::default();
    crate::journal::replay(dir.path(), |record| sessions.replay(record)).unwrap();
    sessions.woken();
    // And once more through the snapshot the restart writes.
    let snapshot_dir = tempfile::tempdir().unwrap();
    sessions
        .snapshots(|all| Journal::rewrite(snapshot_dir.path(), all))
        .unwrap();
    let again = Sessions::default();
    crate::journal::replay(snapshot_dir.path(), |record| again.replay(record)).unwrap();
    again.woken();
    again
}

fn started(journal: &Journal, action_id: &str) {
    journal.append(&Record::Started {
        session_id: "s".into(),
        action_id: action_id.into(),
        action_name: "browser_click".into(),
        tab_id: Some(7),
    });
}

fn finished(journal: &Journal, result: &ActionResult) {
    let raw = serde_json::value::to_raw_value(result).unwrap();
    journal.append(&Record::Finished {
        session_id: "s".into(),
        current_tab: Some(7),
        result: &raw,
    });
}

#[test]
fn a_restart_keeps_binding_status_tab_and_results() {
    let sessions = rebuilt(|journal| {
        journal.append(&Record::Bound {
            session_id: "s".into(),
            client_id: "c".into(),
        });
        started(journal, "a");
        finished(
            journal,
            &result("a", "browser_click", Some(ErrorCode::ClientOffline)),
        );
    });
    let state = sessions.state("s");
    assert_eq!(
        (state.status, state.client_id.as_deref(), state.in_flight),
        (SessionStatus::Error, Some("c"), None)
    );
    assert_eq!(sessions.screen_of("s").1, Some(7));
    let replayed = sessions.update("s", |s| match s.admit(job("a").0, 8) {
        Admitted::Replay(_, stored) => stored.get().contains("CLIENT_OFFLINE"),
        _ => false,
    });
    assert!(replayed, "the result is kept for a repeat");
}

#[test]
fn an_action_the_browser_had_at_a_crash_ends_with_the_browsers_kept_result() {
    let sessions = rebuilt(|journal| started(journal, "a"));
    let state = sessions.state("s");
    assert_eq!(
        (state.status, state.in_flight),
        (SessionStatus::Created, None),
        "nothing runs after a restart"
    );
    let kept = result("a", "browser_click", None);
    let stored = Arc::from(serde_json::value::to_raw_value(&kept).unwrap());
    let ended = sessions.update("s", |s| matches!(s.kept(&kept, stored), Kept::Ended(..)));
    assert!(ended, "the kept result is the action's one result");
    assert_eq!(sessions.state("s").status, SessionStatus::Ongoing);
    // Again (the host says it twice after a reconnect): the relay has it.
    let stored = Arc::from(serde_json::value::to_raw_value(&kept).unwrap());
    assert!(sessions.update("s", |s| matches!(s.kept(&kept, stored), Kept::Ignored)));
}

#[test]
fn an_unsettled_action_repeated_goes_to_the_browser_again() {
    let sessions = rebuilt(|journal| started(journal, "a"));
    let queued = sessions.update("s", |s| matches!(s.admit(job("a").0, 8), Admitted::Queued { .. }));
    assert!(queued, "the browser answers it from what it kept");
}

#[test]
fn a_browsers_kept_result_replaces_the_relays_verdict_only() {
    let mut session = Session::new("s");
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
        let stored = Arc::from(serde_json::value::to_raw_value(&kept).unwrap());
        let fate = session.kept(&kept, stored);
        assert_eq!(matches!(fate, Kept::Replaced), replaced, "{id}");
    }
    let Admitted::Replay(_, stored) = session.admit(job("offline").0, 8) else {
        panic!("replayed")
    };
    assert!(stored.get().contains("\"status\":\"success\""));
}

/// Runs action `id` of session "s" as the relay does: each change, then its journal record.
fn act(sessions: &Sessions, journal: &Journal, id: &str) {
    sessions.update("s", |s| s.start(id));
    started(journal, id);
    let done = result(id, "browser_click", None);
    sessions.update("s", |s| finish(s, done.clone()));
    finished(journal, &done);
}

/// The ids of the results session "s" keeps for replay, in order.
fn kept_ids(sessions: &Sessions) -> Vec<String> {
    sessions.snapshots(|all| {
        all.flat_map(|s| s.results.into_iter())
            .map(|raw| serde_json::from_str::<ActionId>(raw.get()).unwrap().action_id)
            .collect()
    })
}

fn replayed(dir: &std::path::Path) -> Sessions {
    let sessions = Sessions::default();
    crate::journal::replay(dir, |record| sessions.replay(record)).unwrap();
    sessions.woken();
    sessions
}

#[test]
fn a_compaction_keeps_each_record_appended_while_it_ran_once() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::rewrite(dir.path(), []).unwrap();
    let sessions = Sessions::default();
    for id in ["a1", "a2"] {
        act(&sessions, &journal, id);
    }
    journal
        .compact(|out| {
            // Changed before the snapshot, its records appended after it: in both.
            sessions.update("s", |s| s.start("a3"));
            let done = result("a3", "browser_click", None);
            sessions.update("s", |s| finish(s, done.clone()));
            sessions.write_snapshots(out)?;
            started(&journal, "a3");
            finished(&journal, &done);
            // All after the snapshot: in the buffer only.
            act(&sessions, &journal, "a4");
            Ok(())
        })
        .unwrap();
    act(&sessions, &journal, "a5");
    let back = replayed(dir.path());
    assert_eq!(
        kept_ids(&back),
        ["a1", "a2", "a3", "a4", "a5"],
        "each once, in order"
    );
    assert_eq!(back.state("s").status, SessionStatus::Ongoing);
    let lines = std::fs::read_to_string(dir.path().join("sessions.jsonl")).unwrap();
    assert_eq!(
        lines.matches("\"actionId\":\"a1\"").count(),
        1,
        "a1's records gave way to the snapshot: {lines}"
    );
}

#[test]
fn a_compaction_cut_short_leaves_the_old_journal_whole() {
    let dir = tempfile::tempdir().unwrap();
    let journal = Journal::rewrite(dir.path(), []).unwrap();
    let sessions = Sessions::default();
    act(&sessions, &journal, "a1");
    let cut = journal.compact(|out| {
        out.write_all(b"{\"session\":{\"sessionId\":\"s\",\"res")?;
        act(&sessions, &journal, "a2");
        Err(std::io::Error::other("the disk is full"))
    });
    assert!(cut.is_err());
    act(&sessions, &journal, "a3");
    assert_eq!(kept_ids(&replayed(dir.path())), ["a1", "a2", "a3"]);
    // The next one goes through, and the half-written file left behind is not read.
    journal.compact(|out| sessions.write_snapshots(out)).unwrap();
    assert_eq!(kept_ids(&replayed(dir.path())), ["a1", "a2", "a3"]);
}

#[test]
fn sessions_idle_past_the_retention_are_forgotten_and_running_ones_kept() {
    let sessions = Sessions::default();
    sessions.update("ended", |s| {
        run(s, "session_stop", None);
    });
    sessions.update("running", |s| {
        s.start("a");
    });
    let later = now_ms() + 1;
    assert_eq!(sessions.forget_idle(later), ["ended"]);
    assert_eq!(sessions.count(), 1);
    assert!(
        sessions.forget_idle(now_ms() - 60_000).is_empty(),
        "recent ones stay"
    );
}
