//! `tether-relay`: the server orchestrators and browser hosts dial into. It forwards
//! `browser_action`s to hosts one at a time per session, keeps the registry of online browsers
//! and their twins, stores artifacts, streams events and logs every session.
//!
//! The modules stand on floors, each a folder (or a file) that uses only the floors below it
//! (`tests/layers.rs` checks it), bottom up:
//! - [`parts`]: small pieces that know nothing of the relay (ids, a peer's outbox, shutdown,
//!   metrics, the relay's origins);
//! - [`stores`]: what the relay keeps on disk (the database of §22, artifacts, session logs
//!   and the events written to them, host tokens);
//! - [`config`]: what the relay is told as it starts (flags, settings, tokens);
//! - [`core`]: sessions and browsers, the one `Relay` holding them with its `Deployment` seam,
//!   and an action's path (scheduler, dispatch);
//! - [`cluster`] (several relays on NATS, one `Deployment`) and [`edge`] (HTTP, WebSocket, MCP,
//!   the console), side by side, neither using the other;
//! - [`server`] (the router on its listener) and `main` (which chooses the deployment).
//!
//! A request's path: `edge::ws` or `edge::routes::actions` read it (`core::request`) ->
//! `core::scheduler` (queue, idempotency) -> `core::dispatch` (browser selection, confirmation,
//! the host exchange over a `host_link`) -> back through the scheduler, which records the
//! result in `sessions`, the `store` (what survives a restart), `events` and the
//! `session_log`, and hands it to its `reply`. A session's state changes only through the
//! transitions of `core::sessions::Session`.

pub mod cluster;
pub mod config;
pub mod core;
pub mod edge;
pub mod parts;
pub mod server;
pub mod stores;
