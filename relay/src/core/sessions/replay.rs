//! A session rebuilt from its journal records (`store::Record`): an earlier version's
//! `sessions.jsonl`, imported once into the store (docs/protocol.md §22), and the records a
//! relay of a deployment shares of the sessions it owns, which the next owner replays to take
//! one over (§14). Each record is applied as the transition that wrote it did.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::value::RawValue;
use tether_protocol::ActionResult;

use super::{Activity, Outcome, Session, Work};
use crate::stores::store::{Loaded, Record, Snapshot, Standing, Store, Stored};

impl<W: Work> Session<W> {
    /// Applies one journal record, as the transition that wrote it did.
    pub(super) fn replay(&mut self, record: Record<'_>) {
        if self.holds_already(&record) {
            return;
        }
        match record {
            Record::Session(snapshot) => self.restore(snapshot),
            Record::Bound { client_id, .. } => {
                self.bind(&client_id);
            }
            Record::Started {
                action_id,
                action_name,
                tab_id,
                ..
            } => {
                let _ = self.open_for(action_name.parse().ok());
                self.start(&action_id);
                self.outcomes
                    .insert(action_id.into_owned(), Outcome::Unsettled(tab_id));
            }
            Record::Finished {
                current_tab, result, ..
            } => match serde_json::from_str::<ActionResult>(result.get()) {
                Ok(parsed) => {
                    self.settle(&parsed);
                    self.current_tab = current_tab;
                    self.keep(&parsed.action_id, stored(result));
                }
                Err(e) => tracing::warn!(session = self.id, "an unreadable result in the journal: {e}"),
            },
            Record::Kept { result, .. } => match serde_json::from_str::<ActionResult>(result.get()) {
                Ok(parsed) => {
                    self.kept(&parsed, stored(result));
                }
                Err(e) => tracing::warn!(session = self.id, "an unreadable result in the journal: {e}"),
            },
        }
    }

    /// Whether a `started` or `finished` record is of an action the session has done: one an
    /// earlier relay's journal compaction wrote after the snapshot that held it already.
    fn holds_already(&self, record: &Record<'_>) -> bool {
        let action_id = match record {
            Record::Started { action_id, .. } => action_id.to_string(),
            Record::Finished { result, .. } => match serde_json::from_str::<ActionId>(result.get()) {
                Ok(head) => head.action_id,
                Err(_) => return false,
            },
            _ => return false,
        };
        matches!(self.outcomes.get(&action_id), Some(Outcome::Done(_)))
    }

    fn restore(&mut self, snapshot: Snapshot<'_>) {
        self.client_id = snapshot.client_id.map(Into::into);
        self.current_tab = snapshot.current_tab;
        self.standing = match (snapshot.ran, snapshot.failed, snapshot.completed) {
            (_, _, true) => Standing::Completed,
            (_, true, _) => Standing::Error,
            (true, _, _) => Standing::Ongoing,
            _ => Standing::Created,
        };
        self.last_error = snapshot.last_error;
        if let Some(active_at) = snapshot.active_at {
            self.active_at = active_at;
        }
        for result in snapshot.results {
            match serde_json::from_str::<ActionId>(result.get()) {
                Ok(head) => {
                    self.keep(&head.action_id, stored(result));
                }
                Err(e) => tracing::warn!(session = self.id, "an unreadable result in the journal: {e}"),
            }
        }
        for action in snapshot.unsettled {
            self.outcomes
                .insert(action.action_id, Outcome::Unsettled(action.tab_id));
        }
    }

    /// After a restart nothing runs: the action that was with the browser stays unsettled.
    pub(super) fn woken(&mut self) {
        if matches!(
            self.activity,
            Activity::Running(_) | Activity::WaitingForUserConfirmation | Activity::WaitingForUser(_)
        ) {
            self.activity = Activity::Idle;
        }
    }
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ActionId {
    action_id: String,
}

fn stored(raw: &RawValue) -> Stored {
    Arc::from(raw.to_owned())
}

/// What a session rebuilt only to be written to the store queues: nothing.
enum Nothing {}

impl Work for Nothing {
    type Waiter = Nothing;

    fn action_id(&self) -> &str {
        match *self {}
    }
}

/// Imports the journal an earlier relay kept in `data_dir` (`sessions.jsonl`) into the store,
/// then renames it `sessions.jsonl.imported` (docs/protocol.md §22). What it found.
pub fn import_journal(
    data_dir: &std::path::Path,
    store: &Store,
) -> anyhow::Result<crate::stores::store::Replayed> {
    let mut sessions: HashMap<String, Session<Nothing>> = HashMap::new();
    let replayed = crate::stores::store::read_journal(data_dir, |record| {
        let id = record.session_id().to_owned();
        let session = sessions.entry(id).or_insert_with_key(|id| Session::new(id));
        session.replay(record);
    })?;
    if replayed.records == 0 && replayed.skipped == 0 {
        return Ok(replayed);
    }
    let all: Vec<(String, Loaded)> = sessions
        .into_iter()
        .map(|(id, mut session)| {
            session.woken();
            let loaded = session.loaded();
            (id, loaded)
        })
        .collect();
    store.replace_now(&all)?;
    let journal = data_dir.join(crate::stores::store::JOURNAL);
    let mut imported = journal.clone().into_os_string();
    imported.push(".imported");
    std::fs::rename(&journal, imported)?;
    Ok(replayed)
}
