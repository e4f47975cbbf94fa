//! The HTTP routes of PROTOCOL.md §3 beyond the catalog and health, one module per resource.

pub mod actions;
pub mod artifacts;
pub mod screen;
pub mod sessions;
pub mod twin;
