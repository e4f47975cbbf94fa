//! The host's own settings, kept in `$XDG_CONFIG_HOME/tether/` (else `~/.config/tether/`):
//! `host.json`, written by `tether-host install` and read in extension mode (Chrome starts the
//! host with no arguments but the caller's origin), and `client-id`, this browser's stable id.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HostConfig {
    /// The relay to serve, e.g. ws://127.0.0.1:17800.
    pub relay: String,
    /// The relay's host token.
    pub token: String,
    /// Extension origins allowed to start this host (`chrome-extension://<id>/`).
    pub allowed_origins: Vec<String>,
    /// Page patterns refused like the control UI, besides the relay's own pages.
    #[serde(default)]
    pub forbid_urls: Vec<String>,
    /// PEM certificates of a CA to trust for a `wss://` relay, besides the web's roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<PathBuf>,
    /// This browser's id; generated into `client-id` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
}

/// The relay's host token, from where it stays out of sight (docs/protocol.md §15): the
/// environment, or a file only its owner reads; `--token` on the command line works too, but
/// any local user can read a process's arguments.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct HostToken {
    /// The relay's host token (better: TETHER_HOST_TOKEN, or --token-file).
    #[arg(long, env = "TETHER_HOST_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// A file holding the relay's host token (a per-browser one from `tether-relay host-token`).
    #[arg(long, value_name = "FILE", conflicts_with = "token")]
    pub token_file: Option<PathBuf>,
}

impl HostToken {
    /// The token, from the flag, the environment or the file.
    pub fn resolve(&self) -> Result<String> {
        let token = match (&self.token, &self.token_file) {
            (Some(token), _) => token.clone(),
            (None, Some(file)) => std::fs::read_to_string(file)
                .with_context(|| format!("cannot read the host token from {}", file.display()))?,
            (None, None) => anyhow::bail!(
                "a host token is needed: set TETHER_HOST_TOKEN, or give --token-file FILE (or --token)"
            ),
        };
        let token = token.trim();
        anyhow::ensure!(!token.is_empty(), "the host token is empty");
        Ok(token.to_owned())
    }
}

/// `$XDG_CONFIG_HOME/tether`, else `~/.config/tether`; on Windows `%LOCALAPPDATA%\Tether`
/// (unless `XDG_CONFIG_HOME`, which Windows never sets, names another).
pub fn config_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("XDG_CONFIG_HOME") {
        return PathBuf::from(dir).join("tether");
    }
    if cfg!(windows) {
        if let Some(local) = std::env::var_os("LOCALAPPDATA") {
            return PathBuf::from(local).join("Tether");
        }
    }
    std::env::var_os("HOME")
        .map(|h| Path::new(&h).join(".config"))
        .unwrap_or_else(std::env::temp_dir)
        .join("tether")
}

pub fn config_path() -> PathBuf {
    config_dir().join("host.json")
}

impl HostConfig {
    pub fn load() -> Result<Self> {
        let path = config_path();
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {} (run tether-host install)", path.display()))?;
        serde_json::from_str(&text).with_context(|| format!("{} is not a host config", path.display()))
    }

    /// Writes the config where `load` finds it, readable by its owner only: it holds a token.
    pub fn save(&self) -> Result<PathBuf> {
        let path = config_path();
        write_private(&path, serde_json::to_string_pretty(self)?.as_bytes())?;
        Ok(path)
    }

    pub fn allows(&self, origin: &str) -> bool {
        self.allowed_origins.iter().any(|allowed| allowed == origin)
    }
}

/// A clientId made once and kept, so the relay knows this browser across restarts.
pub fn stored_client_id() -> Result<String> {
    let path = config_dir().join("client-id");
    if let Ok(id) = std::fs::read_to_string(&path) {
        let id = id.trim();
        if !id.is_empty() {
            return Ok(id.to_owned());
        }
    }
    let id = format!("browser-{}", crate::parts::artifacts::new_artifact_id());
    write_private(&path, id.as_bytes())?;
    Ok(id)
}

fn write_private(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent() {
        tether_os::at_rest::private_dir(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    tether_os::at_rest::write_private(path, bytes).with_context(|| format!("cannot write {}", path.display()))
}
