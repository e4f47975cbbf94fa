//! What the relay keeps across a restart, `kill -9` included (docs/protocol.md §13, §22): each
//! session's binding and standing, the results kept for `actionId` replay and the actions sent
//! to a browser that have no result yet, in an SQLite database in the data dir (`relay.db`).
//! Memory holds the running sessions (`sessions.rs`); an ended one is read from here when it is
//! named again.
//!
//! Writes go to one writer thread, which commits whatever is waiting in one transaction (group
//! commit) and then tells each writer its fact is kept: a caller awaits that before the reply
//! that depends on it, so a process that dies keeps everything it answered. The database is in
//! WAL mode with `synchronous=NORMAL`: a commit is a `write` to the WAL, which the kernel holds
//! once the call returns; a machine that loses power may lose the last moments, never the
//! database (docs/architecture.md). Reads take their own connection and never wait for a commit.
//!
//! Nothing outside this folder reaches into the database: the relay speaks to it through
//! [`Store`].

mod record;
mod schema;
mod writer;

use std::path::Path;
use std::sync::{Mutex, OnceLock};

use rusqlite::Connection;
use tether_protocol::actions::TabId;
use tether_protocol::envelope::Payload;
use tether_protocol::ActionError;

pub use record::{line, replay as read_journal, Record, Replayed, Share, Snapshot, Unsettled, JOURNAL};
use writer::{Job, Op, Writer};

/// The database's file in the data dir.
pub const FILE: &str = "relay.db";

/// A finished result as the JSON text sent to the orchestrator.
pub type Stored = Payload;

/// How an idle session stands after what ran in it (§2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Standing {
    /// Nothing has finished in it yet.
    #[default]
    Created,
    Ongoing,
    /// The last failure of the browser or its link has not been followed by a success.
    Error,
    /// `session_stop` succeeded and nothing has started the session again.
    Completed,
}

impl Standing {
    fn code(self) -> i64 {
        self as i64
    }

    fn from_code(code: i64) -> Self {
        match code {
            1 => Standing::Ongoing,
            2 => Standing::Error,
            3 => Standing::Completed,
            _ => Standing::Created,
        }
    }
}

/// A session as the store keeps it, but for its actions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Head {
    pub client_id: Option<String>,
    pub current_tab: Option<TabId>,
    pub standing: Standing,
    pub last_error: Option<ActionError>,
    /// A person approved an action of it (`--confirm first`).
    pub confirmed: bool,
    /// When anything last happened to it (Unix ms), for its retention.
    pub active_at: i64,
}

impl Head {
    /// Whether the store's copy `kept` says the same, its activity time within `grain` ms: a
    /// head written only when it changes spares most actions a write of the session's row
    /// (and its indexes), and retention needs the time no finer.
    pub fn same_as(&self, kept: &Head, grain: i64) -> bool {
        self.client_id == kept.client_id
            && self.current_tab == kept.current_tab
            && self.standing == kept.standing
            && self.last_error == kept.last_error
            && self.confirmed == kept.confirmed
            && self.active_at.abs_diff(kept.active_at) < grain.unsigned_abs()
    }
}

/// A session read back: its head, the results kept for replay (oldest first, by action id)
/// and the actions sent to a browser with no result since.
#[derive(Debug, Default)]
pub struct Loaded {
    pub head: Head,
    pub results: Vec<(String, Stored)>,
    pub unsettled: Vec<Unsettled>,
}

/// What happened to one of a session's actions.
#[derive(Debug)]
pub enum Action {
    /// It is about to go to the browser: from here on it may run there.
    Started {
        action_id: String,
        action_name: String,
        tab_id: Option<TabId>,
    },
    /// It ended with this result; `forgotten` is the session's oldest kept result it pushed out.
    Finished {
        action_id: String,
        result: Stored,
        forgotten: Option<String>,
        /// The session's current tab after it (kept in the head; said to a deployment).
        current_tab: Option<TabId>,
    },
    /// The browser's own result replaced the relay's verdict for later repeats.
    Kept { action_id: String, result: Stored },
}

/// Resolves once a write is in the database (or the database failed it, which is logged).
pub struct Committed(Option<tokio::sync::oneshot::Receiver<()>>);

impl Committed {
    /// Nothing to wait for.
    pub fn now() -> Self {
        Self(None)
    }

    pub async fn wait(self) {
        if let Some(done) = self.0 {
            let _ = done.await;
        }
    }
}

/// The relay's database.
pub struct Store {
    /// The database file (its write-ahead log beside it, `-wal`); `None` in memory.
    path: Option<std::path::PathBuf>,
    writer: Writer,
    reader: Mutex<Connection>,
    /// Where each fact also goes in a deployment of several relays: to the session's next
    /// owner, should this relay die (docs/protocol.md §14).
    shared: OnceLock<Share>,
}

impl Store {
    /// Opens (or makes) the data dir's database, its file its owner's alone.
    pub fn open(data_dir: &Path) -> anyhow::Result<Self> {
        let path = data_dir.join(FILE);
        if !path.exists() {
            tether_os::at_rest::private_file()
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)?;
        }
        let url = path.to_string_lossy().into_owned();
        Self::start(&url, Some(path))
    }

    /// A database in memory, for tests: gone with the store.
    pub fn in_memory() -> Self {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let url = format!("file:tether-{}-{n}?mode=memory&cache=shared", std::process::id());
        Self::start(&url, None).expect("an in-memory database opens")
    }

    fn start(url: &str, path: Option<std::path::PathBuf>) -> anyhow::Result<Self> {
        let writing = schema::connect(url)?;
        schema::create(&writing)?;
        let reader = schema::connect(url)?;
        Ok(Self {
            path,
            writer: Writer::start(writing)?,
            reader: Mutex::new(reader),
            shared: OnceLock::new(),
        })
    }

    fn reader(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.reader.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps a session's new head and what happened to one of its actions (either may be
    /// left out); await the answer before the reply that depends on it.
    pub fn keep(&self, session_id: &str, head: Option<Head>, action: Option<Action>) -> Committed {
        if let Some(shared) = self.shared.get() {
            share(shared, session_id, head.as_ref(), action.as_ref());
        }
        self.send(Op::Keep {
            session_id: session_id.to_owned(),
            head,
            action,
        })
    }

    /// Replaces all the store knows of sessions with these (an import, a session taken over).
    pub fn replace(&self, sessions: Vec<(String, Loaded)>) -> Committed {
        self.send(Op::Replace(sessions))
    }

    /// Writes sessions over what was kept of them at once, on the caller's thread: for the
    /// relay's start, before it serves (an import).
    pub fn replace_now(&self, sessions: &[(String, Loaded)]) -> rusqlite::Result<()> {
        let mut conn = self.reader();
        let tx = conn.transaction()?;
        for (session_id, loaded) in sessions {
            schema::replace(&tx, session_id, loaded)?;
        }
        tx.commit()
    }

    fn send(&self, op: Op) -> Committed {
        let (done, committed) = tokio::sync::oneshot::channel();
        match self.writer.send(Job { op, done }) {
            true => Committed(Some(committed)),
            false => Committed(None),
        }
    }

    /// Runs a read on the reader's connection; a failure is logged and reads as nothing.
    fn read<T: Default>(&self, what: &str, read: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> T {
        read(&self.reader())
            .inspect_err(|e| tracing::error!("cannot read {what} from {FILE}: {e}"))
            .unwrap_or_default()
    }

    /// A session as it was kept, if it is.
    pub fn load(&self, session_id: &str) -> Option<Loaded> {
        self.read("a session", |conn| schema::load(conn, session_id))
    }

    /// The sessions bound to a browser (only those not completed, if `going`), sorted.
    pub fn bound_to(&self, client_id: &str, going: bool) -> Vec<String> {
        self.read("a browser's sessions", |conn| {
            schema::bound_to(conn, client_id, going)
        })
    }

    /// The heads of the `limit` sessions active last, latest first.
    pub fn latest(&self, limit: usize) -> Vec<(String, Head)> {
        self.read("the latest sessions", |conn| schema::latest(conn, limit))
    }

    /// Deletes up to `batch` sessions idle since before `cutoff` (Unix ms), from `from` on,
    /// that `busy` does not hold, with everything kept of them, in one short transaction:
    /// serving goes on between batches.
    pub async fn expire(
        &self,
        cutoff: i64,
        from: Cursor,
        batch: usize,
        busy: impl Fn(&str) -> bool,
    ) -> Expired {
        let candidates = self.read("the idle sessions", |conn| {
            schema::idle_before(conn, cutoff, from, batch)
        });
        let next = (candidates.len() == batch)
            .then(|| candidates.last().map(|(at, _)| *at))
            .flatten();
        let ids: Vec<String> = candidates
            .into_iter()
            .map(|(_, id)| id)
            .filter(|id| !busy(id))
            .collect();
        if !ids.is_empty() {
            self.send(Op::Delete(ids.clone())).wait().await;
        }
        Expired { ids, next }
    }

    /// The bytes the database and its write-ahead log take on disk.
    pub fn bytes(&self) -> u64 {
        let Some(path) = &self.path else { return 0 };
        let wal = path.with_file_name(format!("{FILE}-wal"));
        [path, &wal]
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok())
            .map(|m| m.len())
            .sum()
    }

    /// How many sessions and actions it keeps.
    pub fn counts(&self) -> (u64, u64) {
        let count = |table: &str| -> u64 {
            self.read(table, |conn| {
                conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |row| row.get(0))
            })
        };
        (count("sessions"), count("actions"))
    }

    /// From now on, hands each fact to `share` too, as a journal record.
    pub fn share(&self, share: Share) {
        let _ = self.shared.set(share);
    }
}

/// Where [`Store::expire`] goes on from: a session's last activity and its row.
pub type Cursor = (i64, i64);

/// Where [`Store::expire`] starts.
pub const FIRST: Cursor = (i64::MIN, i64::MIN);

/// What one round of [`Store::expire`] did.
#[derive(Debug, Default)]
pub struct Expired {
    /// The sessions deleted.
    pub ids: Vec<String>,
    /// Where the next round starts; none when no more sessions are past the cutoff.
    pub next: Option<Cursor>,
}

/// Hands a fact to the deployment as the journal record a taking-over relay replays.
fn share(shared: &Share, session_id: &str, head: Option<&Head>, action: Option<&Action>) {
    let record = match (action, head) {
        (
            Some(Action::Started {
                action_id,
                action_name,
                tab_id,
            }),
            _,
        ) => Record::Started {
            session_id: session_id.into(),
            action_id: action_id.as_str().into(),
            action_name: action_name.as_str().into(),
            tab_id: *tab_id,
        },
        (
            Some(Action::Finished {
                result, current_tab, ..
            }),
            _,
        ) => Record::Finished {
            session_id: session_id.into(),
            current_tab: *current_tab,
            result,
        },
        (Some(Action::Kept { result, .. }), _) => Record::Kept {
            session_id: session_id.into(),
            result,
        },
        (
            None,
            Some(Head {
                client_id: Some(client_id),
                ..
            }),
        ) => Record::Bound {
            session_id: session_id.into(),
            client_id: client_id.as_str().into(),
        },
        (None, _) => return,
    };
    match line(&record) {
        Ok(line) => shared(session_id, &line),
        Err(e) => tracing::error!("cannot encode a journal record: {e}"),
    }
}

#[cfg(test)]
mod tests;
