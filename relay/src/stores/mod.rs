//! What the relay keeps on disk: the database of sessions and their results (docs/protocol.md
//! §22, `store`), artifacts, each session's log and the events written to it, the per-browser
//! host tokens. Each store owns its files; nothing above reaches into them but through these
//! modules. Uses `parts` alone.

pub mod artifacts;
pub mod events;
pub mod host_tokens;
pub mod session_log;
pub mod store;
