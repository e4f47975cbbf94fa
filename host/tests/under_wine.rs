//! The Windows host under Wine: `tether-host.exe` (x86_64-pc-windows-gnu) as a person's Chrome
//! on Windows runs it. scripts/cross-check.sh builds the .exe and runs this with
//! `TETHER_WINE_HOST` naming it (and `TETHER_WINE` the wine command, `wine` unless set); it is
//! ignored in the ordinary suite, which has no Windows binary.
//!
//! What runs for real here: install's registry keys and files with access lists naming the user
//! alone (Wine's advapi32), extension mode's frames on stdin and stdout, uninstall.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{json, Value};

const ID: &str = "eccdmegnppddiconemhgfcncpfpmdggp";
const KEY: &str = r"HKCU\Software\Google\Chrome\NativeMessagingHosts\dev.tether.host";
/// Wine's first start in a fresh prefix sets the prefix up, which takes a while.
const PATIENCE: Duration = Duration::from_secs(120);

fn exe() -> PathBuf {
    let exe = std::env::var_os("TETHER_WINE_HOST").expect("TETHER_WINE_HOST names tether-host.exe");
    std::fs::canonicalize(exe).expect("TETHER_WINE_HOST exists")
}

/// `wine <args>` in `prefix`, its own Windows, with nothing of this machine's config leaking in.
fn wine(prefix: &Path) -> Command {
    let mut command = Command::new(std::env::var_os("TETHER_WINE").unwrap_or_else(|| "wine".into()));
    command
        .env("WINEPREFIX", prefix)
        .env("WINEARCH", "win64")
        .env("WINEDEBUG", "-all")
        // No Mono or Gecko installers on the prefix's first start.
        .env("WINEDLLOVERRIDES", "mscoree,mshtml=")
        .env_remove("XDG_CONFIG_HOME")
        .env_remove("DISPLAY")
        .stdin(Stdio::null());
    command
}

fn run(prefix: &Path, args: &[&str]) -> std::process::Output {
    let output = wine(prefix).args(args).output().expect("wine runs");
    eprintln!(
        "wine {args:?}: {}\n{}{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn frame(message: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(message).unwrap();
    let mut bytes = (body.len() as u32).to_ne_bytes().to_vec();
    bytes.extend(body);
    bytes
}

/// The frames the host writes, read on a thread of their own until its stdout ends.
fn frames(mut stdout: impl Read + Send + 'static) -> mpsc::Receiver<Value> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || loop {
        let mut length = [0u8; 4];
        if stdout.read_exact(&mut length).is_err() {
            return;
        }
        let mut body = vec![0u8; u32::from_ne_bytes(length) as usize];
        if stdout.read_exact(&mut body).is_err() {
            return;
        }
        let Ok(message) = serde_json::from_slice(&body) else {
            return;
        };
        if tx.send(message).is_err() {
            return;
        }
    });
    rx
}

#[test]
#[ignore = "needs Wine and tether-host.exe: scripts/cross-check.sh runs it"]
fn the_windows_host_installs_speaks_native_messaging_and_uninstalls() {
    let prefix = tempfile::tempdir().unwrap();
    let prefix = prefix.path();
    let exe = exe();
    let exe = exe.to_str().unwrap();

    let version = run(prefix, &[exe, "--version"]);
    assert!(version.status.success());
    assert!(String::from_utf8_lossy(&version.stdout).starts_with("tether-host "));

    let install = run(
        prefix,
        &[
            exe,
            "install",
            "--extension-id",
            ID,
            "--relay",
            "ws://127.0.0.1:1",
            "--token",
            "t0k",
        ],
    );
    assert!(install.status.success());
    let said = String::from_utf8_lossy(&install.stdout).into_owned();
    assert!(
        said.contains(r"set HKEY_CURRENT_USER\Software\Google\Chrome\NativeMessagingHosts\dev.tether.host"),
        "{said}"
    );
    assert!(
        said.contains(r"AppData\Local\Tether\dev.tether.host.json"),
        "{said}"
    );
    let key = run(prefix, &["reg", "query", KEY, "/ve"]);
    let value = String::from_utf8_lossy(&key.stdout).into_owned();
    assert!(
        key.status.success() && value.contains(r"Tether\dev.tether.host.json"),
        "{value}"
    );

    // Chrome starts the host with the extension's origin; hello, then a ping it must answer.
    let mut host = wine(prefix)
        .args([exe, &format!("chrome-extension://{ID}/")])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let replies = frames(host.stdout.take().unwrap());
    let mut stdin = host.stdin.take().unwrap();
    stdin
        .write_all(&frame(
            &json!({"type": "hello", "extensionVersion": "0", "userAgent": "Chrome/148.0.0.0"}),
        ))
        .unwrap();
    stdin.write_all(&frame(&json!({"type": "ping"}))).unwrap();
    stdin.flush().unwrap();
    let pong =
        std::iter::from_fn(|| replies.recv_timeout(PATIENCE).ok()).find(|message| message["type"] == "pong");
    assert!(pong.is_some(), "the host answered the ping");
    // Chrome closing the port ends the host.
    drop(stdin);
    let (done, ended) = mpsc::channel();
    std::thread::spawn(move || done.send(host.wait()));
    let status = ended
        .recv_timeout(PATIENCE)
        .expect("the host ends when its port closes");
    assert!(status.unwrap().success());

    let uninstall = run(prefix, &[exe, "uninstall"]);
    assert!(uninstall.status.success());
    assert!(
        !run(prefix, &["reg", "query", KEY, "/ve"]).status.success(),
        "the key is gone"
    );
    // Wine's server outlives its last program by a moment: ended with the prefix, not after it.
    let _ = Command::new("wineserver")
        .arg("-k")
        .env("WINEPREFIX", prefix)
        .status();
}
