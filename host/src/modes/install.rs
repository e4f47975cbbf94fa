//! `tether-host install` / `uninstall`: registers this binary as the native-messaging host
//! `dev.tether.host` with Chrome, Chromium, Edge and Brave, and writes the host's config. On
//! Linux and macOS a manifest goes in each browser's `NativeMessagingHosts` folder (and Chrome
//! Beta's, Dev's and Canary's where they are installed); on Windows one manifest goes in
//! `%LOCALAPPDATA%\Tether` and each browser's key under `HKCU` names it ([`registry`]).
//! What install wrote is recorded, so uninstall removes exactly that. Running install again
//! rewrites the same files and keys.

pub mod registry;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::modes::config::{config_dir, HostConfig};

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
    pub token: crate::modes::config::HostToken,
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

/// What install wrote, for uninstall.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Record {
    manifests: Vec<PathBuf>,
    /// Registry keys under `HKCU` (Windows).
    #[serde(default)]
    keys: Vec<String>,
}

/// Which operating system's layout install writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Os {
    Linux,
    MacOs,
    Windows,
}

impl Os {
    pub fn current() -> Self {
        if cfg!(windows) {
            Self::Windows
        } else if cfg!(target_os = "macos") {
            Self::MacOs
        } else {
            Self::Linux
        }
    }
}

/// Where each browser reads user-level host manifests (Linux and macOS).
fn browser_dirs(browser: Browser, os: Os, home: &Path) -> Vec<PathBuf> {
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
    // Chrome's other channels, written only where they are installed.
    let channels: &[(&str, &str)] = &[
        (
            ".config/google-chrome-beta",
            "Library/Application Support/Google/Chrome Beta",
        ),
        (
            ".config/google-chrome-unstable",
            "Library/Application Support/Google/Chrome Dev",
        ),
        ("", "Library/Application Support/Google/Chrome Canary"),
    ];
    let pick = |(linux, mac): (&str, &str)| if os == Os::MacOs { mac } else { linux }.to_owned();
    let mut dirs: Vec<PathBuf> = vendors
        .iter()
        .filter(|(b, _, _)| browser == Browser::All || *b == browser)
        .map(|(_, linux, mac)| home.join(pick((linux, mac))))
        .collect();
    if matches!(browser, Browser::All | Browser::Chrome) {
        dirs.extend(
            channels
                .iter()
                .map(|(linux, mac)| pick((linux, mac)))
                .filter(|base| !base.is_empty())
                .map(|base| home.join(base))
                .filter(|dir| dir.is_dir()),
        );
    }
    dirs.into_iter()
        .map(|dir| dir.join("NativeMessagingHosts"))
        .collect()
}

/// Browsers from a snap or a Flatpak read manifests inside their sandbox, and may not run a
/// host outside it: said to the person rather than guessed at.
fn sandboxed_browsers(home: &Path) -> Vec<String> {
    let found = [
        ("snap/chromium", "the snap Chromium (manifests in ~/snap/chromium/common/chromium/NativeMessagingHosts; the snap may refuse hosts outside it)"),
        (".var/app/com.google.Chrome", "the Flatpak Chrome (manifests in ~/.var/app/com.google.Chrome/config/google-chrome/NativeMessagingHosts; it runs hosts only through flatpak-spawn)"),
        (".var/app/org.chromium.Chromium", "the Flatpak Chromium (manifests in ~/.var/app/org.chromium.Chromium/config/chromium/NativeMessagingHosts; it runs hosts only through flatpak-spawn)"),
    ];
    found
        .iter()
        .filter(|(dir, _)| home.join(dir).is_dir())
        .map(|(_, said)| said.to_string())
        .collect()
}

fn is_extension_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| (b'a'..=b'p').contains(&b))
}

/// What install wrote: files, and registry keys (Windows).
#[derive(Debug, Default)]
pub struct Written {
    pub files: Vec<PathBuf>,
    pub keys: Vec<String>,
}

/// Installs for this machine's browsers.
pub fn install(args: InstallArgs) -> Result<Written> {
    #[cfg(windows)]
    let registry = registry::CurrentUser;
    #[cfg(not(windows))]
    let registry = registry::Memory::default();
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    install_with(args, Os::current(), &home, &registry)
}

/// Installs the layout of `os`, with the registry calls going to `registry`.
pub fn install_with(
    args: InstallArgs,
    os: Os,
    home: &Path,
    registry: &dyn registry::Registry,
) -> Result<Written> {
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
        "path": plain_path(&exe),
        "type": "stdio",
        "allowed_origins": origins,
    });
    let mut dirs = match os {
        Os::Windows => vec![config_dir()],
        Os::Linux | Os::MacOs => browser_dirs(args.browser, os, home),
    };
    dirs.extend(args.manifest_dirs.iter().cloned());
    let mut written = Written::default();
    for dir in dirs {
        let path = dir.join(format!("{HOST_NAME}.json"));
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        std::fs::write(&path, serde_json::to_string_pretty(&manifest)?)
            .with_context(|| format!("cannot write {}", path.display()))?;
        written.files.push(path);
    }
    if os == Os::Windows {
        let manifest_path = written.files[0].clone();
        for key in registry::keys(args.browser) {
            registry
                .set_default(&key, &plain_path(&manifest_path))
                .with_context(|| format!("cannot set HKEY_CURRENT_USER\\{key}"))?;
            written.keys.push(key);
        }
    }
    let config = HostConfig {
        relay: args.relay,
        token: args.token.resolve()?,
        allowed_origins: origins,
        forbid_urls: args.forbid_urls,
        ca_file: args.ca_file,
        client_id: args.client_id,
    };
    written.files.push(config.save()?);
    // Installing again keeps what an earlier install wrote on the list, for uninstall.
    let mut record = read_record();
    for path in &written.files {
        if !record.manifests.contains(path) {
            record.manifests.push(path.clone());
        }
    }
    for key in &written.keys {
        if !record.keys.contains(key) {
            record.keys.push(key.clone());
        }
    }
    std::fs::write(config_dir().join(RECORD), serde_json::to_string_pretty(&record)?)?;
    Ok(written)
}

/// A path as the browser reads it: Windows' canonical form starts `\\?\`, which a manifest
/// or registry value does not need.
fn plain_path(path: &Path) -> String {
    let text = path.display().to_string();
    text.strip_prefix(r"\\?\").map(str::to_owned).unwrap_or(text)
}

/// Removes what install wrote; returns the files and keys removed.
pub fn uninstall() -> Result<Written> {
    #[cfg(windows)]
    let registry = registry::CurrentUser;
    #[cfg(not(windows))]
    let registry = registry::Memory::default();
    uninstall_with(&registry)
}

/// Removes what install wrote, with the registry calls going to `registry`.
pub fn uninstall_with(registry: &dyn registry::Registry) -> Result<Written> {
    let record_path = config_dir().join(RECORD);
    let record = read_record();
    let mut removed = Written::default();
    for key in &record.keys {
        if registry
            .delete(key)
            .with_context(|| format!("cannot delete HKEY_CURRENT_USER\\{key}"))?
        {
            removed.keys.push(key.clone());
        }
    }
    for path in record
        .manifests
        .iter()
        .map(PathBuf::as_path)
        .chain([record_path.as_path()])
    {
        if remove(path)? {
            removed.files.push(path.to_owned());
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
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    match install(args) {
        Ok(written) => {
            say(&written, "wrote", "set");
            for browser in sandboxed_browsers(&home) {
                println!("note: found {browser}; pass --manifest-dir to write there too");
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
            say(&removed, "removed", "deleted");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("tether-host uninstall: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn say(done: &Written, files: &str, keys: &str) {
    for path in &done.files {
        println!("{files} {}", path.display());
    }
    for key in &done.keys {
        println!("{keys} HKEY_CURRENT_USER\\{key}");
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
