//! How the relay and the host write their logs: to stderr (stdout carries results and, in
//! extension mode, native-messaging frames), as text for a person or as one JSON object a line
//! for a log store (`--log-format`), filtered by `RUST_LOG` or the caller's default. Colour
//! only where stderr is a terminal: a file, a pipe or the journal gets none.

use std::io::IsTerminal;

use tracing_subscriber::EnvFilter;

/// The shape of a log line.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// `2026-11-28T06:50:55.973967Z  INFO target: message key=value`.
    #[default]
    Text,
    /// `{"timestamp":..,"level":..,"target":..,"fields":{"message":..,..}}`, a line each.
    Json,
}

impl LogFormat {
    /// The format `TETHER_LOG_FORMAT` names, read as the `--log-format` flag reads it; text
    /// when it names none. For a process started without a command line of ours (Chrome
    /// starts the native host).
    pub fn from_env() -> Self {
        std::env::var("TETHER_LOG_FORMAT")
            .ok()
            .and_then(|name| <Self as clap::ValueEnum>::from_str(&name, false).ok())
            .unwrap_or_default()
    }
}

/// Sets this process's log writer; `default_filter` applies unless `RUST_LOG` says otherwise.
pub fn init(format: LogFormat, default_filter: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| default_filter.into());
    let builder = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(filter);
    match format {
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).init(),
        LogFormat::Json => builder.json().init(),
    }
}
