//! The host's half of "nothing lost" (docs/protocol.md §13): every action the relay sends runs at
//! most once, and its result reaches the relay even when the link drops while it runs.
//!
//! Results are kept by (sessionId, actionId), beyond any one connection: a repeat of an action
//! that is running waits for its result, a repeat of a finished one gets the kept result, and
//! a result that could not be sent (no link, or the link died before writing it) is sent when
//! the host joins again. A result written to a socket the relay then lost is still kept: the
//! relay, knowing it sent the action, sends it again and gets it from here.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};

use tether_protocol::messages::{Message, RESULT_KIND};
use tether_protocol::{ActionResult, Envelope};
use tokio::sync::mpsc;

/// How many finished actions are kept, and how many bytes of results at most: enough for the
/// repeats of a relay restart (each session has one action with the browser at a time).
const KEPT_ACTIONS: usize = 1024;
const KEPT_BYTES: usize = 64 << 20;

/// Where envelopes for the relay go on the current connection.
pub type Outbox = mpsc::UnboundedSender<Envelope>;

type Key = (String, String);

/// What to do with an action the relay sent.
pub enum Begin {
    /// Run it, then hand its result to [`Deliveries::finish`].
    Run,
    /// It is running: its result will answer this envelope too.
    Waiting,
    /// It ran: here is its result again.
    Done(Envelope),
}

struct Kept {
    result: Arc<ActionResult>,
    bytes: usize,
    /// The envelope it last answered, and whether it was written to the relay.
    reply_to: Option<String>,
    sent: bool,
}

#[derive(Default)]
struct Inner {
    link: Option<Outbox>,
    /// Running actions, with the envelopes their result answers.
    running: HashMap<Key, Vec<Option<String>>>,
    done: HashMap<Key, Kept>,
    order: VecDeque<Key>,
    bytes: usize,
}

#[derive(Default)]
pub struct Deliveries {
    inner: Mutex<Inner>,
}

impl Deliveries {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A connection joined: results go out on it from now on, starting with those kept unsent.
    pub fn connected(&self, outbox: Outbox) {
        let mut inner = self.lock();
        let unsent: Vec<Envelope> = inner
            .order
            .iter()
            .filter_map(|key| inner.done.get(key))
            .filter(|kept| !kept.sent)
            .map(|kept| answer(&kept.result, kept.reply_to.clone(), false))
            .collect();
        if !unsent.is_empty() {
            tracing::info!(
                count = unsent.len(),
                "delivering results kept while the relay was away"
            );
        }
        for envelope in unsent {
            let _ = outbox.send(envelope);
        }
        inner.done.values_mut().for_each(|kept| kept.sent = true);
        inner.link = Some(outbox);
    }

    /// The connection ended: results wait for the next one.
    pub fn disconnected(&self) {
        self.lock().link = None;
    }

    /// An envelope that was never written to the relay: if it was a result, it is sent again on
    /// the next connection.
    pub fn unsent(&self, envelope: &Envelope) {
        if envelope.kind != RESULT_KIND {
            return;
        }
        /// The fields of a result that name its action.
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Key {
            session_id: String,
            action_id: String,
        }
        let Ok(Key {
            session_id,
            action_id,
        }) = serde_json::from_str(envelope.payload.get())
        else {
            return;
        };
        let key = (session_id, action_id);
        if let Some(kept) = self.lock().done.get_mut(&key) {
            kept.sent = false;
        }
    }

    /// The relay sent an action (as the envelope `reply_to`).
    pub fn begin(&self, session_id: &str, action_id: &str, reply_to: Option<String>) -> Begin {
        let key = (session_id.to_owned(), action_id.to_owned());
        let mut inner = self.lock();
        if let Some(kept) = inner.done.get_mut(&key) {
            kept.reply_to = reply_to.clone();
            kept.sent = true;
            return Begin::Done(answer(&kept.result, reply_to, true));
        }
        match inner.running.get_mut(&key) {
            Some(waiting) => {
                waiting.push(reply_to);
                Begin::Waiting
            }
            None => {
                inner.running.insert(key, vec![reply_to]);
                Begin::Run
            }
        }
    }

    /// An action ended: its result goes to every envelope that asked for it, now if the host
    /// is joined, else when it joins again.
    pub fn finish(&self, result: ActionResult, bytes: usize) {
        let key = (result.session_id.clone(), result.action_id.clone());
        let result = Arc::new(result);
        let mut inner = self.lock();
        let waiting = inner.running.remove(&key).unwrap_or_default();
        let link = inner.link.clone();
        let mut sent = !waiting.is_empty();
        for (n, reply_to) in waiting.iter().enumerate() {
            let delivered = link
                .as_ref()
                .is_some_and(|link| link.send(answer(&result, reply_to.clone(), n > 0)).is_ok());
            sent &= delivered;
        }
        let kept = Kept {
            result,
            bytes,
            reply_to: waiting.into_iter().last().flatten(),
            sent,
        };
        inner.keep(key, kept);
    }
}

impl Inner {
    fn keep(&mut self, key: Key, kept: Kept) {
        self.bytes += kept.bytes;
        if let Some(old) = self.done.insert(key.clone(), kept) {
            self.bytes -= old.bytes;
        } else {
            self.order.push_back(key);
        }
        while self.order.len() > KEPT_ACTIONS || self.bytes > KEPT_BYTES {
            let Some(oldest) = self.order.pop_front() else {
                break;
            };
            if let Some(old) = self.done.remove(&oldest) {
                self.bytes -= old.bytes;
                if !old.sent {
                    tracing::warn!(
                        action_id = oldest.1,
                        "a result the relay never had was dropped to bound memory"
                    );
                }
            }
        }
    }
}

/// The result as an answer to `reply_to`; `replayed` when it answers a repeat.
fn answer(result: &ActionResult, reply_to: Option<String>, replayed: bool) -> Envelope {
    let mut result = result.clone();
    result.replayed = replayed.then_some(true);
    Envelope::of(Message::BrowserActionResult(result)).reply_to(reply_to)
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Utc;
    use tether_protocol::result::{ActionHeader, Output};

    fn result(action_id: &str) -> ActionResult {
        let header = ActionHeader {
            action_id: action_id.into(),
            action_name: "browser_click".into(),
            session_id: "s".into(),
            client_id: "c".into(),
        };
        ActionResult::new(
            header,
            Utc::now(),
            Utc::now(),
            Ok(Output::of(&serde_json::json!({}))),
        )
    }

    fn drain(rx: &mut mpsc::UnboundedReceiver<Envelope>) -> Vec<Option<String>> {
        std::iter::from_fn(|| rx.try_recv().ok())
            .map(|e| e.reply_to)
            .collect()
    }

    #[test]
    fn an_action_runs_once_and_every_envelope_gets_its_result() {
        let deliveries = Deliveries::default();
        let (tx, mut rx) = mpsc::unbounded_channel();
        deliveries.connected(tx);
        assert!(matches!(
            deliveries.begin("s", "a", Some("d1".into())),
            Begin::Run
        ));
        assert!(matches!(
            deliveries.begin("s", "a", Some("d2".into())),
            Begin::Waiting
        ));
        deliveries.finish(result("a"), 10);
        assert_eq!(drain(&mut rx), [Some("d1".into()), Some("d2".into())]);
        let Begin::Done(again) = deliveries.begin("s", "a", Some("d3".into())) else {
            panic!("a finished action is not run again")
        };
        assert_eq!(again.reply_to.as_deref(), Some("d3"));
        let payload: serde_json::Value = serde_json::from_str(again.payload.get()).unwrap();
        assert_eq!(payload["replayed"], true);
        assert!(
            matches!(deliveries.begin("other", "a", None), Begin::Run),
            "ids are per session"
        );
    }

    #[test]
    fn a_result_without_a_link_is_sent_when_the_host_joins_again() {
        let deliveries = Deliveries::default();
        let (tx, mut rx) = mpsc::unbounded_channel();
        deliveries.connected(tx);
        deliveries.begin("s", "a", Some("d1".into()));
        deliveries.begin("s", "b", Some("d2".into()));
        deliveries.disconnected();
        deliveries.finish(result("a"), 10);
        assert!(drain(&mut rx).is_empty());
        // Written to the old connection's queue, never to the socket.
        let (tx, rx_lost) = mpsc::unbounded_channel();
        deliveries.connected(tx);
        deliveries.finish(result("b"), 10);
        let lost: Vec<Envelope> = {
            let mut rx = rx_lost;
            std::iter::from_fn(|| rx.try_recv().ok()).collect()
        };
        assert_eq!(lost.len(), 2, "a, kept unsent, then b");
        deliveries.disconnected();
        deliveries.unsent(&lost[1]);

        let (tx, mut rx) = mpsc::unbounded_channel();
        deliveries.connected(tx);
        assert_eq!(
            drain(&mut rx),
            [Some("d2".into())],
            "only what never reached a socket"
        );
    }

    #[test]
    fn memory_is_bounded() {
        let deliveries = Deliveries::default();
        for n in 0..=KEPT_ACTIONS {
            deliveries.begin("s", &n.to_string(), None);
            deliveries.finish(result(&n.to_string()), KEPT_BYTES / 4);
        }
        let inner = deliveries.lock();
        assert!(
            inner.bytes <= KEPT_BYTES && inner.done.len() == 4,
            "{}",
            inner.done.len()
        );
    }
}
