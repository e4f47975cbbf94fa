//! `tether-host install` / `uninstall` with Windows' layout: one manifest in the config folder
//! and a key per browser under HKEY_CURRENT_USER naming it. The registry here is the one in
//! memory that stands for it on every OS; scripts/cross-check.sh runs the real one under Wine.

use clap::Parser;
use serde_json::Value;
use tether_host::modes::install::registry::Memory;
use tether_host::modes::install::{install_with, uninstall_with, InstallArgs, Os};

const ID: &str = "eccdmegnppddiconemhgfcncpfpmdggp";

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    install: InstallArgs,
}

fn args() -> InstallArgs {
    Cli::parse_from([
        "install",
        "--extension-id",
        ID,
        "--relay",
        "ws://127.0.0.1:17800",
        "--token",
        "t0k",
    ])
    .install
}

#[test]
fn on_windows_install_sets_a_key_per_browser_naming_one_manifest_and_uninstall_removes_both() {
    let home = tempfile::tempdir().unwrap();
    // The config folder (on Windows %LOCALAPPDATA%\Tether) is what XDG_CONFIG_HOME names; this
    // binary's one test is the only reader of its environment.
    std::env::set_var("XDG_CONFIG_HOME", home.path().join("local"));
    let registry = Memory::default();

    let written = install_with(args(), Os::Windows, home.path(), &registry).unwrap();
    let manifest_path = home.path().join("local/tether/dev.tether.host.json");
    let keys = [
        r"Software\Google\Chrome\NativeMessagingHosts\dev.tether.host",
        r"Software\Chromium\NativeMessagingHosts\dev.tether.host",
        r"Software\Microsoft\Edge\NativeMessagingHosts\dev.tether.host",
        r"Software\BraveSoftware\Brave-Browser\NativeMessagingHosts\dev.tether.host",
    ];
    let values = registry.values.lock().unwrap().clone();
    assert_eq!(values.keys().map(String::as_str).collect::<Vec<_>>().len(), 4);
    for key in keys {
        assert_eq!(
            values.get(key).map(String::as_str),
            manifest_path.to_str(),
            "{key}"
        );
    }
    assert_eq!(written.keys.len(), 4);
    let manifest: Value = serde_json::from_str(&std::fs::read_to_string(&manifest_path).unwrap()).unwrap();
    assert_eq!(manifest["name"], "dev.tether.host");
    assert_eq!(
        manifest["allowed_origins"],
        serde_json::json!([format!("chrome-extension://{ID}/")])
    );
    assert!(std::path::Path::new(manifest["path"].as_str().unwrap()).exists());
    // No folder of a Linux or macOS browser is written.
    assert!(!home.path().join(".config").exists());
    let config = home.path().join("local/tether/host.json");
    assert!(config.exists());

    // Again: the same keys and files, once each on the record.
    install_with(args(), Os::Windows, home.path(), &registry).unwrap();
    assert_eq!(registry.values.lock().unwrap().len(), 4);

    let removed = uninstall_with(&registry).unwrap();
    assert_eq!(removed.keys.len(), 4, "{removed:?}");
    assert!(registry.values.lock().unwrap().is_empty());
    assert!(!manifest_path.exists() && !config.exists());
}
