//! How the host runs, its top floor: `exec` (a list of steps), `worker` (a Chromium of its own,
//! serving a relay), `extension` (started by Chrome, CDP through `chrome.debugger`), `mcp`
//! (stdio MCP), and what they share: `local` (a browser this process drives for itself),
//! `relay_link` (the link to a relay, with `deliveries` and `twin_report`), `config` (the host's
//! own settings) and `install`. Uses every floor below; holds an engine.

pub mod config;
pub mod deliveries;
pub mod exec;
pub mod extension;
pub mod install;
pub mod local;
pub mod mcp;
pub mod relay_link;
pub mod twin_report;
pub mod worker;
