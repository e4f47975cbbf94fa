//! `tether-relay`: the server orchestrators and browser hosts dial into. It forwards
//! `browser_action`s to hosts one at a time per session, keeps the registry of online browsers
//! and their twins, stores artifacts, streams events and logs every session.
//!
//! Built so far: configuration and tokens, role-separated auth, health and catalog routes,
//! the `/ws` handshake, the registry of hosts, the artifact store.

pub mod artifacts;
pub mod auth;
pub mod catalog_md;
pub mod config;
pub mod connection;
pub mod ids;
pub mod registry;
pub mod routes;
pub mod server;
pub mod session_log;
