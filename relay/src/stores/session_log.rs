//! Every session's log (docs/protocol.md §7): each envelope the relay receives or sends for a
//! session, one JSON object a line in `<data-dir>/logs/<sessionId>.jsonl`, numbered by
//! `eventIndex`. The same log is what a reconnecting event stream replays from.
//!
//! An action's lines are written with its end: the request, its start and the host's ack are
//! numbered, timed and formatted as they happen but held, and go to the file in one `write`
//! with the result (three `write`s fewer per action, each to one of 1000 files under load:
//! 34.6 -> 32.4 us of relay CPU per action, docs/performance.md). Every other line, and
//! anything held before it, is written at once. A reader of the log gets the held lines too,
//! so a replay misses nothing; a relay killed in the middle of an action loses that action's
//! held lines (the store still knows it started), and a line a crash cuts short is skipped
//! when read.
//!
//! Files are held open for the sessions that wrote last, at most [`files_held_open`] of them
//! (docs/protocol.md §15): a caller naming thousands of sessions cannot take the relay's file
//! descriptors. A session whose file was closed opens it again when it next writes.

use std::fs::File;
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use chrono::Utc;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};
use tether_protocol::envelope::Payload;
use tether_protocol::result::rfc3339_ms;

use crate::parts::by_session::BySession;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    In,
    Out,
    Internal,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    pub session_id: String,
    pub event_index: u64,
    pub timestamp: String,
    pub direction: Direction,
    #[serde(rename = "type")]
    pub kind: String,
    /// As written: the log is read back to be passed on, not looked into.
    pub payload: Payload,
}

/// An entry as written, borrowing what the caller already has.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct EntryRef<'a> {
    session_id: &'a str,
    event_index: u64,
    timestamp: &'a str,
    direction: Direction,
    #[serde(rename = "type")]
    kind: &'a str,
    payload: &'a RawValue,
}

/// One entry to write: the log adds the session, its index and the time.
#[derive(Clone, Copy)]
pub struct Line<'a> {
    pub direction: Direction,
    pub kind: &'a str,
    pub payload: &'a RawValue,
}

struct Open {
    /// Closed when the session has not written for a while and the relay needs the descriptor.
    file: Option<File>,
    next_index: u64,
    /// Lines numbered and formatted but not yet written: the current action's so far.
    held: Vec<u8>,
    /// When it last wrote, on the log's own clock ([`SessionLog::clock`]).
    used: u64,
    /// The session completed: a line that comes after (a browser's tab event) is written with
    /// its file opened and closed again, until the session runs an action again.
    ended: bool,
}

/// What [`SessionLog::remove_old`] removed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Removed {
    /// Logs no one wrote for the retention.
    pub past_retention: usize,
    /// Logs written least recently, past the size bound.
    pub past_bound: usize,
}

/// When lines reach the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {
    /// Now, after whatever was held.
    Now,
    /// With the session's next `Now`: the lines of an action that has not ended.
    Held,
}

pub struct SessionLog {
    dir: PathBuf,
    open: BySession<Arc<Mutex<Open>>>,
    /// How many files are open, and how many may be.
    files: AtomicUsize,
    max_files: usize,
    /// Counts writes, to tell which sessions wrote last.
    clock: AtomicU64,
}

/// How many session logs are held open: an eighth of the open-file limit, between 64 and 4096
/// (1,024 files allow 128; the relay's connections and its other files need the rest).
pub fn files_held_open() -> usize {
    let files = crate::parts::open_files::limit().map_or(128, |limit| limit / 8);
    usize::try_from(files.clamp(64, 4096)).unwrap_or(4096)
}

impl SessionLog {
    pub fn new(data_dir: &Path) -> std::io::Result<Self> {
        let dir = data_dir.join("logs");
        tether_os::at_rest::private_dir(&dir)?;
        Ok(Self {
            dir,
            open: BySession::default(),
            files: AtomicUsize::new(0),
            max_files: files_held_open(),
            clock: AtomicU64::new(0),
        })
    }

    /// Appends one entry and returns its index (0, 1, 2, ... per session).
    pub fn append(
        &self,
        session_id: &str,
        direction: Direction,
        kind: &str,
        payload: &RawValue,
        write: Write,
    ) -> std::io::Result<u64> {
        let line = Line {
            direction,
            kind,
            payload,
        };
        self.append_then(session_id, &[line], write, |index| index)
    }

    /// Appends entries (with `Write::Now`, in one `write` together with what was held), then
    /// runs `then` with the first one's index before the next entry of the session can be
    /// appended: whatever `then` publishes goes out in index order.
    pub fn append_then<R>(
        &self,
        session_id: &str,
        lines: &[Line],
        write: Write,
        then: impl FnOnce(u64) -> R,
    ) -> std::io::Result<R> {
        let log = self.session(session_id)?;
        let mut log = log.lock().unwrap_or_else(|p| p.into_inner());
        log.used = self.clock.fetch_add(1, Ordering::Relaxed);
        let first = log.next_index;
        let timestamp = rfc3339_ms(Utc::now());
        // Room for the entries' own fields besides their payloads, so the text grows once.
        let room: usize = lines.iter().map(|l| l.payload.get().len() + 160).sum();
        let mut text = std::mem::take(&mut log.held);
        text.reserve(room);
        for (line, index) in lines.iter().zip(first..) {
            let entry = EntryRef {
                session_id,
                event_index: index,
                timestamp: &timestamp,
                direction: line.direction,
                kind: line.kind,
                payload: line.payload,
            };
            serde_json::to_writer(&mut text, &entry)?;
            text.push(b'\n');
        }
        log.next_index += lines.len() as u64;
        match write {
            Write::Held => {
                log.ended = false;
                log.held = text;
            }
            Write::Now => {
                self.file_of(session_id, &mut log)?.write_all(&text)?;
                if log.ended {
                    self.shut(&mut log);
                }
            }
        }
        Ok(then(first))
    }

    /// Writes what a session holds, so that the file has every line numbered so far.
    fn write_held(&self, session_id: &str) -> std::io::Result<()> {
        let log = self.open.part(session_id).get(session_id).cloned();
        let Some(log) = log else {
            return Ok(());
        };
        let mut log = log.lock().unwrap_or_else(|p| p.into_inner());
        if !log.held.is_empty() {
            let held = std::mem::take(&mut log.held);
            self.file_of(session_id, &mut log)?.write_all(&held)?;
        }
        Ok(())
    }

    /// The entries of a session after `after` (all of them for `None`), in order.
    pub fn read_after(&self, session_id: &str, after: Option<u64>) -> std::io::Result<Vec<Entry>> {
        let (entries, _) = self.read_page(session_id, after, 0, (usize::MAX, u64::MAX))?;
        Ok(entries)
    }

    /// One page of a session's entries after `after`, read from byte `offset` of its file:
    /// at most `max_entries`, and no more once `max_bytes` of lines are read. The entries,
    /// and the offset the next page starts at. A reader of a long log holds one page at a time.
    pub fn read_page(
        &self,
        session_id: &str,
        after: Option<u64>,
        offset: u64,
        limits: (usize, u64),
    ) -> std::io::Result<(Vec<Entry>, u64)> {
        self.write_held(session_id)?;
        self.read_from(session_id, after, offset, limits)
    }

    fn read_file(&self, session_id: &str, after: Option<u64>) -> std::io::Result<Vec<Entry>> {
        let (entries, _) = self.read_from(session_id, after, 0, (usize::MAX, u64::MAX))?;
        Ok(entries)
    }

    /// The entries after `after` in the file from byte `offset`, within the limits, and where
    /// reading stopped. A line that does not read as an entry (cut short by a crash) is skipped;
    /// a last line without its end is taken when it reads whole, else left for the next read
    /// (it may still be being written).
    fn read_from(
        &self,
        session_id: &str,
        after: Option<u64>,
        offset: u64,
        (max_entries, max_bytes): (usize, u64),
    ) -> std::io::Result<(Vec<Entry>, u64)> {
        use std::io::{Seek, SeekFrom};
        let mut file = match File::open(self.path(session_id)) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), offset)),
            Err(e) => return Err(e),
        };
        file.seek(SeekFrom::Start(offset))?;
        let mut reader = BufReader::new(file);
        let (mut entries, mut at, mut line) = (Vec::new(), offset, String::new());
        while entries.len() < max_entries && at - offset < max_bytes {
            line.clear();
            let read = reader.read_line(&mut line)?;
            if read == 0 {
                break;
            }
            let entry = serde_json::from_str::<Entry>(&line).ok();
            if !line.ends_with('\n') && entry.is_none() {
                break;
            }
            at += read as u64;
            if let Some(entry) = entry.filter(|e| after.is_none_or(|after| e.event_index > after)) {
                entries.push(entry);
            }
        }
        Ok((entries, at))
    }

    fn session(&self, session_id: &str) -> std::io::Result<Arc<Mutex<Open>>> {
        let mut open = self.open.part(session_id);
        if let Some(log) = open.get(session_id) {
            return Ok(log.clone());
        }
        // After a restart the log goes on from where it ended.
        let next_index = self
            .read_file(session_id, None)?
            .last()
            .map_or(0, |e| e.event_index + 1);
        let mut file = tether_os::at_rest::private_file()
            .create(true)
            .append(true)
            .read(true)
            .open(self.path(session_id))?;
        // A line a crash cut short is ended, so the next entry starts a line of its own.
        if ends_mid_line(&mut file)? {
            file.write_all(b"\n")?;
        }
        self.files.fetch_add(1, Ordering::Relaxed);
        let log = Arc::new(Mutex::new(Open {
            file: Some(file),
            next_index,
            held: Vec::new(),
            used: self.clock.fetch_add(1, Ordering::Relaxed),
            ended: false,
        }));
        open.insert(session_id.to_owned(), log.clone());
        drop(open);
        self.close_idle();
        Ok(log)
    }

    /// Lets go of a session the relay forgot: what it held is written and its file closed. The
    /// file stays, for `--log-retention-days`.
    pub fn forget(&self, session_id: &str) {
        self.let_go(session_id, true);
    }

    /// Closes the file of a session that completed. A line that comes after (a browser's tab
    /// event) opens it for that write alone, until the session runs an action again. Open files
    /// then follow the sessions that are going, not the ended ones still within retention (the
    /// soak, docs/performance.md: late tab events kept 2-3 ended sessions' files open each).
    pub fn close(&self, session_id: &str) {
        self.let_go(session_id, false);
    }

    fn let_go(&self, session_id: &str, forget: bool) {
        if let Err(e) = self.write_held(session_id) {
            tracing::warn!(session_id, "cannot write the last lines of a session's log: {e}");
        }
        let log = {
            let mut part = self.open.part(session_id);
            if forget {
                part.remove(session_id)
            } else {
                part.get(session_id).cloned()
            }
        };
        if let Some(log) = log {
            let mut log = log.lock().unwrap_or_else(|p| p.into_inner());
            log.ended = true;
            self.shut(&mut log);
        }
    }

    /// Closes a session's file, if it is open.
    fn shut(&self, log: &mut Open) {
        if log.file.take().is_some() {
            self.files.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Removes, in one look at the log folder, the logs no one wrote since `written_before`
    /// (their files' modification time), then those written least recently until the rest
    /// take at most `max_bytes`, sparing the logs of sessions that have not completed.
    pub fn remove_old(&self, written_before: Option<SystemTime>, max_bytes: u64) -> std::io::Result<Removed> {
        let mut running = std::collections::HashSet::new();
        self.open.each(|part| {
            for (session_id, log) in part.iter() {
                // A log busy being written is a running session's.
                if log.try_lock().map_or(true, |log| !log.ended) {
                    running.insert(self.path(session_id));
                }
            }
        });
        let mut removed = Removed::default();
        let mut total = 0;
        let mut removable = Vec::new();
        for entry in std::fs::read_dir(&self.dir)? {
            let path = entry?.path();
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            if !meta.is_file() || path.extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            let written = meta.modified().ok();
            let expired = written
                .zip(written_before)
                .is_some_and(|(at, cutoff)| at < cutoff);
            if expired && std::fs::remove_file(&path).is_ok() {
                removed.past_retention += 1;
                continue;
            }
            total += meta.len();
            if !running.contains(&path) {
                removable.push((written.unwrap_or(SystemTime::UNIX_EPOCH), meta.len(), path));
            }
        }
        removable.sort_unstable();
        for (_, bytes, path) in removable {
            if total <= max_bytes {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total -= bytes;
                removed.past_bound += 1;
            }
        }
        Ok(removed)
    }

    /// How many session logs are held open.
    pub fn files_open(&self) -> usize {
        self.files.load(Ordering::Relaxed)
    }

    /// The session's file, opened again if it was closed.
    fn file_of<'a>(&self, session_id: &str, log: &'a mut Open) -> std::io::Result<&'a mut File> {
        if log.file.is_none() {
            let file = tether_os::at_rest::private_file()
                .create(true)
                .append(true)
                .open(self.path(session_id))?;
            log.file = Some(file);
            self.files.fetch_add(1, Ordering::Relaxed);
            // Others' locks are only tried while this one is held: no two wait on each other.
            self.close_idle();
        }
        Ok(log.file.as_mut().expect("opened above"))
    }

    /// Past the limit, closes the files of the half of the open sessions that wrote least
    /// recently (and hold nothing unwritten). A session busy writing is passed over.
    fn close_idle(&self) {
        if self.files.load(Ordering::Relaxed) <= self.max_files {
            return;
        }
        let mut used = Vec::new();
        self.open.each(|part| {
            for log in part.values() {
                if let Ok(log) = log.try_lock() {
                    if log.file.is_some() && log.held.is_empty() {
                        used.push(log.used);
                    }
                }
            }
        });
        used.sort_unstable();
        let Some(&before) = used.get(used.len() / 2) else {
            return;
        };
        self.open.each(|part| {
            for log in part.values() {
                if let Ok(mut log) = log.try_lock() {
                    if log.used < before && log.held.is_empty() && log.file.take().is_some() {
                        self.files.fetch_sub(1, Ordering::Relaxed);
                    }
                }
            }
        });
    }

    /// The log's file. Session ids come from outside: one that is not plainly safe as a file
    /// name is named by its SHA-256 behind a `%`, which no plain name contains (hex of the id
    /// itself could pass the file system's 255-byte name limit).
    pub fn path(&self, session_id: &str) -> PathBuf {
        let plain = !session_id.is_empty()
            && session_id.len() <= 128
            && !session_id.starts_with('.')
            && session_id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b));
        let name = if plain {
            session_id.to_owned()
        } else {
            format!("%{}", hex::encode(Sha256::digest(session_id)))
        };
        self.dir.join(format!("{name}.jsonl"))
    }
}

fn ends_mid_line(file: &mut File) -> std::io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    if file.metadata()?.len() == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::End(-1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};
    use tether_protocol::envelope::payload;

    #[test]
    fn only_the_sessions_that_wrote_last_hold_their_files_open() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = SessionLog::new(dir.path()).unwrap();
        log.max_files = 8;
        // New sessions, then the same ones again (their files closed by then).
        for n in (0..100).chain(0..100) {
            log.append(
                &format!("s{n}"),
                Direction::In,
                "m",
                &payload(&json!(n)),
                Write::Now,
            )
            .unwrap();
            assert!(log.files.load(Ordering::Relaxed) <= 8, "after {n}");
        }
        // A session whose file was closed goes on where it was.
        log.append("s0", Direction::In, "m", &payload(&json!("again")), Write::Now)
            .unwrap();
        let entries = log.read_after("s0", None).unwrap();
        let indexes: Vec<u64> = entries.iter().map(|e| e.event_index).collect();
        assert_eq!(indexes, [0, 1, 2]);
    }

    #[test]
    fn a_line_after_a_session_completed_leaves_its_file_closed() {
        let dir = tempfile::tempdir().unwrap();
        let log = SessionLog::new(dir.path()).unwrap();
        let line = |n: i64| payload(&json!(n));
        log.append("s1", Direction::In, "browser_action", &line(0), Write::Held)
            .unwrap();
        log.append(
            "s1",
            Direction::Out,
            "browser_action.result",
            &line(1),
            Write::Now,
        )
        .unwrap();
        log.close("s1");
        assert_eq!(log.files_open(), 0);
        // A browser's tab event that comes after the session's last result.
        log.append("s1", Direction::Internal, "twin_state_sync", &line(2), Write::Now)
            .unwrap();
        assert_eq!(log.files_open(), 0, "a completed session's file is closed again");
        // The session runs again: its file stays open while it does.
        log.append("s1", Direction::In, "browser_action", &line(3), Write::Held)
            .unwrap();
        log.append(
            "s1",
            Direction::Out,
            "browser_action.result",
            &line(4),
            Write::Now,
        )
        .unwrap();
        assert_eq!(log.files_open(), 1);
        let indexes: Vec<u64> = log
            .read_after("s1", None)
            .unwrap()
            .iter()
            .map(|e| e.event_index)
            .collect();
        assert_eq!(indexes, [0, 1, 2, 3, 4]);
    }

    #[test]
    fn entries_are_numbered_written_at_once_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let log = SessionLog::new(dir.path()).unwrap();
        let first = log
            .append(
                "s1",
                Direction::In,
                "browser_action",
                &payload(&json!({ "actionName": "browser_click" })),
                Write::Now,
            )
            .unwrap();
        log.append(
            "s1",
            Direction::Out,
            "browser_action.ack",
            &payload(&json!({})),
            Write::Now,
        )
        .unwrap();
        log.append(
            "other",
            Direction::Internal,
            "session.state",
            &payload(&json!({})),
            Write::Now,
        )
        .unwrap();
        assert_eq!(first, 0);

        // On disk already, one object a line, in the spec's shape.
        let text = std::fs::read_to_string(log.path("s1")).unwrap();
        let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[1]["eventIndex"], 1);
        assert_eq!(lines[1]["direction"], "out");
        assert_eq!(lines[1]["type"], "browser_action.ack");
        assert_eq!(lines[0]["sessionId"], "s1");
        assert!(lines[0]["timestamp"].as_str().unwrap().ends_with('Z'));

        let after_first = log.read_after("s1", Some(0)).unwrap();
        assert_eq!(after_first.iter().map(|e| e.event_index).collect::<Vec<_>>(), [1]);
        assert!(log.read_after("never", None).unwrap().is_empty());
    }

    #[test]
    fn the_lines_of_one_step_are_numbered_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let log = SessionLog::new(dir.path()).unwrap();
        log.append(
            "s",
            Direction::In,
            "browser_action",
            &payload(&json!({})),
            Write::Now,
        )
        .unwrap();
        let (result, state) = (payload(&json!({ "status": "success" })), payload(&json!({})));
        let lines = [
            Line {
                direction: Direction::Out,
                kind: "browser_action.result",
                payload: &result,
            },
            Line {
                direction: Direction::Internal,
                kind: "session.state",
                payload: &state,
            },
        ];
        assert_eq!(
            log.append_then("s", &lines, Write::Now, |first| first).unwrap(),
            1
        );
        let entries = log.read_after("s", Some(0)).unwrap();
        let read: Vec<_> = entries.iter().map(|e| (e.event_index, e.kind.as_str())).collect();
        assert_eq!(read, [(1, "browser_action.result"), (2, "session.state")]);
        assert_eq!(entries[0].payload.get(), r#"{"status":"success"}"#);
        assert_eq!(
            log.append("s", Direction::In, "next", &state, Write::Now)
                .unwrap(),
            3
        );
    }

    #[test]
    fn numbering_goes_on_after_a_restart_and_a_torn_line() {
        let dir = tempfile::tempdir().unwrap();
        {
            let log = SessionLog::new(dir.path()).unwrap();
            log.append("s", Direction::In, "a", &payload(&json!(1)), Write::Now)
                .unwrap();
            log.append("s", Direction::In, "b", &payload(&json!(2)), Write::Now)
                .unwrap();
        }
        let path = SessionLog::new(dir.path()).unwrap().path("s");
        let mut file = std::fs::OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"{\"sessionId\":\"s\",\"eventIn").unwrap(); // a crash mid-line
        drop(file);
        let log = SessionLog::new(dir.path()).unwrap();
        assert_eq!(
            log.append("s", Direction::Out, "c", &payload(&json!(3)), Write::Now)
                .unwrap(),
            2
        );
        // The entry after the torn line is whole, and read back.
        let entries = log.read_after("s", Some(1)).unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!((entries[0].event_index, entries[0].kind.as_str()), (2, "c"));
    }

    #[test]
    fn hostile_session_ids_stay_inside_the_log_dir() {
        let dir = tempfile::tempdir().unwrap();
        let log = SessionLog::new(dir.path()).unwrap();
        for id in [
            "../../etc/passwd",
            ".hidden",
            "a/b",
            "",
            "x".repeat(300).as_str(),
            "naïve",
        ] {
            let path = log.path(id);
            assert_eq!(path.parent().unwrap(), dir.path().join("logs"), "{id:?}");
            log.append(id, Direction::In, "t", &payload(&json!(null)), Write::Now)
                .unwrap();
            assert_eq!(log.read_after(id, None).unwrap()[0].session_id, id);
        }
        assert_eq!(
            log.path("task-42_a.b"),
            dir.path().join("logs").join("task-42_a.b.jsonl")
        );
    }

    #[test]
    fn held_lines_are_written_with_the_next_line_and_read_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let log = SessionLog::new(dir.path()).unwrap();
        let on_disk = || std::fs::read_to_string(log.path("s")).unwrap().lines().count();
        let (request, ack) = (payload(&json!({ "actionId": "a1" })), payload(&json!({})));
        log.append("s", Direction::In, "bind", &ack, Write::Now).unwrap();
        assert_eq!(
            log.append("s", Direction::In, "browser_action", &request, Write::Held)
                .unwrap(),
            1
        );
        assert_eq!(
            log.append("s", Direction::In, "browser_action.ack", &ack, Write::Held)
                .unwrap(),
            2
        );
        assert_eq!(on_disk(), 1, "held lines are not written yet");

        // A reader sees them: the file gets them first.
        let read: Vec<_> = log
            .read_after("s", Some(0))
            .unwrap()
            .into_iter()
            .map(|e| e.event_index)
            .collect();
        assert_eq!(read, [1, 2]);
        assert_eq!(on_disk(), 3);

        log.append("s", Direction::In, "browser_action", &request, Write::Held)
            .unwrap();
        assert_eq!(
            log.append("s", Direction::Out, "browser_action.result", &ack, Write::Now)
                .unwrap(),
            4
        );
        let text = std::fs::read_to_string(log.path("s")).unwrap();
        let indexes: Vec<u64> = text
            .lines()
            .map(|l| {
                serde_json::from_str::<Value>(l).unwrap()["eventIndex"]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        assert_eq!(indexes, [0, 1, 2, 3, 4], "one file, in index order");
    }

    #[test]
    fn past_its_bound_the_log_loses_its_oldest_files_but_not_a_running_sessions() {
        let dir = tempfile::tempdir().unwrap();
        let log = SessionLog::new(dir.path()).unwrap();
        let kib = payload(&json!("x".repeat(1000)));
        // Each session writes 10 lines (~11 KiB); "running" first, so it is the oldest file.
        for session in ["running", "old", "older-than-new", "new"] {
            for _ in 0..10 {
                log.append(session, Direction::In, "m", &kib, Write::Now).unwrap();
            }
            if session != "running" {
                log.close(session);
            }
        }
        let day = std::time::Duration::from_secs(86_400);
        let now = SystemTime::now();
        for (session, days_ago) in [("running", 9), ("old", 3), ("older-than-new", 2), ("new", 1)] {
            let file = File::options().append(true).open(log.path(session)).unwrap();
            file.set_modified(now - day * days_ago).unwrap();
        }
        let size = |session: &str| std::fs::metadata(log.path(session)).unwrap().len();
        let (all, kept) = (
            size("running") + size("old") + size("older-than-new") + size("new"),
            size("running") + size("new"),
        );
        assert_eq!(
            log.remove_old(None, all).unwrap(),
            Removed::default(),
            "within the bound"
        );
        let removed = log.remove_old(Some(now - day * 10), kept).unwrap();
        assert_eq!(removed.past_bound, 2);
        let kept: Vec<bool> = ["running", "old", "older-than-new", "new"]
            .iter()
            .map(|s| log.path(s).exists())
            .collect();
        assert_eq!(kept, [true, false, false, true]);
        log.append("running", Direction::In, "m", &kib, Write::Now)
            .unwrap();
        assert_eq!(log.read_after("running", None).unwrap().len(), 11);
    }
}
