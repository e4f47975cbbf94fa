//! The relay's lowest floor: small pieces that know nothing of sessions, browsers or the wire's
//! peers, and that every floor above may use. Uses nothing of the crate.

pub mod by_session;
pub mod ids;
pub mod metrics;
pub mod open_files;
pub mod origins;
pub mod outbox;
pub mod shutdown;
