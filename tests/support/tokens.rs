//! The tokens every relay the kit starts accepts, one per role.

pub const ORCHESTRATOR: &str = "test-orchestrator-token";
pub const HOST: &str = "test-host-token";
pub const OBSERVER: &str = "test-observer-token";
pub const METRICS: &str = "test-metrics-token";
