//! `tether-host`: runs Tether's browser-action catalog over CDP.
//!
//! The same actions run in both modes: as a worker with its own Chromium (CDP over a WebSocket)
//! and, started by Chrome, through the extension's `chrome.debugger` bridge. See
//! `docs/architecture.md` for how the pieces fit.

pub mod actions;
pub mod artifacts;
pub mod cdp;
pub mod chromium;
pub mod config;
pub mod console;
pub mod contexts;
pub mod deliveries;
pub mod dialogs;
pub mod downloads;
pub mod engine;
pub mod exec;
pub mod extension;
pub mod framed;
pub mod frames;
pub mod glob;
pub mod handoffs;
pub mod install;
pub mod library;
pub mod live_screen;
pub mod live_view;
pub mod loading;
pub mod local;
pub mod mcp;
pub mod network;
pub mod numbered;
pub mod observed;
pub mod page;
pub mod policy;
pub mod profiles;
pub mod relay_link;
pub mod rules;
pub mod secrets;
pub mod sessions;
pub mod settle;
pub mod tab_state;
pub mod tabs;
pub mod tls;
pub mod twin_report;
pub mod worker;

pub use engine::Engine;
