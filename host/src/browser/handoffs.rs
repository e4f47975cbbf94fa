//! The handoffs a host's actions wait on (`browser_handoff`, docs/protocol.md §18): each
//! waits, by session and action, for a person's answer, which comes from the relay
//! (`handoff.answer`, from its console) or from the browser's owner (the popup).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use tether_protocol::actions::TabId;

use tether_protocol::messages::{HandedBack, HandoffAnswer, HandoffRequested};
use tokio::sync::{oneshot, watch};

/// A person's answer to a handoff.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub outcome: HandedBack,
    pub note: Option<String>,
}

type Key = (String, String);

/// The handoffs waiting for a person, by (sessionId, actionId).
#[derive(Default)]
pub struct Handoffs {
    waiting: Mutex<HashMap<Key, (HandoffRequested, oneshot::Sender<Answer>)>>,
    /// Counts the changes to what waits, for the owner's popup to follow.
    changes: watch::Sender<u64>,
    /// Whether anything can pass a person's answer here (a relay link): without it a handoff
    /// would wait for no one (`exec`, `mcp` on stdio).
    reachable: AtomicBool,
}

/// One handoff's wait; it stops waiting when dropped (the action timed out or was cut short).
pub struct Waiting<'a> {
    handoffs: &'a Handoffs,
    key: Key,
    answer: oneshot::Receiver<Answer>,
}

impl Handoffs {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, (HandoffRequested, oneshot::Sender<Answer>)>> {
        self.waiting.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn changed(&self) {
        self.changes.send_modify(|n| *n += 1);
    }

    /// Told of each change to the handoffs waiting.
    pub fn follow(&self) -> watch::Receiver<u64> {
        self.changes.subscribe()
    }

    /// From now on a person's answers can arrive.
    pub fn set_reachable(&self) {
        self.reachable.store(true, Ordering::Relaxed);
    }

    pub fn reachable(&self) -> bool {
        self.reachable.load(Ordering::Relaxed)
    }

    /// Starts waiting for the person's answer to a handoff.
    pub fn wait(&self, asked: HandoffRequested) -> Waiting<'_> {
        let (tell, answer) = oneshot::channel();
        let key = (asked.session_id.clone(), asked.action_id.clone());
        self.lock().insert(key.clone(), (asked, tell));
        self.changed();
        Waiting {
            handoffs: self,
            key,
            answer,
        }
    }

    /// Hands a person's answer to the handoff it names; whether one was waiting for it.
    pub fn answer(&self, answer: HandoffAnswer) -> bool {
        let key = (answer.session_id, answer.action_id);
        let Some((_, tell)) = self.lock().remove(&key) else {
            return false;
        };
        self.changed();
        let note = answer.note.filter(|n| !n.trim().is_empty());
        tell.send(Answer {
            outcome: answer.outcome,
            note,
        })
        .is_ok()
    }

    /// The tab of the handoff (`session_id`, `action_id`), waiting up to `within` for it to
    /// begin: a person's first input can overtake the action on its way to waiting.
    pub async fn tab_of(&self, session_id: &str, action_id: &str, within: Duration) -> Option<TabId> {
        let mut changes = self.follow();
        let key = (session_id.to_owned(), action_id.to_owned());
        let found = || self.lock().get(&key).map(|(asked, _)| asked.tab_id);
        let begun = async {
            loop {
                if let Some(tab) = found() {
                    return Some(tab);
                }
                changes.changed().await.ok()?;
            }
        };
        tokio::time::timeout(within, begun).await.ok().flatten()
    }

    /// The handoffs waiting now.
    pub fn waiting(&self) -> Vec<HandoffRequested> {
        self.lock().values().map(|(asked, _)| asked.clone()).collect()
    }
}

impl Waiting<'_> {
    /// The person's answer.
    pub async fn answered(&mut self) -> Option<Answer> {
        (&mut self.answer).await.ok()
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        if self.handoffs.lock().remove(&self.key).is_some() {
            self.handoffs.changed();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(action_id: &str, outcome: HandedBack, note: Option<&str>) -> HandoffAnswer {
        HandoffAnswer {
            session_id: "s".into(),
            action_id: action_id.into(),
            outcome,
            note: note.map(str::to_owned),
        }
    }

    fn asked(action_id: &str) -> HandoffRequested {
        HandoffRequested {
            session_id: "s".into(),
            tab_id: 1,
            action_id: action_id.into(),
            message: "log in".into(),
        }
    }

    #[tokio::test]
    async fn an_answer_reaches_the_handoff_it_names_once() {
        let handoffs = Handoffs::default();
        let mut waiting = handoffs.wait(asked("a1"));
        assert!(
            !handoffs.answer(answer("a2", HandedBack::Done, None)),
            "another action's"
        );
        assert!(handoffs.answer(answer("a1", HandedBack::Done, Some("logged in"))));
        assert!(
            !handoffs.answer(answer("a1", HandedBack::Declined, None)),
            "answered already"
        );
        let got = waiting.answered().await.unwrap();
        assert_eq!(
            got,
            Answer {
                outcome: HandedBack::Done,
                note: Some("logged in".into())
            }
        );
    }

    #[test]
    fn a_handoff_that_stopped_waiting_takes_no_answer() {
        let handoffs = Handoffs::default();
        drop(handoffs.wait(asked("a1")));
        assert!(handoffs.waiting().is_empty());
        assert!(!handoffs.answer(answer("a1", HandedBack::Done, None)));
    }
}
