//! The relay's core: what a session and a browser are, the one `Relay` that holds them, and
//! an action's path through them. Uses `parts`, `stores` and `config`; never the edge or the
//! cluster, which it reaches only through `state::Deployment`.
//!
//! Inside, bottom up (no circle, `tests/layers.rs`):
//! - a session's and a browser's parts: `request` and `reply` (an action in and its answer
//!   out), `host_link` (a host's connection and the actions awaiting it), `registry`, `twin`,
//!   `sessions` (the state machine, which holds the scheduler's work only as
//!   `sessions::Work`), `job` (that work), `confirmations`, `handoffs_waiting`, `live_view`;
//! - `state`: the one `Relay`, and the `Deployment` seam (`state/deployment.rs`);
//! - an action's path and the relay's chores: `handoff`, `talk`, `dispatch`, `scheduler`,
//!   `housekeeping`.

pub mod confirmations;
pub mod dispatch;
pub mod handoff;
pub mod handoffs_waiting;
pub mod host_link;
pub mod housekeeping;
pub mod job;
pub mod live_view;
pub mod registry;
pub mod reply;
pub mod request;
pub mod scheduler;
pub mod sessions;
pub mod state;
pub mod talk;
pub mod twin;
