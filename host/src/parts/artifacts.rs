//! Where big outputs go (screenshots, HTML, long text), and where files to upload come from:
//! an [`ArtifactStore`] stores bytes and hands back a reference, so results never carry
//! base64, and gives a stored file to the browser as a file on this machine's disk.
//!
//! Standalone (`exec`) the store is a local folder; connected to a relay it is the relay's
//! artifact store.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use rand::RngCore;
use reqwest::StatusCode;
use tether_protocol::actions::{is_plain_file_name, ArtifactRef};
use tether_protocol::{ActionError, ErrorCode};

#[async_trait]
pub trait ArtifactStore: Send + Sync + 'static {
    async fn put(&self, bytes: Vec<u8>, content_type: &str) -> Result<ArtifactRef, ActionError>;

    /// The stored file `id` as a file on this machine (where the browser can read it), under
    /// the name a page should see, for `session`. It stays there until the session ends (see
    /// [`ArtifactStore::session_ended`]): a page reads a picked file when it likes, not when it
    /// is picked.
    async fn file(&self, id: &str, session: &str) -> Result<LocalFile, ActionError>;

    /// The session ended: what was fetched to this machine for it goes.
    fn session_ended(&self, _session: &str) {}
}

/// A stored file on this machine's disk.
#[derive(Debug, Clone)]
pub struct LocalFile {
    pub path: PathBuf,
    /// The name a page sees (the path's last part).
    pub name: String,
    pub bytes: u64,
}

/// An artifact id the store does not know; `remedy` says how to store the file.
fn unknown(id: &str, remedy: &str) -> ActionError {
    ActionError::invalid_params(format!("no artifact {id:?} (unknown, or expired): {remedy}"))
}

const STORE_IN_RELAY: &str =
    "store the file first with PUT /artifacts?name=<file name> and give the artifactId it answers";

/// A random id of 128 bits, hex: unguessable, and safe in a path or a URL.
pub fn new_artifact_id() -> String {
    let mut bytes = [0u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// Stores artifacts as files `<id>.<ext>` in one folder; the reference URL is `file://`. A file
/// to upload is any file of the folder, named by its file name or by its name without the
/// extension (the id a screenshot was stored under).
pub struct LocalDir {
    dir: PathBuf,
}

impl LocalDir {
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
impl ArtifactStore for LocalDir {
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

    async fn file(&self, id: &str, _session: &str) -> Result<LocalFile, ActionError> {
        let remedy = format!(
            "put the file in {} and give its file name (or its name without the extension)",
            self.dir.display()
        );
        if !is_plain_file_name(id) || id.starts_with('.') {
            return Err(unknown(id, &remedy));
        }
        let exact = self.dir.join(id);
        let path = if exact.is_file() {
            exact
        } else {
            let stem = |p: &Path| p.file_stem().is_some_and(|s| s == id);
            let entries = std::fs::read_dir(&self.dir)
                .map_err(|e| ActionError::internal(format!("cannot list {}: {e}", self.dir.display())))?;
            entries
                .filter_map(|entry| entry.ok().map(|e| e.path()))
                .find(|p| p.is_file() && stem(p))
                .ok_or_else(|| unknown(id, &remedy))?
        };
        let bytes = std::fs::metadata(&path)
            .map_err(|e| ActionError::internal(format!("cannot read {}: {e}", path.display())))?
            .len();
        let name = path
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        Ok(LocalFile { path, name, bytes })
    }
}

/// Uploads artifacts to the relay's store (`PUT /artifacts` with the host token); the
/// reference URL is the relay's presigned one, ready to hand to anyone.
pub struct RelayStore {
    http: reqwest::Client,
    upload_url: String,
    token: String,
    /// Where files fetched for uploads wait for the page to read them; gone when the host is.
    staging: tempfile::TempDir,
}

impl RelayStore {
    /// `relay` is the relay's base URL (`http://host:port` or `https://...`).
    pub fn new(relay: &str, token: &str, tls: &Arc<rustls::ClientConfig>) -> std::io::Result<Self> {
        Ok(Self {
            http: crate::parts::tls::http_client(tls),
            upload_url: format!("{}/artifacts", relay.trim_end_matches('/')),
            token: token.to_owned(),
            staging: tempfile::Builder::new().prefix("tether-uploads-").tempdir()?,
        })
    }
}

impl RelayStore {
    /// Where files fetched for `session` wait: named by a hash of its id (any string).
    fn session_folder(&self, session: &str) -> PathBuf {
        use sha2::Digest;
        self.staging
            .path()
            .join(hex::encode(&sha2::Sha256::digest(session)[..16]))
    }
}

/// The file name a download's `Content-Disposition: attachment; filename*=UTF-8''<name>`
/// carries (the form the relay writes).
fn disposition_name(response: &reqwest::Response) -> Option<String> {
    let header = response
        .headers()
        .get(reqwest::header::CONTENT_DISPOSITION)?
        .to_str()
        .ok()?;
    let encoded = header
        .split("filename*=UTF-8''")
        .nth(1)?
        .split(';')
        .next()?
        .trim();
    let name = percent_encoding::percent_decode_str(encoded).decode_utf8().ok()?;
    is_plain_file_name(&name).then(|| name.into_owned())
}

#[async_trait]
impl ArtifactStore for RelayStore {
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

    async fn file(&self, id: &str, session: &str) -> Result<LocalFile, ActionError> {
        if !is_plain_file_name(id) {
            return Err(unknown(id, STORE_IN_RELAY));
        }
        let response = self
            .http
            .get(format!("{}/{id}", self.upload_url))
            .bearer_auth(&self.token)
            .send()
            .await
            .map_err(|e| ActionError::internal(format!("cannot fetch artifact {id} from the relay: {e}")))?;
        match response.status() {
            StatusCode::OK => {}
            StatusCode::NOT_FOUND => return Err(unknown(id, STORE_IN_RELAY)),
            status => {
                return Err(ActionError::new(
                    ErrorCode::Internal,
                    format!(
                        "the relay refused artifact {id} ({status}): {}",
                        response.text().await.unwrap_or_default()
                    ),
                ))
            }
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let name =
            disposition_name(&response).unwrap_or_else(|| format!("{id}.{}", extension(&content_type)));
        let bytes = response
            .bytes()
            .await
            .map_err(|e| ActionError::internal(format!("cannot fetch artifact {id} from the relay: {e}")))?;
        // A folder per file, so that two files of one name can both be picked, in the
        // session's own folder, which goes when the session ends.
        let folder = self.session_folder(session).join(new_artifact_id());
        let path = folder.join(&name);
        let written = async {
            tokio::fs::create_dir_all(&folder).await?;
            tokio::fs::write(&path, &bytes).await
        };
        written.await.map_err(|e| {
            ActionError::internal(format!("cannot write {} for the browser: {e}", path.display()))
        })?;
        Ok(LocalFile {
            path,
            name,
            bytes: bytes.len() as u64,
        })
    }

    fn session_ended(&self, session: &str) {
        let folder = self.session_folder(session);
        if let Err(e) = std::fs::remove_dir_all(&folder) {
            if e.kind() != std::io::ErrorKind::NotFound {
                tracing::warn!(session, "cannot remove {}: {e}", folder.display());
            }
        }
    }
}
