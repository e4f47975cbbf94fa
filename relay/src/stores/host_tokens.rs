//! Per-browser host tokens (docs/protocol.md §15, "a browser's identity is its own"): a token bound
//! to one clientId, minted by `tether-relay host-token --client-id ID`, joins only as that
//! browser; once a clientId has one, the shared host token of `tokens.json` can no longer
//! join as it. Kept in `<data-dir>/host-tokens.json` as SHA-256 digests, never the tokens
//! themselves (a token is shown once, when it is minted), and read again by a running relay
//! whenever the file changes, so minting or revoking needs no restart.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use subtle::ConstantTimeEq;

use tether_os::at_rest;

const FILE: &str = "host-tokens.json";

/// What the file keeps of each browser's token.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Bound {
    /// Hex SHA-256 of the token.
    sha256: String,
    /// When it was minted (RFC 3339).
    created: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    #[serde(default)]
    clients: BTreeMap<String, Bound>,
}

/// The bound tokens a relay checks joins against.
#[derive(Debug, Default)]
pub struct HostTokens {
    path: Option<PathBuf>,
    /// The file as last read, and which file it was then (each save is a new file, renamed
    /// into place, so its inode tells a change even within one tick of the clock).
    read: Mutex<(Option<FileVersion>, Vec<Digest>)>,
}

/// A file's modification time and inode.
type FileVersion = (SystemTime, u64);

/// A browser's clientId and its token's digest.
type Digest = (String, [u8; 32]);

impl HostTokens {
    /// The bound tokens kept in `data_dir`.
    pub fn open(data_dir: &Path) -> Self {
        Self {
            path: Some(data_dir.join(FILE)),
            read: Mutex::default(),
        }
    }

    /// The clientId a bound token belongs to.
    pub fn client_of(&self, token: &str) -> Option<String> {
        let digest = digest(token);
        self.current(|bound| {
            bound
                .iter()
                .find(|(_, d)| bool::from(d.ct_eq(&digest)))
                .map(|(client, _)| client.clone())
        })
    }

    /// Whether `client_id` has a token of its own.
    pub fn is_bound(&self, client_id: &str) -> bool {
        self.current(|bound| bound.iter().any(|(client, _)| client == client_id))
    }

    /// Runs `f` on the bound tokens, reading the file again if it changed.
    fn current<T>(&self, f: impl FnOnce(&[Digest]) -> T) -> T {
        let mut read = self.read.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(path) = &self.path {
            let modified = std::fs::metadata(path).and_then(|m| version(&m)).ok();
            if modified != read.0 {
                let file = load(path).unwrap_or_else(|e| {
                    tracing::error!("{e:#}; no per-browser token is accepted until it is fixed");
                    File::default()
                });
                read.1 = file
                    .clients
                    .into_iter()
                    .filter_map(|(client, bound)| Some((client, parse_digest(&bound.sha256)?)))
                    .collect();
                read.0 = modified;
            }
        }
        f(&read.1)
    }
}

/// Mints a token for `client_id` (replacing one it had) and keeps its digest; the token.
pub fn mint(data_dir: &Path, client_id: &str) -> Result<String> {
    anyhow::ensure!(
        !client_id.is_empty() && client_id.len() <= 256,
        "a clientId is 1 to 256 characters"
    );
    let path = data_dir.join(FILE);
    let mut file = load(&path)?;
    let token = format!("host-{}", crate::parts::ids::random_hex(32));
    let bound = Bound {
        sha256: hex::encode(digest(&token)),
        created: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    };
    file.clients.insert(client_id.to_owned(), bound);
    save(data_dir, &file)?;
    Ok(token)
}

/// Ends `client_id`'s token; whether it had one. The browser then joins with the shared host
/// token again, or not at all until it gets a new one.
pub fn revoke(data_dir: &Path, client_id: &str) -> Result<bool> {
    let mut file = load(&data_dir.join(FILE))?;
    let had = file.clients.remove(client_id).is_some();
    if had {
        save(data_dir, &file)?;
    }
    Ok(had)
}

/// The clientIds that have tokens of their own, with when each was minted.
pub fn list(data_dir: &Path) -> Result<Vec<(String, String)>> {
    let file = load(&data_dir.join(FILE))?;
    Ok(file
        .clients
        .into_iter()
        .map(|(client, bound)| (client, bound.created))
        .collect())
}

fn load(path: &Path) -> Result<File> {
    match std::fs::read_to_string(path) {
        Ok(text) => serde_json::from_str(&text)
            .with_context(|| format!("{} is not a host tokens file", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(File::default()),
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Written whole to a new file, then renamed over the old one: a relay reading it meanwhile
/// sees one or the other.
fn save(data_dir: &Path, file: &File) -> Result<()> {
    at_rest::private_dir(data_dir).with_context(|| format!("cannot create {}", data_dir.display()))?;
    let path = data_dir.join(FILE);
    let fresh = data_dir.join(format!("{FILE}.new"));
    at_rest::write_private(&fresh, serde_json::to_string_pretty(file)?.as_bytes())
        .with_context(|| format!("cannot write {}", fresh.display()))?;
    std::fs::rename(&fresh, &path).with_context(|| format!("cannot write {}", path.display()))
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

fn parse_digest(text: &str) -> Option<[u8; 32]> {
    hex::decode(text).ok()?.try_into().ok()
}

/// What tells that the tokens file changed: its modified time, and its inode on Unix (a file
/// replaced by a rename within one tick of the clock keeps the time) or its length elsewhere.
fn version(file: &std::fs::Metadata) -> std::io::Result<(std::time::SystemTime, u64)> {
    #[cfg(unix)]
    let identity = std::os::unix::fs::MetadataExt::ino(file);
    #[cfg(not(unix))]
    let identity = file.len();
    Ok((file.modified()?, identity))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn minted_tokens_bind_their_browser_until_revoked() {
        let dir = tempfile::tempdir().unwrap();
        let tokens = HostTokens::open(dir.path());
        assert_eq!(tokens.client_of("anything"), None);
        let laptop = mint(dir.path(), "laptop").unwrap();
        assert_eq!(tokens.client_of(&laptop).as_deref(), Some("laptop"));
        assert!(tokens.is_bound("laptop") && !tokens.is_bound("desk"));
        let kept = std::fs::read_to_string(dir.path().join(FILE)).unwrap();
        assert!(!kept.contains(&laptop), "only the digest is kept");
        assert_eq!(list(dir.path()).unwrap()[0].0, "laptop");
        // A second mint replaces the first token.
        let again = mint(dir.path(), "laptop").unwrap();
        assert!(revoke(dir.path(), "nobody").is_ok_and(|had| !had));
        // The running relay sees the change.
        assert_eq!(tokens.client_of(&laptop), None);
        assert_eq!(tokens.client_of(&again).as_deref(), Some("laptop"));
        assert!(revoke(dir.path(), "laptop").unwrap());
        assert!(!tokens.is_bound("laptop"));
    }
}
