//! A tab's console as the host keeps it (docs/protocol.md §17): the page's `console.*` calls,
//! its uncaught exceptions and unhandled rejections, and the browser's own messages about it,
//! read from CDP's events from the moment the tab was prepared, the latest 1000 kept, each
//! numbered (`seq`) so a listing can go on where the last one ended.

use std::collections::VecDeque;
use std::sync::Mutex;

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::Value;
use tether_protocol::actions::browser_console::{Entry, Level, Output, Params, Source};

/// How many entries a tab keeps: the latest.
pub const KEPT: usize = 1000;

#[derive(Default)]
pub struct ConsoleLog(Mutex<Ring>);

#[derive(Default)]
struct Ring {
    entries: VecDeque<Entry>,
    /// The seq of the last entry written (0: none yet).
    last: u64,
}

impl ConsoleLog {
    /// Takes a CDP event of the tab, if it is one the console keeps.
    pub fn observe(&self, method: &str, params: &Value) {
        let entry = match method {
            "Runtime.consoleAPICalled" => console_call(params),
            "Runtime.exceptionThrown" => exception(params),
            "Log.entryAdded" => browser_message(params),
            _ => None,
        };
        if let Some(entry) = entry {
            self.push(entry);
        }
    }

    fn ring(&self) -> std::sync::MutexGuard<'_, Ring> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn push(&self, mut entry: Entry) {
        let mut ring = self.ring();
        ring.last += 1;
        entry.seq = ring.last;
        ring.entries.push_back(entry);
        if ring.entries.len() > KEPT {
            ring.entries.pop_front();
        }
    }

    /// The seq of the last entry written (0: none yet).
    pub fn last(&self) -> u64 {
        self.ring().last
    }

    /// How many errors and warnings came after `seq`, and the first error's text.
    pub fn errors_and_warnings_after(&self, seq: u64) -> (u64, u64, Option<String>) {
        let ring = self.ring();
        let (mut errors, mut warnings, mut first) = (0, 0, None);
        for entry in ring.entries.iter().filter(|e| e.seq > seq) {
            match entry.level {
                Level::Error => {
                    errors += 1;
                    first.get_or_insert_with(|| entry.text.clone());
                }
                Level::Warning => warnings += 1,
                Level::Debug | Level::Info => {}
            }
        }
        (errors, warnings, first)
    }

    /// The entries after `since` from `level` up with `text` in them, oldest first, at most
    /// `limit`; `next` is the last seq looked at, so a walk goes on without losing or
    /// repeating what the buffer held.
    pub fn list(&self, p: &Params) -> Output {
        let ring = self.ring();
        let since = p.since.unwrap_or(0);
        let first_kept = ring.entries.front().map_or(ring.last + 1, |e| e.seq);
        let dropped = first_kept.saturating_sub(since.saturating_add(1));
        let limit = p.limit() as usize;
        let mut entries = Vec::new();
        let mut next = since;
        for entry in ring.entries.iter().filter(|e| e.seq > since) {
            if entries.len() == limit {
                break;
            }
            next = entry.seq;
            let wanted = entry.level >= p.level && p.text.as_deref().is_none_or(|t| entry.text.contains(t));
            if wanted {
                entries.push(entry.clone());
            }
        }
        Output {
            entries,
            next,
            dropped,
        }
    }
}

/// A `console.*` call: its arguments as the console shows them, joined by spaces.
fn console_call(params: &Value) -> Option<Entry> {
    let level = match params["type"].as_str()? {
        "debug" => Level::Debug,
        "warning" => Level::Warning,
        "error" | "assert" => Level::Error,
        _ => Level::Info,
    };
    let args = params["args"].as_array().map(Vec::as_slice).unwrap_or_default();
    let text = args.iter().map(shown).collect::<Vec<_>>().join(" ");
    let frame = &params["stackTrace"]["callFrames"][0];
    Some(entry(level, text, Source::Console, frame, &params["timestamp"]))
}

/// An uncaught exception, or a promise rejected with nobody to handle it.
fn exception(params: &Value) -> Option<Entry> {
    let details = &params["exceptionDetails"];
    let text = details["exception"]["description"]
        .as_str()
        .or_else(|| details["text"].as_str())?
        .to_owned();
    Some(entry(
        Level::Error,
        text,
        Source::Exception,
        details,
        &params["timestamp"],
    ))
}

/// The browser's own message about the page. Console calls and exceptions come as the two
/// events above, so their copies here are left out; so is the browser's own look for a site
/// icon, which no page asked for.
fn browser_message(params: &Value) -> Option<Entry> {
    let said = &params["entry"];
    if said["url"].as_str().is_some_and(crate::network::is_site_icon) {
        return None;
    }
    let source = match said["source"].as_str()? {
        "javascript" | "console-api" => return None,
        "network" => Source::Network,
        _ => Source::Browser,
    };
    let level = match said["level"].as_str()? {
        "verbose" => Level::Debug,
        "warning" => Level::Warning,
        "error" => Level::Error,
        _ => Level::Info,
    };
    let text = said["text"].as_str()?.to_owned();
    Some(entry(level, text, source, said, &said["timestamp"]))
}

/// An entry, its place (`url` and 0-based `lineNumber`) read from `at`; numbered when kept.
fn entry(level: Level, text: String, source: Source, at: &Value, timestamp: &Value) -> Entry {
    let url = at["url"].as_str().filter(|u| !u.is_empty()).map(str::to_owned);
    Entry {
        seq: 0,
        level,
        text,
        source,
        line: url.as_ref().and(at["lineNumber"].as_u64()).map(|l| l + 1),
        url,
        time: time(timestamp.as_f64()),
    }
}

/// A CDP timestamp (milliseconds since the epoch) as RFC 3339 with milliseconds.
fn time(millis: Option<f64>) -> String {
    let at = millis
        .and_then(|ms| DateTime::<Utc>::from_timestamp_millis(ms as i64))
        .unwrap_or_else(Utc::now);
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// A console argument as the console shows it: a string as it is, anything else by its value
/// or its description.
fn shown(arg: &Value) -> String {
    if let Some(text) = arg["value"].as_str() {
        return text.to_owned();
    }
    if let Some(value) = arg.get("value").filter(|v| !v.is_null()) {
        return value.to_string();
    }
    for key in ["unserializableValue", "description"] {
        if let Some(text) = arg[key].as_str() {
            return text.to_owned();
        }
    }
    match arg["type"].as_str() {
        Some("undefined") => "undefined".into(),
        _ => "null".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn log(text: &str, kind: &str) -> Value {
        json!({ "type": kind, "args": [{ "type": "string", "value": text }], "timestamp": 1.7e12 })
    }

    #[test]
    fn a_walk_goes_on_where_it_ended_and_counts_what_was_let_go() {
        let console = ConsoleLog::default();
        for n in 0..(KEPT + 5) {
            console.observe("Runtime.consoleAPICalled", &log(&format!("line {n}"), "log"));
        }
        let p = |since: Option<u64>, limit: u32| Params {
            tab_id: 1,
            level: Level::Info,
            since,
            text: None,
            limit: Some(limit),
        };
        let first = console.list(&p(None, 2));
        assert_eq!(first.dropped, 5, "the five oldest were let go");
        assert_eq!(first.entries.iter().map(|e| e.seq).collect::<Vec<_>>(), [6, 7]);
        let next = console.list(&p(Some(first.next), 2));
        assert_eq!((next.dropped, next.entries[0].seq), (0, 8));
        let warnings = Params {
            level: Level::Warning,
            ..p(None, 10)
        };
        assert_eq!(
            console.list(&warnings).next,
            (KEPT + 5) as u64,
            "a walk past nothing wanted moves on"
        );
    }
}
