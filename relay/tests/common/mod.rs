//! What every relay test starts with: a relay on a free port of 127.0.0.1, with known tokens
//! and a throwaway data dir; a WebSocket client; and a test host that answers actions the way
//! each test tells it to (the one fake here: it can misbehave on purpose, a real host can't).
#![allow(dead_code)]

pub mod client;
pub mod process;
pub mod test_host;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use tether_relay::artifacts::{ArtifactStore, Limits};
use tether_relay::config::{Settings, Tokens};
use tether_relay::server::serve;
use tether_relay::session_log::SessionLog;
use tether_relay::state::{AppState, Relay};

pub const ORCHESTRATOR: &str = "orchestrator-secret";
pub const HOST: &str = "host-secret";

/// Starts a relay with default settings; returns the address it listens on.
pub async fn start_relay(limits: Limits) -> SocketAddr {
    start(Settings::default(), limits).await.0
}

/// Starts a relay; returns its address and data dir.
pub async fn start(settings: Settings, limits: Limits) -> (SocketAddr, PathBuf) {
    let tokens = Tokens {
        orchestrator: ORCHESTRATOR.into(),
        host: HOST.into(),
    };
    let data = tempfile::tempdir().unwrap().keep();
    let artifacts = ArtifactStore::open(&data, limits).unwrap();
    let log = SessionLog::new(&data).unwrap();
    let relay = Relay::new(settings, tokens, artifacts, log);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve(listener, AppState(Arc::new(relay)), std::future::pending()));
    (addr, data)
}
