//! Every session in memory, by id, and the store that keeps them all (docs/protocol.md §22):
//! a session is taken from memory or read back from the store when it is named, kept there while
//! it runs and a while after, then left to the store alone.

use tether_protocol::actions::TabId;
use tether_protocol::messages::{SessionState, SessionStatus};

use super::{now_ms, Fact, Session, Work};
use crate::parts::by_session::BySession;
use crate::stores::store::{Committed, Loaded, Record, Standing, Store, Stored};

/// How many sessions `GET /api/sessions` lists of those not in memory: the latest active.
const LISTED_FROM_STORE: usize = 500;

/// Every session in memory, by id, and the store that keeps them all.
pub struct Sessions<W: Work> {
    table: BySession<Session<W>>,
    pub(super) store: std::sync::Arc<Store>,
    /// Actions in every session's queue together: past `--waiting-limit`, a session that is
    /// running one takes no more (docs/protocol.md §19), so the relay's memory is bounded
    /// however many sessions a burst names.
    pub waiting: std::sync::atomic::AtomicUsize,
}

impl<W: Work> Sessions<W> {
    pub fn new(store: std::sync::Arc<Store>) -> Self {
        Self {
            table: BySession::default(),
            store,
            waiting: Default::default(),
        }
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Runs a transition on a session (read back from the store if it is not in memory, made
    /// on first use) under its lock. Lock order: a session, then the registry (nothing takes
    /// them the other way round).
    pub fn update<R>(&self, session_id: &str, transition: impl FnOnce(&mut Session<W>) -> R) -> R {
        let mut table = self.table.part(session_id);
        // Found by the borrowed id: the id is copied only for a session new to memory, not on
        // each of the half dozen updates an action makes.
        if let Some(session) = table.get_mut(session_id) {
            session.active_at = now_ms();
            return transition(session);
        }
        let session = table
            .entry(session_id.to_owned())
            .or_insert(self.kept_or_new(session_id));
        session.active_at = now_ms();
        transition(session)
    }

    /// Runs a transition as [`Sessions::update`] does, and hands what it changed to the store
    /// under the same lock, so the store has a session's facts in the order they happened.
    /// Await the commit before the reply that depends on it.
    pub fn keep<R>(
        &self,
        session_id: &str,
        transition: impl FnOnce(&mut Session<W>) -> (R, Fact),
    ) -> (R, Committed) {
        self.update(session_id, |session| {
            let (out, fact) = transition(session);
            let head = fact.head.then(|| session.head_to_keep()).flatten();
            let committed = match (head, fact.action) {
                (None, None) => Committed::now(),
                (head, action) => self.store.keep(session_id, head, action),
            };
            (out, committed)
        })
    }

    /// Reads a session: from memory, else as the store has it, else as a new one.
    fn read<R>(&self, session_id: &str, read: impl FnOnce(&Session<W>) -> R) -> R {
        if let Some(session) = self.table.part(session_id).get(session_id) {
            return read(session);
        }
        read(&self.kept_or_new(session_id))
    }

    /// A session not in memory: as the store has it, else a new one.
    fn kept_or_new(&self, session_id: &str) -> Session<W> {
        match self.store.load(session_id) {
            Some(loaded) => Session::from_loaded(session_id, loaded),
            None => Session::new(session_id),
        }
    }

    /// Lets go of the sessions idle since before `cutoff` (Unix ms), and of the least recently
    /// active idle ones past `cap`: the store has them. Their ids.
    pub fn evict_idle(&self, cutoff: i64, cap: usize) -> Vec<String> {
        let mut evicted = Vec::new();
        let mut idle = Vec::new();
        self.table.each(|part| {
            part.retain(|id, session| {
                let old = session.idle_since_before(cutoff);
                if old {
                    evicted.push(id.clone());
                } else if session.idle_since_before(i64::MAX) {
                    idle.push((session.active_at, id.clone()));
                }
                !old
            })
        });
        if idle.len() > cap {
            idle.sort_unstable();
            for (_, id) in idle.drain(..idle.len() - cap) {
                let mut part = self.table.part(&id);
                if part.get(&id).is_some_and(|s| s.idle_since_before(i64::MAX)) {
                    part.remove(&id);
                    evicted.push(id);
                }
            }
        }
        evicted
    }

    /// Whether a session in memory was active since `cutoff` (Unix ms) or has anything
    /// running, waiting or queued: retention must not take it.
    pub fn active_since(&self, session_id: &str, cutoff: i64) -> bool {
        self.table
            .part(session_id)
            .get(session_id)
            .is_some_and(|s| !s.idle_since_before(cutoff))
    }

    /// Takes over a session another relay of the deployment ran until it died, as its journal
    /// records tell it (docs/protocol.md §14): what this relay knew of it before is replaced, and
    /// nothing of it is running here.
    pub async fn adopt<'a>(&self, session_id: &str, records: impl IntoIterator<Item = Record<'a>>) {
        let mut session = Session::new(session_id);
        for record in records {
            session.replay(record);
        }
        session.woken();
        let kept = self
            .store
            .replace(vec![(session_id.to_owned(), session.loaded())]);
        self.table.part(session_id).insert(session_id.to_owned(), session);
        kept.wait().await;
    }

    /// The `session.state` payload of a session (a session no one has named yet is `created`).
    pub fn state(&self, session_id: &str) -> SessionState {
        self.read(session_id, Session::state)
    }

    /// The kept results of a session's latest finished actions, newest first, at most
    /// `limit` (what a console that opens while it runs shows of it).
    pub fn latest_results(&self, session_id: &str, limit: usize) -> Vec<Stored> {
        self.read(session_id, |s| s.latest(limit))
    }

    /// The state of every session in memory and of the latest active others, by id (what a
    /// console shows when it opens).
    pub fn all(&self) -> Vec<SessionState> {
        let mut states = std::collections::BTreeMap::new();
        for (id, head) in self.store.latest(LISTED_FROM_STORE) {
            let state = Session::<W>::from_loaded(
                &id,
                Loaded {
                    head,
                    ..Loaded::default()
                },
            )
            .state();
            states.insert(id, state);
        }
        self.table.each(|part| {
            for (id, session) in part.iter() {
                states.insert(id.clone(), session.state());
            }
        });
        states.into_values().collect()
    }

    /// The sessions bound to a browser, sorted.
    pub fn bound_to(&self, client_id: &str) -> Vec<String> {
        self.kept_where(client_id, false, |s| s.client_id() == Some(client_id))
    }

    /// The sessions bound to a browser that have not completed, sorted.
    pub fn going_bound_to(&self, client_id: &str) -> Vec<String> {
        self.kept_where(client_id, true, |s| {
            s.client_id() == Some(client_id) && s.standing != Standing::Completed
        })
    }

    /// The store's sessions bound to a browser (going ones only, if `going`), as memory has
    /// them where it has them, sorted.
    fn kept_where(&self, client_id: &str, going: bool, keep: impl Fn(&Session<W>) -> bool) -> Vec<String> {
        let mut ids = std::collections::BTreeSet::new();
        for id in self.store.bound_to(client_id, going) {
            if self.table.part(&id).get(&id).is_none_or(&keep) {
                ids.insert(id);
            }
        }
        self.table
            .each(|part| ids.extend(part.iter().filter(|(_, s)| keep(s)).map(|(id, _)| id.clone())));
        ids.into_iter().collect()
    }

    pub fn client_of(&self, session_id: &str) -> Option<String> {
        self.read(session_id, |s| s.client_id.clone())
    }

    /// Whether the session is bound to the browser `client_id`.
    pub fn is_bound_to(&self, session_id: &str, client_id: &str) -> bool {
        self.read(session_id, |s| s.client_id.as_deref() == Some(client_id))
    }

    /// A session's browser and current tab, if it has them.
    pub fn screen_of(&self, session_id: &str) -> (Option<String>, Option<TabId>) {
        self.read(session_id, |s| (s.client_id.clone(), s.current_tab))
    }

    /// Sessions in memory.
    pub fn count(&self) -> usize {
        let mut count = 0;
        self.table.each(|part| count += part.len());
        count
    }

    /// Sessions with a runner (an action running, or a runner about to end).
    pub fn running(&self) -> usize {
        let mut running = 0;
        self.table
            .each(|part| running += part.values().filter(|s| s.has_runner()).count());
        running
    }

    /// Actions waiting behind a running one, over all sessions.
    pub fn queued(&self) -> usize {
        let mut queued = 0;
        self.table
            .each(|part| queued += part.values().map(Session::queued).sum::<usize>());
        queued
    }

    /// How many sessions in memory have each status, every status named (for `/metrics`).
    pub fn by_status(&self) -> Vec<(&'static str, usize)> {
        use SessionStatus::*;
        let mut counts = [
            (Created, "created", 0),
            (Running, "running", 0),
            (WaitingForBrowserSelection, "waiting_for_browser_selection", 0),
            (WaitingForUserConfirmation, "waiting_for_user_confirmation", 0),
            (WaitingForUser, "waiting_for_user", 0),
            (Ongoing, "ongoing", 0),
            (Completed, "completed", 0),
            (Error, "error", 0),
        ];
        self.table.each(|part| {
            for session in part.values() {
                let status = session.status();
                if let Some(count) = counts.iter_mut().find(|(s, _, _)| *s == status) {
                    count.2 += 1;
                }
            }
        });
        counts.into_iter().map(|(_, name, count)| (name, count)).collect()
    }
}
