//! The artifact store (docs/protocol.md §3, §6): big payloads (screenshots, HTML, long text) that
//! hosts upload and results reference. Ids are 128 random bits, never paths; the store has a
//! size cap per artifact and in total, and artifacts expire. Result URLs are presigned (an
//! HMAC-SHA256 of id and expiry under the relay's secret), so they can be handed on as they are.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result};
use axum::body::Bytes;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::parts::ids::{random_bytes, random_hex};

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// The largest single artifact.
    pub max_artifact_bytes: u64,
    /// All artifacts together; an upload that would pass it is refused.
    pub max_store_bytes: u64,
    /// How long an artifact (and its presigned URL) lives.
    pub ttl: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_artifact_bytes: 64 * 1024 * 1024,
            max_store_bytes: 2 * 1024 * 1024 * 1024,
            ttl: Duration::from_secs(24 * 60 * 60),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the artifact is {size} bytes; the limit is {limit}")]
    TooLarge { size: u64, limit: u64 },
    #[error("the artifact store is full ({used} of {limit} bytes in use)")]
    Full { used: u64, limit: u64 },
    #[error("cannot store the artifact: {0}")]
    Io(#[from] std::io::Error),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Meta {
    content_type: String,
    /// The file name an orchestrator gave it (`PUT /artifacts?name=`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    size: u64,
    /// Unix seconds after which the artifact is gone.
    expires: u64,
}

pub struct ArtifactStore {
    dir: PathBuf,
    secret: Vec<u8>,
    limits: Limits,
    index: Mutex<HashMap<String, Meta>>,
}

const SECRET_FILE: &str = "artifact-secret";

impl ArtifactStore {
    /// Opens the store under `data_dir/artifacts`, with the relay's signing secret (generated
    /// on first start and kept, so URLs survive a restart). Expired artifacts are dropped.
    pub fn open(data_dir: &Path, limits: Limits) -> Result<Self> {
        let dir = data_dir.join("artifacts");
        tether_os::at_rest::private_dir(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let secret = load_secret(&data_dir.join(SECRET_FILE))?;
        let store = Self {
            dir,
            secret,
            limits,
            index: Mutex::default(),
        };
        store.load_index()?;
        Ok(store)
    }

    /// How many artifacts are kept, and their bytes.
    pub fn usage(&self) -> (usize, u64) {
        let index = self.lock();
        (index.len(), index.values().map(|m| m.size).sum())
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Signs with the secret of a deployment of several relays (docs/protocol.md §14), so a link
    /// made by one verifies on all.
    pub fn use_secret(&mut self, secret: Vec<u8>) {
        self.secret = secret;
    }

    /// What the store knows of an artifact besides its bytes, as text, for another relay.
    pub fn description(&self, id: &str) -> Option<String> {
        let meta = self.lock().get(id).cloned()?;
        serde_json::to_string(&meta).ok()
    }

    /// An artifact another relay stored, from its [`description`](Self::description) and
    /// bytes: its content type, file name and bytes, unless it has expired.
    pub fn described(description: &str, bytes: Vec<u8>) -> Option<(String, Option<String>, Vec<u8>)> {
        let meta: Meta = serde_json::from_str(description).ok()?;
        (meta.expires > now()).then_some((meta.content_type, meta.name, bytes))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Meta>> {
        self.index.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn load_index(&self) -> Result<()> {
        let now = now();
        for entry in std::fs::read_dir(&self.dir)? {
            let path = entry?.path();
            let Some(id) = path.file_stem().and_then(|s| s.to_str()).filter(|id| is_id(id)) else {
                continue;
            };
            if path.extension().and_then(|e| e.to_str()) != Some("json") {
                continue;
            }
            match std::fs::read(&path)
                .ok()
                .and_then(|b| serde_json::from_slice::<Meta>(&b).ok())
            {
                Some(meta) if meta.expires > now => {
                    self.lock().insert(id.to_owned(), meta);
                }
                _ => self.delete_files(id),
            }
        }
        Ok(())
    }

    /// Stores an artifact; returns its id.
    pub async fn put(&self, bytes: &[u8], content_type: &str) -> Result<String, StoreError> {
        self.put_named(Bytes::copy_from_slice(bytes), content_type, None)
            .await
    }

    /// Stores an artifact under a file name; returns its id.
    pub async fn put_named(
        &self,
        bytes: Bytes,
        content_type: &str,
        name: Option<&str>,
    ) -> Result<String, StoreError> {
        let size = bytes.len() as u64;
        if size > self.limits.max_artifact_bytes {
            return Err(StoreError::TooLarge {
                size,
                limit: self.limits.max_artifact_bytes,
            });
        }
        self.sweep();
        let id = random_hex(16);
        let meta = Meta {
            content_type: content_type.to_owned(),
            name: name.map(str::to_owned),
            size,
            expires: now() + self.limits.ttl.as_secs(),
        };
        {
            // Reserve the space first, so concurrent uploads cannot together pass the cap.
            let mut index = self.lock();
            let used: u64 = index.values().map(|m| m.size).sum();
            if used + size > self.limits.max_store_bytes {
                return Err(StoreError::Full {
                    used,
                    limit: self.limits.max_store_bytes,
                });
            }
            index.insert(id.clone(), meta.clone());
        }
        // Both files in one trip to the blocking pool (each `tokio::fs` call is one).
        let (data, meta_path) = (self.data_path(&id), self.meta_path(&id));
        let meta_json = serde_json::to_vec(&meta).unwrap_or_default();
        let written = tokio::task::spawn_blocking(move || {
            tether_os::at_rest::write_private(&data, &bytes)?;
            tether_os::at_rest::write_private(&meta_path, &meta_json)
        })
        .await
        .unwrap_or_else(|e| Err(std::io::Error::other(e)));
        if let Err(e) = written {
            self.lock().remove(&id);
            self.delete_files(&id);
            return Err(e.into());
        }
        Ok(id)
    }

    /// An artifact's content type, file name (if it has one) and bytes; `None` if unknown or
    /// expired.
    pub async fn get(&self, id: &str) -> Option<(String, Option<String>, Vec<u8>)> {
        if !is_id(id) {
            return None;
        }
        let meta = self.lock().get(id).cloned()?;
        if meta.expires <= now() {
            self.forget(id);
            return None;
        }
        let bytes = tokio::fs::read(self.data_path(id)).await.ok()?;
        Some((meta.content_type, meta.name, bytes))
    }

    /// The query that presigns `id` until it expires: `exp=<unix s>&sig=<hex>`.
    pub fn presign(&self, id: &str) -> String {
        let expires = self.lock().get(id).map_or(now(), |m| m.expires);
        format!("exp={expires}&sig={}", hex::encode(self.signature(id, expires)))
    }

    /// Whether `sig` signs `id` until `expires`, and that moment has not passed. The
    /// comparison is constant-time.
    pub fn verify(&self, id: &str, expires: u64, sig: &str) -> bool {
        let Ok(sig) = hex::decode(sig) else { return false };
        expires > now() && self.mac(id, expires).verify_slice(&sig).is_ok()
    }

    fn signature(&self, id: &str, expires: u64) -> Vec<u8> {
        self.mac(id, expires).finalize().into_bytes().to_vec()
    }

    /// The MAC over an id and its expiry, under the relay's secret.
    fn mac(&self, id: &str, expires: u64) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.secret).expect("HMAC accepts any key length");
        mac.update(format!("{id}\n{expires}").as_bytes());
        mac
    }

    /// Drops expired artifacts.
    fn sweep(&self) {
        let now = now();
        let expired: Vec<String> = self
            .lock()
            .iter()
            .filter(|(_, m)| m.expires <= now)
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            self.forget(&id);
        }
    }

    fn forget(&self, id: &str) {
        self.lock().remove(id);
        self.delete_files(id);
    }

    fn delete_files(&self, id: &str) {
        let _ = std::fs::remove_file(self.data_path(id));
        let _ = std::fs::remove_file(self.meta_path(id));
    }

    fn data_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.bin"))
    }

    fn meta_path(&self, id: &str) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }
}

/// Ids are exactly 32 lowercase hex characters: nothing else ever reaches the filesystem.
pub fn is_id(id: &str) -> bool {
    id.len() == 32
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn load_secret(path: &Path) -> Result<Vec<u8>> {
    match std::fs::read(path) {
        Ok(secret) if secret.len() >= 32 => Ok(secret),
        Ok(_) | Err(_) => {
            let secret = random_bytes(32);
            tether_os::at_rest::write_private(path, &secret)
                .with_context(|| format!("cannot write {}", path.display()))?;
            Ok(secret)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(dir: &Path, limits: Limits) -> ArtifactStore {
        ArtifactStore::open(dir, limits).unwrap()
    }

    #[tokio::test]
    async fn stores_reads_back_and_survives_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let id = store(dir.path(), Limits::default())
            .put(b"hello", "text/plain")
            .await
            .unwrap();
        assert!(is_id(&id));
        let reopened = store(dir.path(), Limits::default());
        assert_eq!(
            reopened.get(&id).await,
            Some(("text/plain".into(), None, b"hello".to_vec()))
        );
    }

    #[tokio::test]
    async fn caps_are_enforced() {
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits {
            max_artifact_bytes: 10,
            max_store_bytes: 15,
            ..Limits::default()
        };
        let s = store(dir.path(), limits);
        assert!(matches!(
            s.put(&[0; 11], "x").await,
            Err(StoreError::TooLarge { size: 11, limit: 10 })
        ));
        s.put(&[0; 10], "x").await.unwrap();
        assert!(matches!(
            s.put(&[0; 6], "x").await,
            Err(StoreError::Full { used: 10, limit: 15 })
        ));
        s.put(&[0; 5], "x").await.unwrap();
    }

    #[tokio::test]
    async fn expired_artifacts_are_gone() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(
            dir.path(),
            Limits {
                ttl: Duration::ZERO,
                ..Limits::default()
            },
        );
        let id = s.put(b"short-lived", "text/plain").await.unwrap();
        assert_eq!(s.get(&id).await, None);
        assert!(!s.data_path(&id).exists(), "its file is deleted");
    }

    #[tokio::test]
    async fn signatures_bind_id_and_expiry() {
        let dir = tempfile::tempdir().unwrap();
        let s = store(dir.path(), Limits::default());
        let id = s.put(b"x", "text/plain").await.unwrap();
        let query = s.presign(&id);
        let (exp, sig) = query.split_once('&').unwrap();
        let exp: u64 = exp.trim_start_matches("exp=").parse().unwrap();
        let sig = sig.trim_start_matches("sig=");
        assert!(s.verify(&id, exp, sig));
        assert!(!s.verify(&id, exp + 1, sig), "a longer expiry is not signed");
        assert!(!s.verify(&random_hex(16), exp, sig), "another id is not signed");
        assert!(!s.verify(&id, exp, "zz"), "garbage is refused");
        assert!(
            !s.verify(&id, 1, &hex::encode(s.signature(&id, 1))),
            "a past expiry is refused"
        );
    }

    #[test]
    fn only_well_formed_ids_reach_the_filesystem() {
        assert!(is_id("0123456789abcdef0123456789abcdef"));
        for bad in [
            "../etc/passwd",
            "0123456789ABCDEF0123456789ABCDEF",
            "abc",
            "0123456789abcdef0123456789abcdeg",
        ] {
            assert!(!is_id(bad), "{bad}");
        }
    }
}
