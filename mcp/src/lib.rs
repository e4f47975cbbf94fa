//! Tether's catalog as MCP tools (docs/protocol.md §11): one `rmcp` server handler that the relay
//! mounts at `/mcp` (streamable HTTP) and `tether-host mcp` serves on stdio, so an agent sees
//! the same tools whichever way it plugs in.
//!
//! The tools are made from the catalog's own types (`tools`); a call becomes one action with
//! the agent's defaults filled in (`call`: its own session, the current tab); the action runs
//! wherever the [`Browser`] runs actions (the relay's scheduler, or the host's engine); its
//! result comes back as content an agent reads (`reply`).

mod briefs;
mod browser;
mod call;
pub mod caps;
mod reply;
mod schema;
mod server;
pub mod tools;

pub use browser::Browser;
pub use caps::Caps;
pub use server::{McpSessions, TetherMcp};
