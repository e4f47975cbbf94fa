//! Tether's wire contract in Rust: the one definition of every type that crosses a process
//! boundary, shared by `tether-host`, `tether-relay` and the tests.
//!
//! The normative text is `docs/protocol.md`; names and codes here follow it exactly.

// The messages table sorts its rows by sender one macro step at a time.
#![recursion_limit = "512"]

pub mod actions;
pub mod between_relays;
pub mod descriptors;
pub mod envelope;
pub mod error;
pub mod framing;
pub mod messages;
pub mod native;
pub mod person;
pub mod read;
pub mod result;
pub mod targets;
pub mod twin;

pub use actions::{ActionCall, ActionName};
pub use envelope::Envelope;
pub use error::{ActionError, ErrorCode};
pub use result::{ActionOutcome, ActionResult};
