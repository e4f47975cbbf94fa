//! The browser the actions drive, above its pages: launching Chromium (`chromium`), its
//! contexts and named profiles (`contexts`, `profiles`, §21), the table of prepared tabs and
//! their watchers (`tabs`), which session owns which tab (`sessions`), and the handoffs waiting
//! for a person (`handoffs`). Uses `cdp`, `parts` and `page`; never the actions or the engine.

pub mod chromium;
pub mod contexts;
pub mod handoffs;
pub mod profiles;
pub mod sessions;
pub mod tabs;
