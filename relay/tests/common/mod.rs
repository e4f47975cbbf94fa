//! What every relay test starts with: a relay on a free port of 127.0.0.1, with known tokens
//! and a throwaway data dir.

use std::net::SocketAddr;

use tether_relay::artifacts::{ArtifactStore, Limits};
use tether_relay::config::Tokens;
use tether_relay::server::{router, AppState};

pub const ORCHESTRATOR: &str = "orchestrator-secret";
pub const HOST: &str = "host-secret";

/// Starts a relay; returns the address it listens on.
pub async fn start_relay(limits: Limits) -> SocketAddr {
    let tokens = Tokens {
        orchestrator: ORCHESTRATOR.into(),
        host: HOST.into(),
    };
    let data = tempfile::tempdir().unwrap().keep();
    let artifacts = ArtifactStore::open(&data, limits).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        axum::serve(listener, router(AppState::new(tokens, artifacts)))
            .await
            .unwrap()
    });
    addr
}
