//! `tether-host install` / `uninstall`: registers this binary as the native-messaging host
//! `dev.tether.host` with Chrome, Chromium, Edge and Brave (Linux and macOS; on Windows the
//! manifest is written and the registry key to add is printed), and writes the host's config.
//! What install wrote is recorded, so uninstall removes exactly that. Running install again
//! rewrites the same files.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::config::{config_dir, HostConfig};

pub const HOST_NAME: &str = "dev.tether.host";
const RECORD: &str = "installed.json";

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Browser {
    Chrome,
    Chromium,
    Edge,
    Brave,
    All,
}

#[derive(clap::Args, Debug)]
pub struct InstallArgs {
    /// The extension's id (32 letters a-p); repeatable.
    #[arg(long = "extension-id", required = true)]
    pub extension_ids: Vec<String>,
    /// The relay to serve, e.g. ws://127.0.0.1:17800.
    #[arg(long)]
    pub relay: String,
    #[command(flatten)]
    pub token: crate::config::HostToken,
    /// This browser's clientId: the one a per-browser token was minted for
    /// (`tether-relay host-token --client-id ID`); without it, one is generated and kept.
    #[arg(long)]
    pub client_id: Option<String>,
    #[arg(long, value_enum, default_value = "all")]
    pub browser: Browser,
    /// Also write the manifest here (a profile's own NativeMessagingHosts folder, as a
    /// browser started with --user-data-dir reads).
    #[arg(long = "manifest-dir")]
    pub manifest_dirs: Vec<PathBuf>,
    /// A page pattern to refuse like the control UI (Chrome match pattern); repeatable.
    #[arg(long = "forbid-url", value_name = "PATTERN")]
    pub forbid_urls: Vec<String>,
    /// PEM certificates of a CA to trust for a wss:// relay, besides the web's roots.
    #[arg(long)]
    pub ca_file: Option<PathBuf>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    manifests: Vec<PathBuf>,
}

/// Where each browser reads user-level host manifests.
fn browser_dirs(browser: Browser) -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    let vendors: &[(Browser, &str, &str)] = &[
        (
            Browser::Chrome,
            ".config/google-chrome",
            "Library/Application Support/Google/Chrome",
        ),
        (
            Browser::Chromium,
            ".config/chromium",
            "Library/Application Support/Chromium",
        ),
        (
            Browser::Edge,
            ".config/microsoft-edge",
            "Library/Application Support/Microsoft Edge",
        ),
        (
            Browser::Brave,
            ".config/BraveSoftware/Brave-Browser",
            "Library/Application Support/BraveSoftware/Brave-Browser",
        ),
    ];
    vendors
        .iter()
        .filter(|(b, _, _)| browser == Browser::All || *b == browser)
        .map(|(_, linux, mac)| {
            let base = if cfg!(target_os = "macos") { mac } else { linux };
            home.join(base).join("NativeMessagingHosts")
        })
        .collect()
}

fn is_extension_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| (b'a'..=b'p').contains(&b))
}

pub fn install(args: InstallArgs) -> Result<Vec<PathBuf>> {
    for id in &args.extension_ids {
        if !is_extension_id(id) {
            bail!("{id:?} is not an extension id (32 letters a-p; chrome://extensions shows it)");
        }
    }
    let origins: Vec<String> = args
        .extension_ids
        .iter()
        .map(|id| format!("chrome-extension://{id}/"))
        .collect();
    let exe = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .context("cannot find this program's own path")?;
    let manifest = json!({
        "name": HOST_NAME,
        "description": "Tether: lets your agent server drive this browser through the Tether extension",
        "path": exe,
        "type": "stdio",
        "allowed_origins": origins,
    });
    let mut dirs = browser_dirs(args.browser);
    dirs.extend(args.manifest_dirs.iter().cloned());
    let mut written = Vec::new();
    for dir in dirs {
        let path = dir.join(format!("{HOST_NAME}.json"));
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        std::fs::write(&path, serde_json::to_string_pretty(&manifest)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
        written.push(path);
    }
    let config = HostConfig {
        relay: args.relay,
        token: args.token.resolve()?,
        allowed_origins: origins,
        forbid_urls: args.forbid_urls,
        ca_file: args.ca_file,
        client_id: args.client_id,
    };
    written.push(config.save()?);
    // Installing again keeps what an earlier install wrote on the list, for uninstall.
    let mut record = read_record();
    for path in &written {
        if !record.manifests.contains(path) {
            record.manifests.push(path.clone());
        }
    }
    std::fs::write(config_dir().join(RECORD), serde_json::to_string_pretty(&record)?)?;
    Ok(written)
}

/// Removes what install wrote; returns the files removed.
pub fn uninstall() -> Result<Vec<PathBuf>> {
    let record_path = config_dir().join(RECORD);
    let record = read_record();
    let mut removed = Vec::new();
    for path in record
        .manifests
        .iter()
        .map(PathBuf::as_path)
        .chain([record_path.as_path()])
    {
        if remove(path)? {
            removed.push(path.to_owned());
        }
    }
    Ok(removed)
}

fn read_record() -> Record {
    std::fs::read_to_string(config_dir().join(RECORD))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default()
}

fn remove(path: &Path) -> Result<bool> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e).with_context(|| format!("cannot remove {}", path.display())),
    }
}

pub fn main_install(args: InstallArgs) -> ExitCode {
    match install(args) {
        Ok(written) => {
            for path in &written {
                println!("wrote {}", path.display());
            }
            if cfg!(windows) {
                println!(
                    "On Windows, also add the registry key HKCU\\Software\\Google\\Chrome\\NativeMessagingHosts\\{HOST_NAME} \
                     (Edge: HKCU\\Software\\Microsoft\\Edge\\NativeMessagingHosts\\{HOST_NAME}) with the manifest's path as its default value."
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("tether-host install: {e:#}");
            ExitCode::from(2)
        }
    }
}

pub fn main_uninstall() -> ExitCode {
    match uninstall() {
        Ok(removed) => {
            for path in &removed {
                println!("removed {}", path.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("tether-host uninstall: {e:#}");
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_extension_id;

    #[test]
    fn extension_ids_are_32_letters_a_to_p() {
        assert!(is_extension_id("eccdmegnppddiconemhgfcncpfpmdggp"));
        assert!(!is_extension_id("eccdmegnppddiconemhgfcncpfpmdggz"));
        assert!(!is_extension_id("../../etc"));
    }
}
