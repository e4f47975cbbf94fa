//! Artifacts across the deployment (docs/protocol.md §14): one signing secret for every relay (kept
//! in the `tether-config` bucket, made by the first relay), and each artifact's bytes also in
//! the JetStream object store `tether-artifacts`, so any relay serves what any other stored.

use std::time::Duration;

use async_nats::jetstream::{self, kv, object_store};
use tokio::io::AsyncReadExt;

use super::Cluster;

const SECRET_KEY: &str = "artifact-secret";

/// The deployment's signing secret: `proposed` if this relay is the first to ask.
pub(super) async fn shared_secret(config: &kv::Store, proposed: Vec<u8>) -> anyhow::Result<Vec<u8>> {
    if config.create(SECRET_KEY, proposed.clone().into()).await.is_ok() {
        return Ok(proposed);
    }
    match config.get(SECRET_KEY).await? {
        Some(secret) if secret.len() >= 32 => Ok(secret.to_vec()),
        _ => anyhow::bail!("the deployment's artifact secret in NATS is missing or too short"),
    }
}

/// The bucket of artifacts' bytes; its objects expire with the artifacts.
pub(super) async fn store(
    js: &jetstream::Context,
    ttl: Duration,
) -> anyhow::Result<object_store::ObjectStore> {
    if let Ok(store) = js.get_object_store("tether-artifacts").await {
        return Ok(store);
    }
    let config = object_store::Config {
        bucket: "tether-artifacts".into(),
        max_age: ttl,
        ..Default::default()
    };
    match js.create_object_store(config).await {
        Ok(store) => Ok(store),
        Err(made) => js
            .get_object_store("tether-artifacts")
            .await
            .map_err(|_| anyhow::anyhow!("cannot make the artifacts' object store in NATS: {made}")),
    }
}

impl Cluster {
    /// Puts an artifact where every relay finds it; `description` is the store's own.
    pub(super) async fn put_artifact(
        &self,
        id: &str,
        description: String,
        mut bytes: &[u8],
    ) -> anyhow::Result<()> {
        let meta = object_store::ObjectMetadata {
            name: id.to_owned(),
            description: Some(description),
            ..Default::default()
        };
        self.artifacts.put(meta, &mut bytes).await?;
        Ok(())
    }

    /// An artifact another relay stored: its description and bytes.
    pub(super) async fn get_artifact(&self, id: &str) -> Option<(String, Vec<u8>)> {
        let mut object = self.artifacts.get(id).await.ok()?;
        let description = object.info.description.clone()?;
        let mut bytes = Vec::with_capacity(object.info.size);
        object.read_to_end(&mut bytes).await.ok()?;
        Some((description, bytes))
    }
}
