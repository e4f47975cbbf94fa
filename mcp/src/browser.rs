//! The seam between the MCP tools and whatever runs their actions.

use async_trait::async_trait;
use serde_json::Value;
use tether_protocol::actions::ArtifactRef;
use tether_protocol::{ActionError, ActionName, ActionResult};

/// Where the actions run: the relay's scheduler, the host's own engine, or a relay reached
/// over HTTP. Whatever runs them logs them and tells observers as for any other caller.
#[async_trait]
pub trait Browser: Send + Sync + 'static {
    /// Runs one action in the session and answers its result, errors included.
    async fn act(&self, session_id: &str, action: ActionName, params: Value) -> ActionResult;

    /// The bytes of an artifact an action stored (a screenshot).
    async fn artifact(&self, artifact: &ArtifactRef) -> Result<Vec<u8>, ActionError>;

    /// The names of the secrets held by the browser that runs (or would run) the session's
    /// actions, for the tools' descriptions (docs/protocol.md §18); none when not known.
    fn secret_names(&self, _session_id: &str) -> Vec<String> {
        Vec::new()
    }
}
