//! What the relay remembers across a restart, `kill -9` included (docs/protocol.md §13): each
//! session's binding, status, current tab, the results kept for `actionId` replay and the
//! actions sent to a browser that have no result yet. One JSON record a line in
//! `<data-dir>/sessions.jsonl`.
//!
//! Each record is one `write` to a file opened for appending, made before the reply that
//! depends on it: a process that dies keeps everything it answered (the kernel has it). A
//! machine that loses power may lose the last moments; `fsync` per action would cost more than
//! the action (docs/architecture.md). At start the relay replays the file, then rewrites it as
//! one `session` record per session, so start-up reads what is kept, not all history; a line
//! cut short by a crash is skipped.
//!
//! While the relay runs, [`Journal::compact`] rewrites it the same way as it grows, with
//! appends going on: from the moment a compaction begins every line appended also goes to a
//! buffer; the sessions are then written to a new file (each session under its own lock), the
//! buffer after them, and the new file synced and renamed over the old one. A change to a
//! session is made before its record is appended, so a record is either in the snapshot or in
//! the buffer, and one in both is replayed as a no-op (`sessions.rs` skips a `started` or
//! `finished` for an action already done). A crash before the rename leaves the old file
//! whole, with every record; after it, the new one.
//!
//! The session logs (`session_log`) hold the same facts among every envelope, but reading them
//! all at start grows with history: this file stays the size of the kept state.

use std::borrow::Cow;
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tether_protocol::actions::TabId;
use tether_protocol::ActionError;

const FILE: &str = "sessions.jsonl";

/// One fact about a session. Results are the JSON text sent to the orchestrator, unparsed.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Record<'a> {
    /// A session as it stood at the relay's last start.
    #[serde(borrow)]
    Session(Snapshot<'a>),
    /// The session was bound to a browser.
    #[serde(rename_all = "camelCase")]
    Bound {
        #[serde(borrow)]
        session_id: Cow<'a, str>,
        #[serde(borrow)]
        client_id: Cow<'a, str>,
    },
    /// An action is about to go to the browser: from here on it may run there.
    #[serde(rename_all = "camelCase")]
    Started {
        #[serde(borrow)]
        session_id: Cow<'a, str>,
        #[serde(borrow)]
        action_id: Cow<'a, str>,
        #[serde(borrow)]
        action_name: Cow<'a, str>,
        /// The tab its params name (the session's current tab follows it).
        tab_id: Option<TabId>,
    },
    /// An action ended with this result; the session's current tab after it.
    #[serde(rename_all = "camelCase")]
    Finished {
        #[serde(borrow)]
        session_id: Cow<'a, str>,
        current_tab: Option<TabId>,
        #[serde(borrow)]
        result: &'a RawValue,
    },
    /// A browser's own result for an action the relay had ended without it (its link dropped,
    /// or the relay restarted): what a repeat of the `actionId` gets from now on.
    #[serde(rename_all = "camelCase")]
    Kept {
        #[serde(borrow)]
        session_id: Cow<'a, str>,
        #[serde(borrow)]
        result: &'a RawValue,
    },
}

impl Record<'_> {
    /// The session the record is about.
    pub fn session_id(&self) -> &str {
        match self {
            Record::Session(snapshot) => &snapshot.session_id,
            Record::Bound { session_id, .. }
            | Record::Started { session_id, .. }
            | Record::Finished { session_id, .. }
            | Record::Kept { session_id, .. } => session_id,
        }
    }
}

/// A session's state in one record.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Snapshot<'a> {
    #[serde(borrow)]
    pub session_id: Cow<'a, str>,
    #[serde(borrow, default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_tab: Option<TabId>,
    #[serde(default)]
    pub ran: bool,
    #[serde(default)]
    pub failed: bool,
    #[serde(default)]
    pub completed: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_error: Option<ActionError>,
    /// Results kept for replay, oldest first.
    #[serde(borrow, default)]
    pub results: Vec<&'a RawValue>,
    /// Actions sent to the browser before a restart, with no result since.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unsettled: Vec<Unsettled>,
    /// When anything last happened to the session (Unix ms), for its retention.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_at: Option<i64>,
}

/// An action that may have run in the browser, whose result the relay never had.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Unsettled {
    pub action_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tab_id: Option<TabId>,
}

/// What reading the file found.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Replayed {
    pub records: usize,
    /// Lines that could not be read: a crash cut the last one short.
    pub skipped: usize,
}

/// The open file, appended to as sessions change.
pub struct Journal {
    path: PathBuf,
    file: Mutex<Appending>,
    /// Where each record also goes in a deployment of several relays: to the session's next
    /// owner, should this relay die (docs/protocol.md §14).
    shared: std::sync::OnceLock<Share>,
    /// Told once the journal has grown enough to be compacted (see [`Journal::outgrown`]).
    outgrown: tokio::sync::Notify,
}

/// The file being appended to, and what a compaction needs of it.
struct Appending {
    file: File,
    /// Its size when it was last rewritten, and the bytes appended since.
    rewritten: u64,
    grown: u64,
    /// While a compaction runs: every line appended since it began.
    pending: Option<Vec<u8>>,
    /// Whether `outgrown` was told since the last rewrite.
    told: bool,
}

impl Appending {
    fn outgrown(&self) -> bool {
        self.grown > self.rewritten.max(COMPACT_AFTER_BYTES)
    }
}

/// A journal is compacted once it has grown past its last rewrite's size (and this much).
const COMPACT_AFTER_BYTES: u64 = 4 << 20;

/// Takes a record's session and its line as written.
pub type Share = Box<dyn Fn(&str, &[u8]) + Send + Sync>;

/// Feeds every record in the data dir's journal to `apply`, oldest first.
pub fn replay(data_dir: &Path, mut apply: impl FnMut(Record<'_>)) -> std::io::Result<Replayed> {
    let file = match File::open(data_dir.join(FILE)) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Replayed::default()),
        Err(e) => return Err(e),
    };
    let mut replayed = Replayed::default();
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut line = Vec::new();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line)? == 0 {
            return Ok(replayed);
        }
        match serde_json::from_slice::<Record>(&line) {
            Ok(record) => {
                replayed.records += 1;
                apply(record);
            }
            Err(e) => {
                replayed.skipped += 1;
                tracing::warn!("skipped an unreadable line of {FILE} (a crash mid-write?): {e}");
            }
        }
    }
}

impl Journal {
    /// Replaces the journal with `sessions` (written to a new file, synced, then renamed over
    /// the old one, so a crash leaves one whole journal or the other), and opens it to append.
    pub fn rewrite<'a>(
        data_dir: &Path,
        sessions: impl IntoIterator<Item = Snapshot<'a>>,
    ) -> std::io::Result<Self> {
        let path = data_dir.join(FILE);
        let fresh = path_with(&path, ".new");
        {
            let mut out = std::io::BufWriter::new(new_file(&fresh)?);
            for snapshot in sessions {
                serde_json::to_writer(&mut out, &Record::Session(snapshot))?;
                out.write_all(b"\n")?;
            }
            out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        }
        std::fs::rename(&fresh, &path)?;
        File::open(data_dir)?.sync_all()?;
        let file = OpenOptions::new().append(true).open(&path)?;
        let rewritten = file.metadata()?.len();
        Ok(Self {
            path,
            file: Mutex::new(Appending {
                file,
                rewritten,
                grown: 0,
                pending: None,
                told: false,
            }),
            shared: std::sync::OnceLock::new(),
            outgrown: tokio::sync::Notify::new(),
        })
    }

    fn appending(&self) -> std::sync::MutexGuard<'_, Appending> {
        self.file.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the journal grew enough since its last rewrite to be worth compacting: by
    /// more than its size then, and by 4 MiB at least.
    pub fn wants_compaction(&self) -> bool {
        self.appending().outgrown()
    }

    /// Resolves once the journal has grown enough to be compacted. The housekeeper waits on it
    /// besides its clock: at full load the journal grows ~30 MB/s (docs/performance.md), so
    /// waiting for the next round could let it pass a gigabyte.
    pub async fn outgrown(&self) {
        self.outgrown.notified().await;
    }

    /// Rewrites the journal as `write_sessions` writes the sessions (each a `session` record
    /// line, see [`session_line`]) while appends go on (see the module's doc). One compaction
    /// at a time: a second one asked meanwhile does nothing. On an error the old file, which
    /// kept every record, stays the journal.
    pub fn compact(
        &self,
        write_sessions: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        {
            let mut appending = self.appending();
            if appending.pending.is_some() {
                return Ok(());
            }
            appending.pending = Some(Vec::new());
        }
        let compacted = self.write_compacted(write_sessions);
        if compacted.is_err() {
            self.appending().pending = None;
        }
        compacted
    }

    fn write_compacted(
        &self,
        write_sessions: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let fresh = path_with(&self.path, ".new");
        let mut out = std::io::BufWriter::new(new_file(&fresh)?);
        write_sessions(&mut out)?;
        let mut file = out.into_inner().map_err(|e| e.into_error())?;
        // From here to the swap, appends wait: the buffer's last lines, a sync and a rename.
        let mut appending = self.appending();
        let pending = appending.pending.take().unwrap_or_default();
        file.write_all(&pending)?;
        file.sync_all()?;
        std::fs::rename(&fresh, &self.path)?;
        if let Some(dir) = self.path.parent() {
            File::open(dir)?.sync_all()?;
        }
        appending.rewritten = file.metadata()?.len();
        appending.grown = 0;
        appending.told = false;
        appending.file = OpenOptions::new().append(true).open(&self.path)?;
        Ok(())
    }

    /// Appends a record with one write. A failure is logged, not fatal: the relay goes on
    /// serving, and only a restart would forget the fact.
    pub fn append(&self, record: &Record<'_>) {
        let mut line = match serde_json::to_vec(record) {
            Ok(line) => line,
            Err(e) => return tracing::error!("cannot encode a journal record: {e}"),
        };
        line.push(b'\n');
        if let Some(shared) = self.shared.get() {
            shared(record.session_id(), &line);
        }
        let mut appending = self.appending();
        if let Err(e) = appending.file.write_all(&line) {
            tracing::error!("cannot write {FILE}; a restart would forget this: {e}");
        }
        appending.grown += line.len() as u64;
        if let Some(pending) = &mut appending.pending {
            pending.extend_from_slice(&line);
        } else if !appending.told && appending.outgrown() {
            appending.told = true;
            self.outgrown.notify_one();
        }
    }

    /// From now on, hands each record to `share` too.
    pub fn share(&self, share: Share) {
        let _ = self.shared.set(share);
    }
}

/// A session's `session` record as one journal line, for [`Journal::compact`].
pub fn session_line(snapshot: Snapshot<'_>, out: &mut Vec<u8>) -> serde_json::Result<()> {
    serde_json::to_writer(&mut *out, &Record::Session(snapshot))?;
    out.push(b'\n');
    Ok(())
}

/// A journal being written anew, empty, its owner's alone.
fn new_file(path: &Path) -> std::io::Result<File> {
    crate::at_rest::private_file()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
}

fn path_with(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(text: &str) -> &RawValue {
        serde_json::from_str(text).unwrap()
    }

    fn kinds(dir: &Path) -> (Vec<String>, Replayed) {
        let mut kinds = Vec::new();
        let replayed = replay(dir, |record| {
            let text = serde_json::to_value(&record).unwrap();
            kinds.push(text.as_object().unwrap().keys().next().unwrap().clone());
        })
        .unwrap();
        (kinds, replayed)
    }

    #[test]
    fn records_are_appended_then_rewritten_as_snapshots() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(kinds(dir.path()).1, Replayed::default());
        let journal = Journal::rewrite(dir.path(), []).unwrap();
        journal.append(&Record::Bound {
            session_id: "s \"1\"".into(),
            client_id: "c".into(),
        });
        journal.append(&Record::Finished {
            session_id: "s \"1\"".into(),
            current_tab: Some(3),
            result: raw(r#"{"actionId":"a","status":"success"}"#),
        });
        let (seen, replayed) = kinds(dir.path());
        assert_eq!(seen, ["bound", "finished"]);
        assert_eq!(replayed.records, 2);

        let snapshot = Snapshot {
            session_id: "s \"1\"".into(),
            results: vec![raw(r#"{"actionId":"a"}"#)],
            ..Snapshot::default()
        };
        drop(journal);
        let _journal = Journal::rewrite(dir.path(), [snapshot]).unwrap();
        let mut back = Vec::new();
        replay(dir.path(), |record| match record {
            Record::Session(s) => back.push((s.session_id.into_owned(), s.results[0].get().to_owned())),
            other => panic!("{other:?}"),
        })
        .unwrap();
        assert_eq!(back, [("s \"1\"".to_owned(), r#"{"actionId":"a"}"#.to_owned())]);
    }

    #[test]
    fn a_line_cut_short_by_a_crash_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let journal = Journal::rewrite(dir.path(), []).unwrap();
        journal.append(&Record::Bound {
            session_id: "s".into(),
            client_id: "c".into(),
        });
        let mut file = OpenOptions::new()
            .append(true)
            .open(dir.path().join(FILE))
            .unwrap();
        file.write_all(br#"{"finished":{"sessionId":"s","res"#).unwrap();
        let (seen, replayed) = kinds(dir.path());
        assert_eq!(seen, ["bound"]);
        assert_eq!(
            replayed,
            Replayed {
                records: 1,
                skipped: 1
            }
        );
    }
}
