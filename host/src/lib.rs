//! `tether-host`: runs Tether's browser-action catalog over CDP.
//!
//! The same actions run in both modes: as a worker with its own Chromium (CDP over a WebSocket)
//! and, started by Chrome, through the extension's `chrome.debugger` bridge. See
//! `docs/architecture.md` for how the pieces fit.
//!
//! The modules stand on floors, each a folder that uses only the floors below it
//! (`tests/layers.rs` checks it), bottom up:
//! - [`cdp`] (the one seam to a browser, typed) and [`parts`] (artifacts, TLS, URL patterns,
//!   what the policy answers), side by side;
//! - [`page`]: one tab's page, its frames, the in-page library, what a tab keeps;
//! - [`browser`]: launching Chromium, contexts and profiles, the tabs' table, the sessions;
//! - [`actions`]: the catalog, one file per action;
//! - [`engine`]: runs an action (policy, secrets, settling, what happened, the live view);
//! - [`modes`]: `exec`, `worker`, the extension's host, `mcp`, the link to a relay, install.

pub mod actions;
pub mod browser;
pub mod cdp;
pub mod engine;
pub mod modes;
pub mod page;
pub mod parts;

pub use engine::Engine;
