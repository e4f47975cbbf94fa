//! `tether-host install` and `uninstall` as a user runs them, in a throwaway HOME.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

const ID: &str = "eccdmegnppddiconemhgfcncpfpmdggp";

fn host(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tether-host"))
        .args(args)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .output()
        .unwrap()
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn install_registers_the_host_with_each_browser_and_uninstall_removes_it() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    std::fs::create_dir_all(home.join(".config/google-chrome-beta")).unwrap();
    let install = [
        "install",
        "--extension-id",
        ID,
        "--relay",
        "ws://127.0.0.1:17800",
        "--token",
        "t0k",
    ];
    let out = host(home, &install);
    assert!(out.status.success(), "{out:?}");
    let browsers = [
        ".config/google-chrome",
        ".config/chromium",
        ".config/microsoft-edge",
        ".config/BraveSoftware/Brave-Browser",
    ];
    for browser in browsers {
        let manifest = read(
            &home
                .join(browser)
                .join("NativeMessagingHosts/dev.tether.host.json"),
        );
        assert_eq!(manifest["name"], "dev.tether.host");
        assert_eq!(manifest["type"], "stdio");
        assert_eq!(
            manifest["allowed_origins"],
            serde_json::json!([format!("chrome-extension://{ID}/")])
        );
        let path = Path::new(manifest["path"].as_str().unwrap());
        assert!(path.is_absolute() && path.exists(), "{path:?}");
    }
    let config_path = home.join(".config/tether/host.json");
    let config = read(&config_path);
    assert_eq!(
        (config["relay"].as_str(), config["token"].as_str()),
        (Some("ws://127.0.0.1:17800"), Some("t0k"))
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&config_path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the config holds a token");
    }
    // Chrome Beta is installed (its folder is there) and gets the manifest too; Canary, which
    // is not, does not.
    assert!(home
        .join(".config/google-chrome-beta/NativeMessagingHosts/dev.tether.host.json")
        .exists());
    assert!(!home.join(".config/google-chrome-unstable").exists());

    // Again, safely: the same files, rewritten.
    assert!(host(home, &install).status.success());

    let out = host(home, &["uninstall"]);
    assert!(out.status.success(), "{out:?}");
    for browser in browsers.iter().chain([&".config/google-chrome-beta"]) {
        assert!(!home
            .join(browser)
            .join("NativeMessagingHosts/dev.tether.host.json")
            .exists());
    }
    assert!(!config_path.exists());
}

#[test]
fn install_takes_its_settings_from_a_config_file_and_flags_over_it() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let file = home.join("host.toml");
    std::fs::write(
        &file,
        format!("extension-id = [\"{ID}\"]\nrelay = \"ws://from-file:1\"\ntoken = \"t0k\"\nbrowser = \"chrome\"\n"),
    )
    .unwrap();
    let out = host(
        home,
        &[
            "install",
            "--config",
            file.to_str().unwrap(),
            "--relay",
            "ws://flag:2",
        ],
    );
    assert!(out.status.success(), "{out:?}");
    let config = read(&home.join(".config/tether/host.json"));
    assert_eq!(config["relay"], "ws://flag:2", "the flag wins");
    assert_eq!(config["token"], "t0k", "the file's");
    assert!(home
        .join(".config/google-chrome/NativeMessagingHosts/dev.tether.host.json")
        .exists());
    assert!(
        !home.join(".config/chromium").exists(),
        "browser = chrome, from the file"
    );

    std::fs::write(&file, "relays = 2\n").unwrap();
    let out = host(home, &["install", "--config", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("\"relays\""),
        "{out:?}"
    );
}

#[test]
fn install_refuses_what_is_not_an_extension_id() {
    let home = tempfile::tempdir().unwrap();
    let out = host(
        home.path(),
        &[
            "install",
            "--extension-id",
            "../../x",
            "--relay",
            "ws://r",
            "--token",
            "t",
        ],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not an extension id"));
}

#[test]
fn extension_mode_refuses_an_origin_the_config_does_not_allow_and_writes_nothing_to_stdout() {
    let home = tempfile::tempdir().unwrap();
    let home = home.path();
    let install = [
        "install",
        "--extension-id",
        ID,
        "--relay",
        "ws://127.0.0.1:1",
        "--token",
        "t",
    ];
    assert!(host(home, &install).status.success());
    let stranger = "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa/";
    let out = host(home, &[stranger]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stdout.is_empty(),
        "stdout is the browser's pipe: nothing else goes there"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("may not start this host"));
}
