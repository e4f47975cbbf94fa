//! The store's one writer: a thread that takes every write waiting, applies them in one
//! transaction, commits, then tells each caller. Under load a commit carries hundreds of
//! facts; alone, one. A commit per fact cost 80 us against 11 us a fact at a hundred to the
//! commit (docs/architecture.md, "The relay's store").

use std::collections::HashMap;

use rusqlite::Connection;
use tokio::sync::{mpsc, oneshot};

use super::{schema, Action, Head, Loaded, FILE};

/// Facts one transaction takes at most, so a caller at the back waits for a bounded commit.
const BATCH: usize = 1024;

/// Under load, a commit waits this long for more facts when it has fewer than [`GATHER`]: a
/// commit of 64 facts cost half as much a fact as one of 8 (17.0 against 31.9 us an action,
/// 1000 sessions). Alone (the last commit carried one fact), a fact is committed at once.
const GATHER_FOR: std::time::Duration = std::time::Duration::from_micros(250);
const GATHER: usize = 64;

/// Session rows remembered by id, so an action's start writes only the action; past this many,
/// forgotten all at once.
const ROWS_REMEMBERED: usize = 65_536;

pub enum Op {
    Keep {
        session_id: String,
        head: Option<Head>,
        action: Option<Action>,
    },
    Replace(Vec<(String, Loaded)>),
    Delete(Vec<String>),
}

pub struct Job {
    pub op: Op,
    pub done: oneshot::Sender<()>,
}

pub struct Writer(mpsc::UnboundedSender<Job>);

impl Writer {
    pub fn start(conn: Connection) -> std::io::Result<Self> {
        let (jobs, waiting) = mpsc::unbounded_channel();
        std::thread::Builder::new()
            .name("relay-store".into())
            .spawn(move || run(conn, waiting))?;
        Ok(Self(jobs))
    }

    /// Whether the writer took the job (it has not stopped).
    pub fn send(&self, job: Job) -> bool {
        self.0.send(job).is_ok()
    }
}

fn run(mut conn: Connection, mut waiting: mpsc::UnboundedReceiver<Job>) {
    let mut rows = HashMap::new();
    let mut batch = Vec::with_capacity(BATCH);
    let mut last = 0;
    while let Some(first) = waiting.blocking_recv() {
        batch.push(first);
        take_waiting(&mut waiting, &mut batch);
        if last > 1 && batch.len() < GATHER {
            std::thread::sleep(GATHER_FOR);
            take_waiting(&mut waiting, &mut batch);
        }
        last = batch.len();
        if let Err(e) = commit(&mut conn, &mut rows, &batch) {
            // What a restart would forget; the relay goes on serving.
            tracing::error!(
                "cannot write {FILE}; a restart would forget {} facts: {e}",
                batch.len()
            );
            rows.clear();
        }
        for job in batch.drain(..) {
            let _ = job.done.send(());
        }
    }
}

fn take_waiting(waiting: &mut mpsc::UnboundedReceiver<Job>, batch: &mut Vec<Job>) {
    while batch.len() < BATCH {
        match waiting.try_recv() {
            Ok(job) => batch.push(job),
            Err(_) => return,
        }
    }
}

fn commit(conn: &mut Connection, rows: &mut HashMap<String, i64>, batch: &[Job]) -> rusqlite::Result<()> {
    let tx = conn.transaction()?;
    for job in batch {
        apply(&tx, rows, &job.op)?;
    }
    tx.commit()
}

fn apply(tx: &rusqlite::Transaction<'_>, rows: &mut HashMap<String, i64>, op: &Op) -> rusqlite::Result<()> {
    match op {
        Op::Keep {
            session_id,
            head,
            action,
        } => {
            let row = match (head, rows.get(session_id.as_str())) {
                (None, Some(row)) => *row,
                _ => {
                    let row = schema::session_row(tx, session_id, head.as_ref())?;
                    remember(rows, session_id, row);
                    row
                }
            };
            match action {
                Some(Action::Started {
                    action_id, tab_id, ..
                }) => schema::put_action(tx, row, action_id, *tab_id, None),
                Some(Action::Finished {
                    action_id,
                    result,
                    forgotten,
                    ..
                }) => {
                    if let Some(old) = forgotten {
                        schema::forget_action(tx, row, old)?;
                    }
                    schema::put_action(tx, row, action_id, None, Some(result.get()))
                }
                Some(Action::Kept { action_id, result }) => {
                    schema::put_action(tx, row, action_id, None, Some(result.get()))
                }
                None => Ok(()),
            }
        }
        Op::Replace(sessions) => {
            for (session_id, loaded) in sessions {
                let row = schema::replace(tx, session_id, loaded)?;
                remember(rows, session_id, row);
            }
            Ok(())
        }
        Op::Delete(ids) => {
            for session_id in ids {
                rows.remove(session_id);
                schema::delete(tx, session_id)?;
            }
            Ok(())
        }
    }
}

/// Remembers a session's row, within [`ROWS_REMEMBERED`].
fn remember(rows: &mut HashMap<String, i64>, session_id: &str, row: i64) {
    if rows.len() >= ROWS_REMEMBERED {
        rows.clear();
    }
    rows.insert(session_id.to_owned(), row);
}
