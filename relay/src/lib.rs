//! `tether-relay`: the server orchestrators and browser hosts dial into. It forwards
//! `browser_action`s to hosts one at a time per session, keeps the registry of online browsers
//! and their twins, stores artifacts, streams events and logs every session.
//!
//! A request's path: `ws` or `routes::actions` read it (`request`) -> `scheduler` (queue,
//! idempotency) -> `dispatch` (browser selection, confirmation, the host exchange over a
//! `host_link`) -> back through `scheduler`, which records the result in `sessions`, the `store`
//! (what survives a restart), `events` and the `session_log`, and hands it to its `reply`. A session's state changes only through
//! the transitions of `sessions::Session`.

pub mod agent_docs;
pub mod app_error;
pub mod artifacts;
pub mod auth;
pub mod by_session;
pub mod catalog_md;
pub mod cluster;
pub mod config;
pub mod confirmations;
pub mod dispatch;
pub mod events;
pub mod handoff;
pub mod handoffs_waiting;
pub mod host_link;
pub mod host_tokens;
pub mod housekeeping;
pub mod ids;
pub mod job;
pub mod listener;
pub mod live_view;
pub mod metrics;
pub mod open_files;
pub mod origins;
pub mod outbox;
pub mod registry;
pub mod reply;
pub mod request;
pub mod routes;
pub mod scheduler;
pub mod server;
pub mod session_log;
pub mod sessions;
pub mod shutdown;
pub mod state;
pub mod store;
pub mod talk;
pub mod twin;
pub mod twin_md;
pub mod ws;
