//! Where big outputs go (screenshots, HTML, long text): an [`ArtifactSink`] stores the bytes
//! and hands back a reference, so results never carry base64.
//!
//! Standalone (`exec`) the sink is a local folder; connected to a relay it is the relay's
//! artifact store.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use rand::RngCore;
use tether_protocol::actions::ArtifactRef;
use tether_protocol::ActionError;

#[async_trait]
pub trait ArtifactSink: Send + Sync + 'static {
    async fn put(&self, bytes: Vec<u8>, content_type: &str) -> Result<ArtifactRef, ActionError>;
}

/// A random id of 128 bits, hex: unguessable, and safe in a path or a URL.
pub fn new_artifact_id() -> String {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// Stores artifacts as files `<id>.<ext>` in one folder; the reference URL is `file://`.
pub struct LocalDirSink {
    dir: PathBuf,
}

impl LocalDirSink {
    pub fn new(dir: impl Into<PathBuf>) -> std::io::Result<Self> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        Ok(Self {
            dir: std::fs::canonicalize(dir)?,
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

fn extension(content_type: &str) -> &'static str {
    match content_type.split(';').next().unwrap_or_default().trim() {
        "image/png" => "png",
        "image/jpeg" => "jpg",
        "text/html" => "html",
        "text/plain" => "txt",
        "application/json" => "json",
        _ => "bin",
    }
}

#[async_trait]
impl ArtifactSink for LocalDirSink {
    async fn put(&self, bytes: Vec<u8>, content_type: &str) -> Result<ArtifactRef, ActionError> {
        let artifact_id = new_artifact_id();
        let path = self
            .dir
            .join(format!("{artifact_id}.{}", extension(content_type)));
        tokio::fs::write(&path, bytes)
            .await
            .map_err(|e| ActionError::internal(format!("cannot write artifact {}: {e}", path.display())))?;
        Ok(ArtifactRef {
            artifact_id,
            url: format!("file://{}", path.display()),
        })
    }
}

/// Uploads artifacts to the relay's store (`PUT /artifacts` with the host token); the
/// reference URL is the relay's presigned one, ready to hand to anyone.
pub struct RelaySink {
    http: reqwest::Client,
    upload_url: String,
    token: String,
}

impl RelaySink {
    /// `relay` is the relay's base URL (`http://host:port` or `https://...`).
    pub fn new(relay: &str, token: &str, tls: &Arc<rustls::ClientConfig>) -> Self {
        let http = reqwest::Client::builder()
            .use_preconfigured_tls((**tls).clone())
            .build()
            .unwrap_or_else(|e| {
                tracing::warn!("cannot build an HTTP client with the TLS settings ({e}); using the defaults");
                reqwest::Client::new()
            });
        Self {
            http,
            upload_url: format!("{}/artifacts", relay.trim_end_matches('/')),
            token: token.to_owned(),
        }
    }
}

#[async_trait]
impl ArtifactSink for RelaySink {
    async fn put(&self, bytes: Vec<u8>, content_type: &str) -> Result<ArtifactRef, ActionError> {
        let size = bytes.len();
        let response = self
            .http
            .put(&self.upload_url)
            .bearer_auth(&self.token)
            .header(reqwest::header::CONTENT_TYPE, content_type)
            .body(bytes)
            .send()
            .await
            .map_err(|e| ActionError::internal(format!("cannot upload an artifact to the relay: {e}")))?;
        let status = response.status();
        let body: serde_json::Value = response.json().await.unwrap_or_default();
        if status.is_success() {
            return serde_json::from_value(body).map_err(|e| {
                ActionError::internal(format!(
                    "the relay's answer to an upload is not {{artifactId, url}}: {e}"
                ))
            });
        }
        // The relay says why in the spec's shape; keep its code (PAYLOAD_TOO_LARGE, ...).
        let message = body["message"].as_str().unwrap_or("no reason given");
        let code =
            serde_json::from_value(body["code"].clone()).unwrap_or(tether_protocol::ErrorCode::Internal);
        Err(ActionError::new(
            code,
            format!("the relay refused a {size}-byte artifact ({status}): {message}"),
        ))
    }
}
