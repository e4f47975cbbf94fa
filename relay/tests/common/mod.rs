//! What every relay test starts with, from the shared test kit (`tether-tests`): a relay on a
//! free port of 127.0.0.1 with the kit's tokens and a throwaway data dir, and an orchestrator's
//! WebSocket client; plus, here, a test host that answers actions the way each test tells it
//! to (the one fake: it can misbehave on purpose, a real host can't).
#![allow(dead_code, unused_imports)]

pub mod counting;
pub mod test_host;

use std::net::SocketAddr;
use std::path::PathBuf;

use tether_relay::config::Settings;
use tether_relay::stores::artifacts::Limits;
pub use tether_tests::relay::{HOST, METRICS, OBSERVER, ORCHESTRATOR};
pub use tether_tests::{binary, client, process};

/// Starts a relay with default settings; returns the address it listens on.
pub async fn start_relay(limits: Limits) -> SocketAddr {
    start(Settings::default(), limits).await.0
}

/// Starts a relay; returns its address and data dir.
pub async fn start(settings: Settings, limits: Limits) -> (SocketAddr, PathBuf) {
    tether_tests::relay::serve_here(settings, limits).await
}
