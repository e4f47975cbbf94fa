//! A tab's console as the host keeps it (docs/protocol.md §17): the page's `console.*` calls,
//! its uncaught exceptions and unhandled rejections, and the browser's own messages about it,
//! read from CDP's events from the moment the tab was prepared, the latest 1000 kept, each
//! numbered (`seq`) so a listing can go on where the last one ended.

use chromiumoxide::cdp::browser_protocol::log::EventEntryAdded;
use chromiumoxide::cdp::js_protocol::runtime::{EventConsoleApiCalled, EventExceptionThrown};
use std::sync::Mutex;

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::Value;
use tether_protocol::actions::browser_console::{Entry, Level, Output, Params, Source};

use crate::page::numbered::{clipped, Log, Numbered};

/// How much of an entry's text is kept: a page's line longer than a screenful is cut.
const TEXT_KEPT: usize = 8 * 1024;

#[derive(Default)]
pub struct ConsoleLog(Mutex<Log<Entry>>);

impl Numbered for Entry {
    fn seq(&self) -> u64 {
        self.seq
    }

    fn number(&mut self, seq: u64) {
        self.seq = seq;
    }
}

impl ConsoleLog {
    /// Takes a CDP event of the tab, if it is one the console keeps.
    pub fn observe(&self, method: &str, params: &Value) {
        let entry = match method {
            EventConsoleApiCalled::IDENTIFIER => console_call(params),
            EventExceptionThrown::IDENTIFIER => exception(params),
            EventEntryAdded::IDENTIFIER => browser_message(params),
            _ => None,
        };
        if let Some(entry) = entry {
            self.log().push(entry);
        }
    }

    fn log(&self) -> std::sync::MutexGuard<'_, Log<Entry>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The seq of the last entry written (0: none yet).
    pub fn last(&self) -> u64 {
        self.log().last()
    }

    /// How many errors and warnings came after `seq`, and the first error's text.
    pub fn errors_and_warnings_after(&self, seq: u64) -> (u64, u64, Option<String>) {
        let log = self.log();
        let (mut errors, mut warnings, mut first) = (0, 0, None);
        for entry in log.after(seq) {
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
    /// `limit` (see [`Log::walk`]).
    pub fn list(&self, p: &Params) -> Output {
        let log = self.log();
        let wanted = |e: &Entry| e.level >= p.level && p.text.as_deref().is_none_or(|t| e.text.contains(t));
        let walk = log.walk(p.since, p.limit() as usize, wanted);
        Output {
            entries: walk.listed.into_iter().cloned().collect(),
            next: walk.next,
            dropped: walk.dropped,
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
    if said["url"]
        .as_str()
        .is_some_and(crate::page::network::is_site_icon)
    {
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
        text: clipped(&text, TEXT_KEPT),
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

    #[test]
    fn a_page_that_logs_megabytes_a_line_is_kept_a_screenful_a_line() {
        let console = ConsoleLog::default();
        let huge = "x".repeat(4 << 20);
        let call =
            json!({ "type": "log", "args": [{ "type": "string", "value": huge }], "timestamp": 1.7e12 });
        console.observe("Runtime.consoleAPICalled", &call);
        let p = Params {
            tab_id: 1,
            level: Level::Info,
            since: None,
            text: None,
            limit: None,
        };
        let text = &console.list(&p).entries[0].text;
        assert!(
            text.len() < TEXT_KEPT + 64 && text.ends_with("(4194304 bytes in all)"),
            "{}",
            text.len()
        );
    }
}
