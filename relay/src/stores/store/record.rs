//! A session's facts as JSON records: the lines of the journal an earlier relay kept in
//! `<data-dir>/sessions.jsonl` (read once, to import it: `sessions/replay.rs`), and what a relay of a
//! deployment shares of the sessions it owns, so the next owner can take one over
//! (docs/protocol.md §14). A session is rebuilt from its records by `Session::replay`.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use tether_protocol::actions::TabId;
use tether_protocol::ActionError;

/// The journal an earlier relay kept in its data dir.
pub const JOURNAL: &str = "sessions.jsonl";

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

/// Feeds every record in the data dir's journal to `apply`, oldest first.
pub fn replay(data_dir: &Path, mut apply: impl FnMut(Record<'_>)) -> std::io::Result<Replayed> {
    let file = match File::open(data_dir.join(JOURNAL)) {
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
                tracing::warn!("skipped an unreadable line of {JOURNAL} (a crash mid-write?): {e}");
            }
        }
    }
}

/// Takes a record's session and its line as written.
pub type Share = Box<dyn Fn(&str, &[u8]) + Send + Sync>;

/// A record as one line of JSON.
pub fn line(record: &Record<'_>) -> serde_json::Result<Vec<u8>> {
    let mut line = serde_json::to_vec(record)?;
    line.push(b'\n');
    Ok(line)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

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

    fn write(dir: &Path, records: &[Record<'_>], tail: &[u8]) {
        let mut file = std::fs::File::create(dir.join(JOURNAL)).unwrap();
        for record in records {
            file.write_all(&line(record).unwrap()).unwrap();
        }
        file.write_all(tail).unwrap();
    }

    #[test]
    fn records_are_read_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(kinds(dir.path()).1, Replayed::default());
        let snapshot = Snapshot {
            session_id: "s \"1\"".into(),
            results: vec![raw(r#"{"actionId":"a"}"#)],
            ..Snapshot::default()
        };
        let records = [
            Record::Session(snapshot),
            Record::Bound {
                session_id: "s \"1\"".into(),
                client_id: "c".into(),
            },
            Record::Finished {
                session_id: "s \"1\"".into(),
                current_tab: Some(3),
                result: raw(r#"{"actionId":"b","status":"success"}"#),
            },
        ];
        write(dir.path(), &records, b"");
        let (seen, replayed) = kinds(dir.path());
        assert_eq!(seen, ["session", "bound", "finished"]);
        assert_eq!(replayed.records, 3);
    }

    #[test]
    fn a_line_cut_short_by_a_crash_is_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let bound = Record::Bound {
            session_id: "s".into(),
            client_id: "c".into(),
        };
        write(dir.path(), &[bound], br#"{"finished":{"sessionId":"s","res"#);
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
