//! The relay's events (docs/protocol.md §2.4): what subscribers on WS `subscribe` and on SSE see.
//!
//! A session's events are written to its log first (§7), so each carries the `eventIndex` it
//! has there, and a subscriber that falls behind or reconnects catches up from the log: none
//! lost, none doubled. A browser's own events (its twin, online/offline) are published once
//! for subscribers of that client, and copied into the log of every session bound to it.
//!
//! In a deployment of several relays (docs/protocol.md §14), a session's events are written by the
//! relay that owns it and reach the others through [`SharedLogs`]: a subscriber on any relay
//! sees them live, and catches up from the owner's log.

use std::collections::VecDeque;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use tether_protocol::envelope::Payload;
use tether_protocol::messages::Message;
use tokio::sync::broadcast;

use crate::stores::session_log::{Direction, Entry, Line, SessionLog, Write};

/// The types a subscriber receives; the log holds more (requests, acks).
pub const EVENT_KINDS: &[&str] = &[
    "session.state",
    "action.started",
    "browser_action.result",
    "twin_state_sync",
    "browser_task.confirmation_requested",
    "client.online",
    "client.offline",
    "stream_end",
];

/// How many events may be in flight to subscribers before a slow one falls behind (and then
/// catches up from the log).
const BUFFER: usize = 4096;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    Session(String),
    Client(String),
}

#[derive(Debug, Clone)]
pub struct Event {
    pub scope: Scope,
    /// The event's index in its session's log (None for a client's own events, or when the
    /// log could not be written).
    pub index: Option<u64>,
    pub kind: String,
    pub payload: Payload,
    pub timestamp_ms: i64,
    /// A client event copied into a session's log (an all-seeing subscriber already has it).
    pub copy: bool,
}

/// A session event as it is logged and published: its direction, type and payload.
pub struct Logged {
    pub direction: Direction,
    pub kind: &'static str,
    pub payload: Payload,
}

impl Logged {
    pub fn of(direction: Direction, message: &Message) -> Self {
        let (kind, payload) = message.split();
        Self {
            direction,
            kind,
            payload,
        }
    }

    fn line(&self) -> Line<'_> {
        Line {
            direction: self.direction,
            kind: self.kind,
            payload: &self.payload,
        }
    }
}

/// What one subscriber wants. Both `None`: everything (orchestrators only).
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub session: Option<String>,
    pub client: Option<String>,
}

impl Filter {
    fn wants(&self, event: &Event) -> bool {
        match (&event.scope, &self.session, &self.client) {
            (_, None, None) => !event.copy,
            (Scope::Session(s), Some(want), _) => s == want,
            (Scope::Client(c), _, Some(want)) => c == want,
            _ => false,
        }
    }
}

/// How much of a session's log a catching-up subscriber reads at a time: its memory, whatever
/// the log's length.
const REPLAY_PAGE: (usize, u64) = (256, 1 << 20);

pub struct Events {
    log: SessionLog,
    live: broadcast::Sender<Arc<Event>>,
    shared: std::sync::OnceLock<Box<dyn SharedLogs>>,
}

/// How a relay of a deployment shares its sessions' events, and reads the logs of sessions
/// other relays own.
pub trait SharedLogs: Send + Sync {
    /// A session event this relay logged, for the other relays.
    fn publish(&self, event: &Event);
    /// A session's logged events after `after`, wherever the session is owned.
    fn replay(
        &self,
        session: String,
        after: Option<u64>,
    ) -> futures::future::BoxFuture<'static, Vec<Arc<Event>>>;
}

impl Events {
    pub fn new(log: SessionLog) -> Self {
        Self {
            log,
            live: broadcast::channel(BUFFER).0,
            shared: std::sync::OnceLock::new(),
        }
    }

    /// The sessions' logs.
    /// Event streams open now (each holds one receiver of the live events).
    pub fn subscribers(&self) -> usize {
        self.live.receiver_count()
    }

    pub fn log(&self) -> &SessionLog {
        &self.log
    }

    /// Joins a deployment: from now on, session events are shared with its other relays.
    pub fn join(&self, shared: Box<dyn SharedLogs>) {
        let _ = self.shared.set(shared);
    }

    /// A session event another relay of the deployment logged.
    pub fn relayed(&self, event: Event) {
        let _ = self.live.send(Arc::new(event));
    }

    /// Logs a message of a session that is not an event (a binding, a late result).
    pub fn record(&self, session: &str, direction: Direction, message: Message) {
        self.record_when(session, direction, message, Write::Now);
    }

    /// Logs a message of an action that has not ended (its request, its ack): the line is
    /// written with the action's end (see `session_log`).
    pub fn record_held(&self, session: &str, direction: Direction, message: Message) {
        self.record_when(session, direction, message, Write::Held);
    }

    fn record_when(&self, session: &str, direction: Direction, message: Message, write: Write) {
        let (kind, payload) = message.split();
        if let Err(e) = self.log.append(session, direction, kind, &payload, write) {
            tracing::error!(session, kind, "cannot write the session log: {e}");
        }
    }

    /// Logs a session event and hands it to its subscribers.
    pub fn session(&self, session: &str, direction: Direction, event: Message) {
        self.session_all(session, vec![Logged::of(direction, &event)]);
    }

    /// Logs a session's events in one write and hands them to its subscribers, in order.
    pub fn session_all(&self, session: &str, events: Vec<Logged>) {
        self.publish_session(session, events, Write::Now, false);
    }

    /// Hands a session's events to its subscribers, in order; their lines in the log are
    /// written with the end of the action they belong to.
    pub fn session_all_held(&self, session: &str, events: Vec<Logged>) {
        self.publish_session(session, events, Write::Held, false);
    }

    /// Hands a session event to its subscribers without logging it: it says how things stand
    /// for the moment only (`progress`), so a replay has nothing to miss.
    pub fn session_passing(&self, session: &str, event: Message) {
        let (kind, payload) = event.split();
        let _ = self.live.send(Arc::new(Event {
            scope: Scope::Session(session.to_owned()),
            index: None,
            kind: kind.to_owned(),
            payload,
            timestamp_ms: Utc::now().timestamp_millis(),
            copy: false,
        }));
    }

    /// Publishes a browser's event, and copies it into each session bound to it.
    pub fn client(&self, client: &str, event: Message, sessions: &[String]) {
        // One payload, shared by the browser's event and every session's copy.
        let (kind, payload) = event.split();
        for session in sessions {
            let copy = Logged {
                direction: Direction::Out,
                kind,
                payload: payload.clone(),
            };
            self.publish_session(session, vec![copy], Write::Now, true);
        }
        let _ = self.live.send(Arc::new(Event {
            scope: Scope::Client(client.to_owned()),
            index: None,
            kind: kind.to_owned(),
            payload,
            timestamp_ms: Utc::now().timestamp_millis(),
            copy: false,
        }));
    }

    fn publish_session(&self, session: &str, events: Vec<Logged>, write: Write, copy: bool) {
        let timestamp_ms = Utc::now().timestamp_millis();
        let event = |logged: &Logged, index| {
            Arc::new(Event {
                scope: Scope::Session(session.to_owned()),
                index,
                kind: logged.kind.to_owned(),
                payload: logged.payload.clone(),
                timestamp_ms,
                copy,
            })
        };
        let lines: Vec<Line> = events.iter().map(Logged::line).collect();
        // Published under the log's lock, so subscribers see a session's events in index order.
        let written = self.log.append_then(session, &lines, write, |first| {
            for (logged, index) in events.iter().zip(first..) {
                let event = event(logged, Some(index));
                if let Some(shared) = self.shared.get() {
                    shared.publish(&event);
                }
                let _ = self.live.send(event);
            }
        });
        if let Err(e) = written {
            // A full disk must not stop the browser work; the gap shows in the indexes.
            for logged in &events {
                tracing::error!(session, logged.kind, "cannot write the session log: {e}");
                let _ = self.live.send(event(logged, None));
            }
        }
    }

    /// A session's logged events after `after`, in order.
    pub fn replay(&self, session: &str, after: Option<u64>) -> Vec<Arc<Event>> {
        self.read(session, after, 0, (usize::MAX, u64::MAX)).0
    }

    /// One page of a session's logged events after `after`, from byte `offset` of its log;
    /// the offset of the next page (the same when there is no more).
    fn page(&self, session: &str, after: Option<u64>, offset: u64) -> (Vec<Arc<Event>>, u64) {
        self.read(session, after, offset, REPLAY_PAGE)
    }

    fn read(
        &self,
        session: &str,
        after: Option<u64>,
        offset: u64,
        limits: (usize, u64),
    ) -> (Vec<Arc<Event>>, u64) {
        match self.log.read_page(session, after, offset, limits) {
            Ok((entries, next)) => {
                let events = entries
                    .into_iter()
                    .filter(|e| EVENT_KINDS.contains(&e.kind.as_str()))
                    .map(|e| Arc::new(from_entry(e)))
                    .collect();
                (events, next)
            }
            Err(e) => {
                tracing::error!(session, "cannot read the session log: {e}");
                (Vec::new(), offset)
            }
        }
    }

    /// Events from now on (after `after` in the session's log, when given).
    pub fn subscribe(&self, filter: Filter, after: Option<u64>) -> Subscription {
        // Listen first, then read the log: an event written in between is seen twice and
        // dropped once by its index, never missed.
        let live = self.live.subscribe();
        let catch_up = filter.session.is_some() && after.is_some();
        // A live event also in the backlog comes after it, and is then dropped by its index.
        Subscription {
            live,
            filter,
            backlog: VecDeque::new(),
            last: after,
            catch_up,
            page_at: None,
        }
    }
}

fn from_entry(entry: Entry) -> Event {
    let timestamp_ms = DateTime::parse_from_rfc3339(&entry.timestamp)
        .map(|t| t.with_timezone(&Utc).timestamp_millis())
        .unwrap_or_default();
    Event {
        scope: Scope::Session(entry.session_id),
        index: Some(entry.event_index),
        kind: entry.kind,
        payload: entry.payload,
        timestamp_ms,
        copy: false,
    }
}

/// One subscriber's events, in order.
pub struct Subscription {
    live: broadcast::Receiver<Arc<Event>>,
    filter: Filter,
    backlog: VecDeque<Arc<Event>>,
    /// The last session-log index delivered.
    last: Option<u64>,
    /// The backlog is still to be read, from the session's log here or its owner's.
    catch_up: bool,
    /// While catching up from this relay's log, page by page: where the next page starts.
    page_at: Option<u64>,
}

impl Subscription {
    /// The next event; `None` once the relay shuts down.
    pub async fn next(&mut self, events: &Events) -> Option<Arc<Event>> {
        loop {
            if std::mem::take(&mut self.catch_up) {
                self.read_backlog(events).await;
            }
            if self.backlog.is_empty() {
                self.next_page(events);
            }
            if let Some(event) = self.backlog.pop_front() {
                if self.seen(&event) {
                    continue;
                }
                return Some(self.deliver(event));
            }
            match self.live.recv().await {
                Ok(event) if !self.filter.wants(&event) => {}
                Ok(event) if self.seen(&event) => {}
                Ok(event) => return Some(self.deliver(event)),
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    // A slow subscriber never makes the relay hold more: it catches up from
                    // the log, which has every session event.
                    tracing::warn!(missed, "a subscriber fell behind; catching up from the log");
                    self.catch_up = self.filter.session.is_some();
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }

    /// The session's logged events after the last one delivered: from the log here (page by
    /// page, [`Self::next_page`]), or from the relay of the deployment that owns the session.
    async fn read_backlog(&mut self, events: &Events) {
        let Some(session) = &self.filter.session else {
            return;
        };
        match events.shared.get() {
            Some(shared) => {
                let backlog = shared.replay(session.clone(), self.last).await;
                self.backlog.extend(backlog);
            }
            None => self.page_at = Some(0),
        }
    }

    /// The next page of the log being caught up on, if any; past its end, live events follow.
    fn next_page(&mut self, events: &Events) {
        while self.backlog.is_empty() {
            let (Some(offset), Some(session)) = (self.page_at, &self.filter.session) else {
                return;
            };
            let (page, next) = events.page(session, self.last, offset);
            self.page_at = (next != offset).then_some(next);
            self.backlog.extend(page);
        }
    }

    fn seen(&self, event: &Event) -> bool {
        matches!(event.scope, Scope::Session(_))
            && self.filter.session.is_some()
            && event.index.zip(self.last).is_some_and(|(i, last)| i <= last)
    }

    fn deliver(&mut self, event: Arc<Event>) -> Arc<Event> {
        if matches!(event.scope, Scope::Session(_)) && event.index.is_some() {
            self.last = event.index;
        }
        event
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_event_kind_is_a_message() {
        for kind in super::EVENT_KINDS {
            assert!(
                tether_protocol::messages::senders(kind).is_some(),
                "{kind} is not a message"
            );
        }
    }
}
